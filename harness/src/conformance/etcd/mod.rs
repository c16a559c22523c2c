//! A real etcd as the store under test: its process (`process`) and the client that runs a sequence on
//! it (`client`).

mod client;
mod process;

pub use client::EtcdStore;
pub use process::EtcdProcess;
