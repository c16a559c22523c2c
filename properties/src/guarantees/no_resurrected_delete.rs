//! `no-resurrected-delete`: an incarnation the cache has seen deleted (its handlers were told), or
//! that was deleted at or before the RV the client claims, never reappears in its cache (seed 000,
//! kubernetes#58545; seed 001; kubernetes#59848).

use listwatch_model::{ClientId, Notification, Observed, Uid};
use litemap::LiteMap;

use crate::guarantees::{Found, Guarantee};
use crate::history::History;
use crate::observations::{Observations, Truth};

#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    /// The incarnations each handler of each client was told are deleted (by handler: each is told
    /// everything on its own, in its own order against the others). One sorted vector for all.
    pub deleted: LiteMap<(ClientId, u8, Uid), ()>,
}
listwatch_model::clone_by_field!(State { deleted: map });

impl Guarantee for State {
    const NAME: &'static str = "no-resurrected-delete";
    const GUARANTEE: &'static str =
        "an object incarnation the cache has seen deleted, or that was deleted at or before the RV \
                 the reflector claims, never reappears in the cache";
    const WITNESS: &'static str = "a delete is observed after a compaction";

    fn observe(&mut self, _obs: &impl Observations, seen: &Observed) -> Option<Found> {
        let Observed::Notified { client, handler, notification } = seen else { return None };
        match notification {
            Notification::Delete(o) | Notification::DeletedFinalStateUnknown(o) => {
                self.deleted.insert((*client, *handler, o.uid), ());
                None
            }
            Notification::Add(o) | Notification::Update { new: o, .. }
                if self.deleted.contains_key(&(*client, *handler, o.uid)) =>
            {
                Some(Found::by(*client, format!("{o} was deleted from the cache and is back")))
            }
            _ => None,
        }
    }

    fn violation(&self, obs: &impl Observations, history: &History) -> Option<Found> {
        // What waits for the consumer (C7) has not reached the cache yet: judged once it has.
        obs.client_ids().filter(|c| !obs.client(*c).queued).find_map(|c| {
            let view = obs.client(c);
            let rv = view.resource_version;
            // E8: an object the open revision deleted may stay until its DELETE arrives.
            let pending = history.pending_keys(obs, c);
            view.cache
                .objects()
                .filter(|o| !pending.contains(&o.key))
                .find(|o| o.uid.0 <= rv && obs.truth().object_at(o.key, rv).map(|t| t.uid) != Some(o.uid))
                .map(|o| Found::by(c, format!("{o} was deleted by RV {rv}")))
        })
    }

    fn witnessed(&self, obs: &impl Observations, _history: &History) -> bool {
        obs.truth().compacted().0 > 0 && !self.deleted.is_empty()
    }
}
