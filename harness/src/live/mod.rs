//! The live layer: the model's reflector driven by tokio over real concurrency, a shared cache many
//! threads read, readiness, and the multi-cluster client manager. No protocol decisions live here.

pub mod manager;
pub mod object_cache;
pub mod object_key;
pub mod shared_cache;
pub mod sync;

#[cfg(not(loom))]
pub mod driver;
#[cfg(not(loom))]
pub mod inprocess;
#[cfg(feature = "k8s-openapi")]
pub mod k8s;
#[cfg(not(loom))]
pub mod transport;
