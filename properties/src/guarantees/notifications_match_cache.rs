//! `notifications-match-cache` (C7): the handlers' notifications add up to the cache. Folding them
//! (add, update, delete, delete with final state unknown) gives the cache after every step, and each
//! names the object the handlers last saw. A client with several handlers (client-go's informer: each
//! has its own queue) is judged handler by handler. While a handler is held with notifications
//! waiting for it (`ClientView::handlers_behind`: a slow handler's backlog, the cache up to date), the
//! fold is compared with the cache only once it has caught up; each notification is still judged
//! against what the handler was last told as it comes.

use listwatch_model::{ClientId, Key, Notification, Object, Observed};
use litemap::LiteMap;

use crate::guarantees::{Found, Guarantee};
use crate::history::History;
use crate::observations::Observations;

/// One handler of one client.
type Handler = (ClientId, u8);

/// What the handlers were told, all in two sorted vectors keyed by client and handler: empty, and no
/// allocation, until a handler is told something; a state's clone copies each in one piece.
#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    /// The cache as each handler was told it, by handler and key.
    pub told: LiteMap<(ClientId, u8, Key), Object>,
    /// The handlers a relist notified of a delete the watch never delivered.
    pub relist_deleted: LiteMap<Handler, ()>,
}
listwatch_model::clone_by_field!(State { told: map, relist_deleted: map });

impl State {
    /// What `handler` was told, in key order.
    fn told(&self, (client, handler): Handler) -> &[((ClientId, u8, Key), Object)] {
        let all = self.told.as_slice();
        let from = all.partition_point(|((c, h, _), _)| (*c, *h) < (client, handler));
        let len = all[from..].partition_point(|((c, h, _), _)| (*c, *h) == (client, handler));
        &all[from..from + len]
    }

    /// How many handlers of `client` are judged: those it shows, and any beyond them that was told
    /// something.
    fn handlers(&self, client: ClientId, shown: u8) -> u8 {
        let told = self.told.keys().filter(|(c, _, _)| *c == client).map(|(_, h, _)| *h);
        let relisted = self.relist_deleted.keys().filter(|(c, _)| *c == client).map(|(_, h)| *h);
        told.chain(relisted).map(|h| h.saturating_add(1)).fold(shown.max(1), u8::max)
    }
}

impl Guarantee for State {
    const NAME: &'static str = "notifications-match-cache";
    const GUARANTEE: &'static str =
        "folding the handlers' notifications (add, update, delete, delete with final state \
        unknown) gives the cache after every step, and each names the object the handlers last saw";
    const WITNESS: &'static str = "a relist notifies the delete of an object it no longer lists";

    fn observe(&mut self, _obs: &impl Observations, seen: &Observed) -> Option<Found> {
        let Observed::Notified { client, handler, notification } = seen else { return None };
        let (client, handler) = (*client, *handler);
        let held = |o: &Object| self.told.get(&(client, handler, o.key)).copied();
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
                self.told.insert((client, handler, o.key), *o);
            }
            Notification::Delete(o) | Notification::DeletedFinalStateUnknown(o) => {
                self.told.remove(&(client, handler, o.key));
            }
        }
        if matches!(notification, Notification::DeletedFinalStateUnknown(_)) {
            self.relist_deleted.insert((client, handler), ());
        }
        let handler = match handler {
            0 => String::new(),
            h => format!("handler #{h}: "),
        };
        wrong.map(|detail| Found::by(client, format!("{handler}{detail}")))
    }

    fn after_step(&mut self, obs: &impl Observations) -> Option<Found> {
        obs.client_ids().find_map(|c| {
            let view = obs.client(c);
            if view.handlers_behind {
                return None;
            }
            (0..self.handlers(c, view.handlers)).find_map(|h| {
                let told = self.told((c, h));
                let at = |o: &Object| told.binary_search_by_key(&o.key, |((_, _, k), _)| *k).ok();
                let differs = told.len() != view.cache.len()
                    || view.cache.objects().any(|o| at(o).map(|i| &told[i].1) != Some(o));
                differs.then(|| {
                    let shown: Vec<String> = told.iter().map(|(_, o)| o.to_string()).collect();
                    let who =
                        if h == 0 { "the handlers were".to_string() } else { format!("handler #{h} was") };
                    Found::by(c, format!("{who} told [{}], the cache differs", shown.join(", ")))
                })
            })
        })
    }

    fn witnessed(&self, _obs: &impl Observations, _history: &History) -> bool {
        !self.relist_deleted.is_empty()
    }
}
