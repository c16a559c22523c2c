//! Reflectors under listwatch: kube-runtime's watcher and reflector store, unmodified, and any reflector
//! that talks through a `kube::Client`, as clients under test of the model's etcd and API servers. The
//! model decides the protocol; this crate only carries it over Kubernetes' HTTP/JSON wire (`listwatch_wire`,
//! [`exchange`]), runs the reflector deterministically ([`client`]) and reads what it shows ([`show`]).

pub mod client;
pub mod clients;
pub mod config;
pub mod exchange;
pub mod kube_runtime;
pub mod show;
pub mod under_test;

pub use client::Harnessed;
pub use clients::Kube;
pub use config::KubeConfig;
pub use kube_runtime::KubeRuntime;
pub use show::Show;
pub use under_test::UnderTest;

/// The crates a reflector under test is written against, at the versions this crate runs.
pub mod reexports {
    pub use futures;
    pub use k8s_openapi;
    pub use kube;
}
