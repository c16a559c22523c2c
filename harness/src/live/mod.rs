//! The live layer: the model's reflector driven by tokio over real concurrency, a shared cache many
//! threads read, readiness, and the multi-cluster client manager. No protocol decisions live here.

pub mod manager;
pub mod shared_cache;
pub mod sync;

#[cfg(not(loom))]
pub mod driver;
#[cfg(not(loom))]
pub mod inprocess;
#[cfg(not(loom))]
pub mod transport;
