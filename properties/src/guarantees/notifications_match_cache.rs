//! `notifications-match-cache` (C7): the handlers' notifications add up to the cache. Folding them
//! (add, update, delete, delete with final state unknown) gives the cache after every step, and each
//! names the object the handlers last saw. A client with several handlers (client-go's informer: each
//! has its own queue) is judged handler by handler. While a handler is held with notifications
//! waiting for it (`ClientView::handlers_behind`: a slow handler's backlog, the cache up to date), the
//! fold is compared with the cache only once it has caught up; each notification is still judged
//! against what the handler was last told as it comes.

use listwatch_model::{Key, Notification, Object, Observed};
use litemap::LiteMap;

use crate::guarantees::{per_client, Found, Guarantee};
use crate::history::History;
use crate::observations::Observations;

/// What one handler of a client was told.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Told {
    /// The cache as the handlers were told it, key by key.
    pub objects: LiteMap<Key, Object>,
    /// A relist has notified a delete the watch never delivered.
    pub relist_deleted: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    /// Per client, per handler.
    pub clients: Vec<Vec<Told>>,
}

impl State {
    /// One entry per client and per handler it shows.
    fn size(&mut self, obs: &impl Observations) {
        per_client(&mut self.clients, obs);
        for c in obs.client_ids() {
            let handlers = usize::from(obs.client(c).handlers.max(1));
            let told = &mut self.clients[usize::from(c.0)];
            if told.len() < handlers {
                told.resize_with(handlers, Told::default);
            }
        }
    }
}

impl Guarantee for State {
    const NAME: &'static str = "notifications-match-cache";
    const GUARANTEE: &'static str =
        "folding the handlers' notifications (add, update, delete, delete with final state \
        unknown) gives the cache after every step, and each names the object the handlers last saw";
    const WITNESS: &'static str = "a relist notifies the delete of an object it no longer lists";

    fn observe(&mut self, obs: &impl Observations, seen: &Observed) -> Option<Found> {
        self.size(obs);
        let Observed::Notified { client, handler, notification } = seen else { return None };
        let handlers = &mut self.clients[usize::from(client.0)];
        if handlers.len() <= usize::from(*handler) {
            handlers.resize_with(usize::from(*handler) + 1, Told::default);
        }
        let told = &mut handlers[usize::from(*handler)];
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
        let handler = match handler {
            0 => String::new(),
            h => format!("handler #{h}: "),
        };
        wrong.map(|detail| Found::by(*client, format!("{handler}{detail}")))
    }

    fn after_step(&mut self, obs: &impl Observations) -> Option<Found> {
        self.size(obs);
        obs.client_ids().find_map(|c| {
            let view = obs.client(c);
            if view.handlers_behind {
                return None;
            }
            self.clients[usize::from(c.0)].iter().enumerate().find_map(|(h, told)| {
                let told = &told.objects;
                let differs = told.len() != view.cache.len()
                    || view.cache.objects().any(|o| told.get(&o.key) != Some(o));
                differs.then(|| {
                    let shown: Vec<String> = told.values().map(|o| o.to_string()).collect();
                    let who =
                        if h == 0 { "the handlers were".to_string() } else { format!("handler #{h} was") };
                    Found::by(c, format!("{who} told [{}], the cache differs", shown.join(", ")))
                })
            })
        })
    }

    fn witnessed(&self, _obs: &impl Observations, _history: &History) -> bool {
        self.clients.iter().flatten().any(|t| t.relist_deleted)
    }
}
