//! listwatch's model: a pure, deterministic state machine of the Kubernetes list/watch protocol —
//! etcd's MVCC store, the API server with its watch cache, the client-go reflector with its informer
//! cache, and a multi-cluster client manager — with every known bug as a switch ([`Flaw`]).
//!
//! No IO, clock, threads, randomness or async live here. Time is a duration on an armed timer; every
//! choice (which step next, which server answers, which fault) is an [`Action`] that a driver picks.
//! Every driver (the exhaustive checker, property tests, the simulator, the live async layer, the
//! benchmarks) steps this same code.
//!
//! Rule ids in comments (E1, A6, C5, ...) refer to the project's SEMANTICS reference.

pub mod action;
pub mod api;
pub mod apiserver_release;
pub mod cache;
pub mod client;
pub mod clone;
pub mod config;
pub mod etcd;
pub mod flaw;
pub mod guard;
pub mod heartbeat;
pub mod manager;
pub mod network;
pub mod observe;
pub mod reflector;
pub mod server;
pub mod store;
pub mod system;
pub mod types;
pub mod watch_cache;

pub use action::{Action, Fault};
pub use api::{ApiError, Continue, ListResponse, ListRv, Message, Request, WatchEnd, WatchEvent, WatchFrom};
pub use apiserver_release::ApiServerRelease;
pub use cache::{Cache, CacheOp, Notification};
pub use client::{Client, Clients, Effect, Input, ModelClient, ModelReflector};
pub use config::{Config, FaultKind, FaultKinds, ManagerConfig, ProgressNotify};
pub use etcd::EtcdRelease;
pub use flaw::{Component, Flaw, Flaws, UnknownFlaw};
pub use observe::{ClientView, Connection, Observed};
pub use reflector::{ListMode, Next, Output, Phase, Reflector, ReflectorConfig, Timer};
pub use store::{Store, TombstonePolicy};
pub use system::{NotEnabled, System};
pub use types::{ClientId, Key, Millis, Object, Rev, ServerId, Uid};
