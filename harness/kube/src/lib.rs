//! kube-runtime under listwatch: its watcher and reflector store, unmodified, as a client under test of
//! the model's etcd and API servers. The model decides the protocol; this crate only carries it over
//! Kubernetes' HTTP/JSON wire ([`wire`], [`exchange`]) and runs kube-runtime deterministically
//! ([`client`]).

pub mod client;
pub mod config;
pub mod exchange;
pub mod wire;

pub use client::KubeRuntime;
pub use config::KubeConfig;
