//! `notifications-match-cache` (C7): the handlers' notifications add up to the cache. Folding them
//! (add, update, delete, delete with final state unknown) gives the cache after every step, and each
//! names the object the handlers last saw.

use listwatch_model::{Key, Notification, Object, Observed};
use litemap::LiteMap;

use crate::guarantees::{per_client, Found, Guarantee};
use crate::history::History;
use crate::observations::Observations;

/// What the handlers of one client were told.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Told {
    /// The cache as the handlers were told it, key by key.
    pub objects: LiteMap<Key, Object>,
    /// A relist has notified a delete the watch never delivered.
    pub relist_deleted: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    pub clients: Vec<Told>,
}

impl Guarantee for State {
    const NAME: &'static str = "notifications-match-cache";
    const GUARANTEE: &'static str =
        "folding the handlers' notifications (add, update, delete, delete with final state \
        unknown) gives the cache after every step, and each names the object the handlers last saw";
    const WITNESS: &'static str = "a relist notifies the delete of an object it no longer lists";

    fn observe(&mut self, obs: &impl Observations, seen: &Observed) -> Option<Found> {
        per_client(&mut self.clients, obs);
        let Observed::Notified { client, notification } = seen else { return None };
        let told = &mut self.clients[usize::from(client.0)];
        let held = |o: &Object| told.objects.get(&o.key).copied();
        let wrong = match notification {
            Notification::Add(o) => held(o).map(|h| format!("add {o} while the handlers hold {h}")),
            Notification::Update { old, new } => (held(new) != Some(*old)).then(|| {
                let h = held(new).map_or("nothing".to_string(), |h| h.to_string());
                format!("update {old} -> {new} while the handlers hold {h}")
            }),
            Notification::Delete(o) | Notification::DeletedFinalStateUnknown(o) => match held(o) {
                Some(h) if h.uid == o.uid => None,
                Some(h) => Some(format!("delete {o} while the handlers hold {h}")),
                None => Some(format!("delete {o} of an object the handlers never got")),
            },
        };
        match notification {
            Notification::Add(o) | Notification::Update { new: o, .. } => {
                told.objects.insert(o.key, *o);
            }
            Notification::Delete(o) | Notification::DeletedFinalStateUnknown(o) => {
                told.objects.remove(&o.key);
            }
        }
        told.relist_deleted |= matches!(notification, Notification::DeletedFinalStateUnknown(_));
        wrong.map(|detail| Found::by(*client, detail))
    }

    fn after_step(&mut self, obs: &impl Observations) -> Option<Found> {
        per_client(&mut self.clients, obs);
        obs.client_ids().find_map(|c| {
            let view = obs.client(c);
            let told = &self.clients[usize::from(c.0)].objects;
            let differs =
                told.len() != view.cache.len() || view.cache.objects().any(|o| told.get(&o.key) != Some(o));
            differs.then(|| {
                let shown: Vec<String> = told.values().map(|o| o.to_string()).collect();
                Found::by(c, format!("the handlers were told [{}], the cache differs", shown.join(", ")))
            })
        })
    }

    fn witnessed(&self, _obs: &impl Observations, _history: &History) -> bool {
        self.clients.iter().any(|t| t.relist_deleted)
    }
}
