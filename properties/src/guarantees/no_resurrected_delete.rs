//! `no-resurrected-delete`: an incarnation the cache has seen deleted (its handlers were told), or
//! that was deleted at or before the RV the client claims, never reappears in its cache (seed 000,
//! kubernetes#58545; seed 001; kubernetes#59848).

use listwatch_model::{Notification, Observed, Uid};
use litemap::LiteMap;

use crate::guarantees::{per_client, Found, Guarantee};
use crate::history::History;
use crate::observations::{Observations, Truth};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    /// Per client, the incarnations each of its handlers was told are deleted (by handler: each is
    /// told everything on its own, in its own order against the others).
    pub deleted: Vec<LiteMap<(u8, Uid), ()>>,
}

impl Guarantee for State {
    const NAME: &'static str = "no-resurrected-delete";
    const GUARANTEE: &'static str =
        "an object incarnation the cache has seen deleted, or that was deleted at or before the RV \
                 the reflector claims, never reappears in the cache";
    const WITNESS: &'static str = "a delete is observed after a compaction";

    fn observe(&mut self, obs: &impl Observations, seen: &Observed) -> Option<Found> {
        per_client(&mut self.deleted, obs);
        let Observed::Notified { client, handler, notification } = seen else { return None };
        let deleted = &mut self.deleted[usize::from(client.0)];
        match notification {
            Notification::Delete(o) | Notification::DeletedFinalStateUnknown(o) => {
                deleted.insert((*handler, o.uid), ());
                None
            }
            Notification::Add(o) | Notification::Update { new: o, .. }
                if deleted.contains_key(&(*handler, o.uid)) =>
            {
                Some(Found::by(*client, format!("{o} was deleted from the cache and is back")))
            }
            _ => None,
        }
    }

    fn after_step(&mut self, obs: &impl Observations) -> Option<Found> {
        per_client(&mut self.deleted, obs);
        None
    }

    fn violation(&self, obs: &impl Observations, history: &History) -> Option<Found> {
        // What waits for the consumer (C7) has not reached the cache yet: judged once it has.
        obs.client_ids().filter(|c| !obs.client(*c).queued).find_map(|c| {
            let view = obs.client(c);
            let rv = view.resource_version;
            let truth = obs.truth().state_at(rv);
            // E8: an object the open revision deleted may stay until its DELETE arrives.
            let pending = history.pending_keys(obs, c);
            view.cache
                .objects()
                .filter(|o| !pending.contains(&o.key))
                .find(|o| o.uid.0 <= rv && truth.get(&o.key).map(|t| t.uid) != Some(o.uid))
                .map(|o| Found::by(c, format!("{o} was deleted by RV {rv}")))
        })
    }

    fn witnessed(&self, obs: &impl Observations, _history: &History) -> bool {
        obs.truth().compacted().0 > 0 && self.deleted.iter().any(|d| !d.is_empty())
    }
}
