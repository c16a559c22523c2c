//! Symmetry of API servers, for the checker's reduction: when every server has the same settings, two
//! states that differ only in the servers' names behave alike, step for renamed step, and no property
//! reads a server's name (properties judge what clients show and the store's truth). The checker then
//! keeps one state of each such class: the one whose servers are in [`System::canonical_server_order`].
//!
//! This is a simplification of the checker, not of the model: every state it keeps is a state of the
//! model, and a counterexample is rebuilt as real steps from the initial state
//! ([`Action::rename_servers`]). `harness/tests/symmetry.rs` shows it changes no verdict.

use std::hash::{BuildHasher, Hasher};

use super::System;
use crate::action::{Action, Fault};
use crate::client::Client;
use crate::types::ServerId;

impl<C: Client, M> System<C, M> {
    /// Whether renaming the API servers maps every behaviour to a behaviour: more than one server,
    /// and E7's progress notifications on all of them or on none.
    pub fn servers_symmetric(&self) -> bool {
        self.servers.len() > 1 && self.config.progress_notify.uniform(self.servers.len() as u8).is_some()
    }

    /// The servers in canonical order: `order[new] = old`. Servers are sorted by a hash of all they
    /// hold apart from their name (their cache, watches, waiting requests, etcd watch, the clients
    /// routed or attached to them); servers that hash alike keep their order.
    pub fn canonical_server_order(&self) -> Vec<ServerId> {
        let mut keyed: Vec<(u64, ServerId)> = self
            .servers
            .iter()
            .map(|s| {
                let mut h = foldhash::fast::FixedState::with_seed(0).build_hasher();
                s.hash_content(&mut h);
                self.store.hash_watch(s.watcher_id(), &mut h);
                self.network.hash_links(s.id(), &mut h);
                (h.finish(), s.id())
            })
            .collect();
        keyed.sort_by_key(|(key, _)| *key);
        keyed.into_iter().map(|(_, id)| id).collect()
    }

    /// Rename the servers: the one named `order[i]` becomes server `i`, with its etcd watch, and every
    /// connection and attachment to it.
    pub fn permute_servers(&mut self, order: &[ServerId]) {
        debug_assert_eq!(order.len(), self.servers.len());
        let mut new_name = vec![ServerId(0); order.len()];
        for (new, old) in order.iter().enumerate() {
            new_name[usize::from(old.0)] = ServerId(new as u8);
        }
        let rename = |s: ServerId| new_name.get(usize::from(s.0)).copied().unwrap_or(s);
        let mut old: Vec<Option<_>> = std::mem::take(&mut self.servers).into_iter().map(Some).collect();
        self.servers = order
            .iter()
            .filter_map(|id| old[usize::from(id.0)].take().map(|s| s.renamed(rename(*id))))
            .collect();
        // An API server's etcd watch has its server's number (`ApiServer::watcher`).
        self.store.rename_watchers(|w| rename(ServerId(w)).0);
        self.network.rename_servers(rename);
    }

    /// Put the servers in canonical order; whether anything moved.
    pub fn canonicalize_servers(&mut self) -> Option<Vec<ServerId>> {
        let order = self.canonical_server_order();
        if order.iter().enumerate().all(|(i, s)| usize::from(s.0) == i) {
            return None;
        }
        self.permute_servers(&order);
        Some(order)
    }
}

impl Action {
    /// The same step with every server named by `rename`.
    pub fn rename_servers(self, rename: impl Fn(ServerId) -> ServerId) -> Action {
        match self {
            Action::Ingest(s) => Action::Ingest(rename(s)),
            Action::ProgressNotify(s) => Action::ProgressNotify(rename(s)),
            Action::CacheReady(s) => Action::CacheReady(rename(s)),
            Action::Route(c, s) => Action::Route(c, rename(s)),
            Action::Fault(Fault::EvictCache(s)) => Action::Fault(Fault::EvictCache(rename(s))),
            Action::Fault(Fault::RelistCache(s)) => Action::Fault(Fault::RelistCache(rename(s))),
            Action::Fault(Fault::RestartServer(s)) => Action::Fault(Fault::RestartServer(rename(s))),
            other => other,
        }
    }
}
