//! The live layer: the model's reflector driven by tokio over real concurrency, a shared cache many
//! threads read, readiness, and the multi-cluster client manager. No protocol decisions live here.
//! The concurrent core (the shared cache, readiness, the manager and their primitives) is the crate
//! `listwatch-shared-cache`, which the loom models check; it is re-exported here.

pub use listwatch_shared_cache::{manager, shared_cache, sync};

pub mod driver;
pub mod inprocess;
#[cfg(feature = "k8s-openapi")]
pub mod k8s;
pub mod object_cache;
pub mod object_key;
pub mod transport;
