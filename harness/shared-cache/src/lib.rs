//! The live layer's concurrent core, which `listwatch_harness::live` re-exports: the cache a program
//! reads while one driver writes it ([`shared_cache`]), readiness, and the multi-cluster client manager
//! ([`manager`]). Every synchronisation primitive comes from [`sync`]: std's, or loom's under
//! `--cfg loom`, where `tests/loom.rs` explores every interleaving of the same code.

pub mod manager;
pub mod shared_cache;
pub mod sync;
