//! What an API server answered to a sequence: per operation its answer, the messages each watch got
//! after it, and the revision the watch cache was at once it had caught up (the barrier after each
//! step); then what the open watches hold at the end.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::sequence::{ApiOp, ApiSequence};
use crate::conformance::Difference;

/// An object as the API server serves it (A1, A6): its key, its incarnation (named by its creation
/// revision, E2), its resourceVersion and how many times it was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Obj {
    pub key: u8,
    pub created: u32,
    pub rv: u32,
    pub version: u32,
}

impl fmt::Display for Obj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "k{}@{} v{} (created {})", self.key, self.rv, self.version, self.created)
    }
}

/// A continue token as far as it can be compared (A13): the RV it pins and the last key served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Token {
    pub rv: u32,
    pub after: u8,
}

/// The answer to one operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "answer")]
pub enum ApiAnswer {
    /// A write took revision `rev`.
    Written {
        rev: u32,
    },
    /// A delete removed `keys` at `rev` (none removed: `rev` is the current revision). `object` is
    /// what a single DELETE answered at the storage layer: the object's last content with the RV its
    /// release stamps on it (A6, [`listwatch_model::ApiServerRelease::deleted_object`]). Over HTTP it
    /// is not compared: the registry answers the object or a `Status` naming it, by resource.
    Deleted {
        rev: u32,
        keys: Vec<u8>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        object: Option<Obj>,
    },
    Compacted {
        rev: u32,
    },
    /// etcd refused the compaction: "compacted" or "future-revision" (E4).
    CompactRefused {
        why: String,
    },
    List {
        rv: u32,
        items: Vec<Obj>,
        cont: Option<Token>,
    },
    /// An HTTP error status (400, 410, 429, 500, 504).
    Failed {
        code: u16,
    },
    WatchOpened,
    Stopped,
    /// A continue without a token, or a stop of a watch that is not open: nothing is sent.
    Nothing,
}

/// A message on a watch stream (A3–A8, A12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "msg")]
pub enum ApiMsg {
    Added(Obj),
    Modified(Obj),
    Deleted(Obj),
    /// A12's BOOKMARK annotated `k8s.io/initial-events-end`.
    InitialEventsEnd {
        rv: u32,
    },
    /// A plain bookmark whose RV breaks A8 (lower than an event already sent, or above the revision
    /// etcd had when it came). Bookmarks that keep A8 are not compared: when they come is up to the
    /// server's timers.
    BadBookmark {
        rv: u32,
        after: u32,
    },
    /// A8's heartbeat: a plain bookmark sent when a minute passed ([`super::sequence::ApiOp::Minute`]),
    /// compared there.
    Bookmark {
        rv: u32,
    },
    Error {
        code: u16,
    },
    /// The server closed the stream.
    Closed,
}

impl fmt::Display for ApiMsg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiMsg::Added(o) => write!(f, "ADDED {o}"),
            ApiMsg::Modified(o) => write!(f, "MODIFIED {o}"),
            ApiMsg::Deleted(o) => write!(f, "DELETED {o}"),
            ApiMsg::InitialEventsEnd { rv } => write!(f, "BOOKMARK @{rv} initial-events-end"),
            ApiMsg::BadBookmark { rv, after } => write!(f, "BOOKMARK @{rv} after {after} (breaks A8)"),
            ApiMsg::Bookmark { rv } => write!(f, "BOOKMARK @{rv}"),
            ApiMsg::Error { code } => write!(f, "ERROR {code}"),
            ApiMsg::Closed => write!(f, "closed"),
        }
    }
}

/// One operation's answer, the messages each watch got after it, and the cache's RV after the barrier.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiStep {
    pub answer: Option<ApiAnswer>,
    pub messages: BTreeMap<u8, Vec<ApiMsg>>,
    pub cache_rv: Option<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiTranscript {
    pub steps: Vec<ApiStep>,
    /// Messages that came after the last step, by watch.
    pub end: BTreeMap<u8, Vec<ApiMsg>>,
}

impl ApiTranscript {
    pub fn messages(&self) -> usize {
        let steps: usize = self.steps.iter().map(|s| s.messages.values().map(Vec::len).sum::<usize>()).sum();
        steps + self.end.values().map(Vec::len).sum::<usize>()
    }

    /// What the contract says of [`ApiSequence::timeout_case`], on either side: the timed watch gets
    /// the second write and closes; the watch beside it alone gets the next write; the timed streaming
    /// list gets the three objects, their initial-events-end bookmark, and closes; the last write
    /// reaches the untimed watch only. `Err` says which step is otherwise.
    pub fn holds_timeout_case(&self) -> Result<(), String> {
        let t = self;
        let msgs = |step: usize, id: u8| t.steps.get(step).and_then(|s| s.messages.get(&id)).cloned();
        let msgs = |step, id| msgs(step, id).unwrap_or_default();
        let watched = |step: usize| t.steps.get(step).map(|s| s.messages.keys().copied().collect::<Vec<_>>());
        let timed = matches!(msgs(2, 0)[..], [ApiMsg::Modified(_) | ApiMsg::Added(_), ApiMsg::Closed]);
        let listed = matches!(
            msgs(5, 2)[..],
            [
                ApiMsg::Added(_),
                ApiMsg::Added(_),
                ApiMsg::Added(_),
                ApiMsg::InitialEventsEnd { .. },
                ApiMsg::Closed
            ]
        );
        let wrong = [
            (!timed, "step 2: the timed watch gets the write, then closes"),
            (watched(4) != Some(vec![1]), "step 4: only w1 gets the write"),
            (!listed, "step 5: the timed streaming list gets three objects, their end, then closes"),
            (watched(6) != Some(vec![1]), "step 6: only w1 gets the write"),
        ];
        match wrong.into_iter().find(|(w, _)| *w) {
            Some((_, what)) => Err(format!("{what}: {t:?}")),
            None => Ok(()),
        }
    }
}

fn render(step: Option<&ApiStep>) -> String {
    let Some(step) = step else { return "nothing".into() };
    let mut parts = vec![match &step.answer {
        Some(a) => serde_json::to_string(a).unwrap_or_default(),
        None => "no answer".into(),
    }];
    for (id, msgs) in &step.messages {
        let msgs: Vec<String> = msgs.iter().map(ToString::to_string).collect();
        parts.push(format!("w{id} got [{}]", msgs.join("; ")));
    }
    if let Some(rv) = step.cache_rv {
        parts.push(format!("cache at {rv}"));
    }
    parts.join(", ")
}

/// The rule of the contract a difference at `op` breaks (SEMANTICS A1–A14): by what differs, the
/// answer or the watch messages, and the kind of request.
fn rule(op: &ApiOp, m: Option<&ApiStep>, s: Option<&ApiStep>) -> &'static str {
    let answers = (m.and_then(|m| m.answer.as_ref()), s.and_then(|s| s.answer.as_ref()));
    if answers.0 != answers.1 {
        let failed =
            |a: Option<&ApiAnswer>, code: u16| matches!(a, Some(ApiAnswer::Failed { code: c }) if *c == code);
        if failed(answers.0, 429) || failed(answers.1, 429) {
            return "breaks A14 (429 while the cache initialises)";
        }
        return match op {
            ApiOp::Delete { .. } if same_deletion(answers) => "breaks A6 (the RV of a DELETE's answer)",
            ApiOp::Put { .. } | ApiOp::Delete { .. } | ApiOp::DeleteAll { .. } | ApiOp::Compact { .. } => {
                "breaks A1 (an RV is etcd's revision)"
            }
            // A page whose token agrees differs as any LIST by resourceVersion does.
            ApiOp::List { limit: Some(_), .. } if same_token(answers) => {
                "breaks A2 (LIST by resourceVersion)"
            }
            ApiOp::List { limit: Some(_), .. } | ApiOp::Continue { .. } => "breaks A13 (pagination)",
            ApiOp::List { .. } => "breaks A2 (LIST by resourceVersion)",
            ApiOp::ListNamed { .. } => "breaks A2 (LIST by resourceVersion, one name by field selector)",
            ApiOp::Watch { from: Some(_), .. } => "breaks A3/A4 (WATCH from an RV, too old)",
            ApiOp::Watch { from: None, .. } => "breaks A3 (WATCH from \"0\")",
            ApiOp::WatchList { .. } => "breaks A12 (streaming lists)",
            ApiOp::Stop { .. } | ApiOp::HoldCache | ApiOp::ReleaseCache => "breaks A3 (a watch's life)",
            ApiOp::RelistCache => "breaks A5 (a cache relist closes its watches)",
            ApiOp::Minute => "breaks A8 (heartbeat bookmarks)",
        };
    }
    let messages = (m.map(|m| &m.messages), s.map(|s| &s.messages));
    if messages.0 != messages.1 && matches!(op, ApiOp::RelistCache) {
        return "breaks A5 (a cache relist closes its watches)";
    }
    if messages.0 != messages.1 && matches!(op, ApiOp::Minute) {
        return "breaks A8 (heartbeat bookmarks)";
    }
    let closed = |msgs: Option<&BTreeMap<u8, Vec<ApiMsg>>>| {
        msgs.into_iter().flat_map(BTreeMap::values).flatten().any(|m| *m == ApiMsg::Closed)
    };
    if op.times_out() && closed(messages.0) != closed(messages.1) {
        return "breaks A9 (a watch ends cleanly at its timeoutSeconds)";
    }
    if messages.0 != messages.1 {
        let all = messages.0.into_iter().chain(messages.1).flat_map(BTreeMap::values).flatten();
        return message_rule(all);
    }
    "breaks A2/A5 (the cache's RV after the barrier)"
}

/// Two delete answers that agree but for the object answered.
fn same_deletion(answers: (Option<&ApiAnswer>, Option<&ApiAnswer>)) -> bool {
    match answers {
        (
            Some(ApiAnswer::Deleted { rev: a, keys: x, .. }),
            Some(ApiAnswer::Deleted { rev: b, keys: y, .. }),
        ) => a == b && x == y,
        _ => false,
    }
}

fn same_token(answers: (Option<&ApiAnswer>, Option<&ApiAnswer>)) -> bool {
    match answers {
        (Some(ApiAnswer::List { cont: a, .. }), Some(ApiAnswer::List { cont: b, .. })) => a == b,
        _ => false,
    }
}

/// The rule watch messages that differ break, by the messages either side got.
fn message_rule<'a>(msgs: impl Iterator<Item = &'a ApiMsg>) -> &'static str {
    let msgs: Vec<&ApiMsg> = msgs.collect();
    let has = |f: &dyn Fn(&ApiMsg) -> bool| msgs.iter().any(|m| f(m));
    if has(&|m| matches!(m, ApiMsg::BadBookmark { .. } | ApiMsg::Bookmark { .. })) {
        "breaks A8 (bookmarks)"
    } else if has(&|m| matches!(m, ApiMsg::InitialEventsEnd { .. })) {
        "breaks A12 (streaming lists)"
    } else if has(&|m| matches!(m, ApiMsg::Error { code: 410 })) {
        "breaks A4 (too old: 410)"
    } else if has(&|m| matches!(m, ApiMsg::Deleted(_))) {
        "breaks A3/A6 (watch events, DELETE's RV)"
    } else {
        "breaks A3 (watch events: exclusive, in RV order)"
    }
}

/// The first place where `server` differs from `model`.
pub fn first_difference(
    seq: &ApiSequence,
    model: &ApiTranscript,
    server: &ApiTranscript,
) -> Option<Difference> {
    for (i, op) in seq.ops.iter().enumerate() {
        let (m, s) = (model.steps.get(i), server.steps.get(i));
        if m != s {
            return Some(Difference {
                place: format!("step {i} ({op}), {}", rule(op, m, s)),
                model: render(m),
                store: render(s),
            });
        }
    }
    let ids: std::collections::BTreeSet<u8> = model.end.keys().chain(server.end.keys()).copied().collect();
    for id in ids {
        let (m, s) = (model.end.get(&id), server.end.get(&id));
        if m != s {
            let show = |v: Option<&Vec<ApiMsg>>| {
                v.map_or("nothing".into(), |v| {
                    v.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
                })
            };
            let place = format!("the end, w{id}, {}", message_rule(m.into_iter().chain(s).flatten()));
            return Some(Difference { place, model: show(m), store: show(s) });
        }
    }
    None
}
