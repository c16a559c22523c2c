//! A recorded observation stream: one [`Frame`] per step (what was observed, what each client showed
//! after it, the environment's state), enough to judge every property without the system that made
//! it. The store's truth is rebuilt from the writes and compactions the frames report, so a client
//! library under test needs to report only what it did and showed.

use std::collections::BTreeMap;

use listwatch_model::{Cache, ClientId, ClientView, Key, Object, Observed, Rev, Uid};

use crate::monitor::Monitor;
use crate::observations::{Environment, Observations, Truth};
use crate::property::{Property, Violation};

/// What one client showed after a step.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Shown {
    pub resource_version: Rev,
    pub synced: bool,
    pub between_events: bool,
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "std::ops::Not::not"))]
    pub unread: bool,
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "std::ops::Not::not"))]
    pub readiness_pending: bool,
    pub watch_at_rest: bool,
    pub connected: bool,
    pub scheduled: bool,
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "std::ops::Not::not"))]
    pub queued: bool,
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "std::ops::Not::not"))]
    pub handlers_behind: bool,
    /// How many handlers it notifies (1 unless it says more).
    #[cfg_attr(feature = "serde", serde(default = "one", skip_serializing_if = "is_one"))]
    pub handlers: u8,
    pub cache: Vec<Object>,
}

#[cfg(feature = "serde")]
fn one() -> u8 {
    1
}

#[cfg(feature = "serde")]
fn is_one(n: &u8) -> bool {
    *n == 1
}

impl Shown {
    pub fn of(view: &ClientView<'_>) -> Shown {
        Shown {
            resource_version: view.resource_version,
            synced: view.synced,
            between_events: view.between_events,
            unread: view.unread,
            readiness_pending: view.readiness_pending,
            watch_at_rest: view.watch_at_rest,
            connected: view.connected,
            scheduled: view.scheduled,
            queued: view.queued,
            handlers_behind: view.handlers_behind,
            handlers: view.handlers,
            cache: view.cache.objects().copied().collect(),
        }
    }
}

/// One step: the first frame is the start (the first requests), each later one a step.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Frame {
    pub seen: Vec<Observed>,
    pub environment: Environment,
    pub clients: Vec<Shown>,
    /// The properties the clients cannot be judged by ([`Observations::not_judged`]), by name: the
    /// first frame states them for the whole stream, as a client's are its own for a whole run.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty", with = "property_names")
    )]
    pub not_judged: Vec<Property>,
}

impl Frame {
    /// The frame of a step of anything observable.
    pub fn of(obs: &impl Observations, seen: Vec<Observed>) -> Frame {
        let clients = obs.client_ids().map(|c| Shown::of(&obs.client(c))).collect();
        let not_judged = obs.not_judged().into_iter().map(|(p, _)| p).collect();
        Frame { seen, environment: obs.environment(), clients, not_judged }
    }
}

/// Properties written by name, as `check` and `show` spell them.
#[cfg(feature = "serde")]
mod property_names {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::property::Property;

    pub fn serialize<S: Serializer>(ps: &[Property], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(ps.iter().map(|p| p.name()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Property>, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        names
            .iter()
            .map(|n| Property::parse(n).ok_or_else(|| D::Error::custom(format!("no property is named {n}"))))
            .collect()
    }
}

/// The store's truth rebuilt from the writes observed: E1's revisions (several writes at one for E8's
/// transactions), E2's incarnations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    rev: Rev,
    compacted: Rev,
    /// Writes to the watched resource: revision, key, the new value (`None`: a delete).
    writes: Vec<(Rev, Key, Option<Object>)>,
    live: BTreeMap<Key, Object>,
}

impl History {
    /// Take one observation; everything but writes and compactions is ignored.
    pub fn observe(&mut self, o: &Observed) {
        match *o {
            Observed::Wrote { rev, key, deleted } => {
                let value = (!deleted).then(|| match self.live.get(&key) {
                    Some(old) => Object { rv: rev, version: old.version + 1, ..*old },
                    None => Object { key, uid: Uid(rev), rv: rev, version: 1 },
                });
                match value {
                    Some(v) => self.live.insert(key, v),
                    None => self.live.remove(&key),
                };
                self.writes.push((rev, key, value));
                self.rev = self.rev.max(rev);
            }
            Observed::WroteOther { rev } => self.rev = self.rev.max(rev),
            Observed::Compacted { rev } => self.compacted = self.compacted.max(rev),
            _ => {}
        }
    }
}

impl Truth for History {
    fn rev(&self) -> Rev {
        self.rev
    }

    fn compacted(&self) -> Rev {
        self.compacted
    }

    fn state_at(&self, rev: Rev) -> litemap::LiteMap<Key, Object> {
        let mut state = litemap::LiteMap::new();
        for (_, key, value) in self.writes.iter().take_while(|(r, ..)| *r <= rev) {
            match value {
                Some(v) => state.insert(*key, *v),
                None => state.remove(key),
            };
        }
        state
    }

    fn next_write_after(&self, rev: Rev) -> Option<Rev> {
        self.writes.iter().map(|(r, ..)| *r).find(|r| *r > rev)
    }

    fn keys_written_at(&self, rev: Rev) -> Vec<Key> {
        self.writes.iter().filter(|(r, ..)| *r == rev).map(|(_, k, _)| *k).collect()
    }
}

/// A frame with the truth so far: what the properties read.
#[derive(Debug)]
pub struct Recorded<'a> {
    history: &'a History,
    frame: &'a Frame,
    caches: Vec<Cache>,
    /// What the first frame said cannot be judged.
    not_judged: &'a [Property],
}

impl Observations for Recorded<'_> {
    type Truth = History;

    fn clients(&self) -> u8 {
        self.frame.clients.len() as u8
    }

    fn client(&self, client: ClientId) -> ClientView<'_> {
        let i = usize::from(client.0);
        let s = &self.frame.clients[i];
        ClientView {
            resource_version: s.resource_version,
            synced: s.synced,
            between_events: s.between_events,
            unread: s.unread,
            readiness_pending: s.readiness_pending,
            watch_at_rest: s.watch_at_rest,
            connected: s.connected,
            scheduled: s.scheduled,
            queued: s.queued,
            handlers_behind: s.handlers_behind,
            handlers: s.handlers,
            cache: &self.caches[i],
        }
    }

    fn truth(&self) -> &History {
        self.history
    }

    fn environment(&self) -> Environment {
        self.frame.environment
    }

    fn not_judged(&self) -> Vec<(Property, &'static str)> {
        self.not_judged
            .iter()
            .map(|p| (*p, "the recorded run says its client cannot be judged by it"))
            .collect()
    }
}

/// Judge a recorded stream: the first violation and the frame it broke in (0: the start).
pub fn judge_frames(frames: &[Frame]) -> Option<(usize, Violation)> {
    let mut history = History::default();
    let mut monitor: Option<Monitor> = None;
    let not_judged = frames.first().map_or(&[][..], |f| &f.not_judged[..]);
    for (i, frame) in frames.iter().enumerate() {
        for o in &frame.seen {
            history.observe(o);
        }
        let caches = frame.clients.iter().map(|s| s.cache.iter().copied().collect()).collect();
        let recorded = Recorded { history: &history, frame, caches, not_judged };
        match &mut monitor {
            None => monitor = Some(Monitor::new(&recorded, &frame.seen)),
            Some(m) => m.observe(&recorded, &frame.seen),
        }
        let m = monitor.as_ref().expect("set above");
        if let Some(v) = crate::judge::first_violation(&recorded, m) {
            return Some((i, v));
        }
    }
    None
}
