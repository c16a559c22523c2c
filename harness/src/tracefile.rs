//! The one trace format: versioned JSON holding the configuration, the seed if any, the actions and
//! the expected verdict. Every driver writes it (the checker's counterexamples, the simulator's shrunk
//! failures, the corpus) and `show` / `replay` read it.
//!
//! Loading checks everything: the JSON, the version, every field, every action's spelling, and that
//! each action is enabled where it stands. An error is one line naming the file and the position.

use std::fmt;
use std::path::Path;

use listwatch_model::{
    Action, Config, FaultKind, FaultKinds, Flaw, Flaws, ManagerConfig, ReflectorConfig, System,
    TombstonePolicy,
};
use listwatch_properties::Property;
use serde::{Deserialize, Serialize};

use crate::action_text;

/// What every trace file says it is.
pub const FORMAT: &str = "listwatch-trace";
/// The version this listwatch writes and reads.
pub const VERSION: u32 = 1;

/// What a run of a trace shows: a property breaks after some step (0: in the initial state), or
/// every property holds on every state of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    Breaks { property: Property, step: usize },
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Holds => f.write_str("every property holds"),
            Verdict::Breaks { property, step } => write!(f, "{property} breaks at step {step}"),
        }
    }
}

/// A loaded, checked trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// What the trace shows, for people (`stale-delete-rv (kubernetes#58545)`).
    pub title: String,
    pub config: Config,
    pub seed: Option<u64>,
    pub actions: Vec<Action>,
    pub expect: Verdict,
}

/// A trace that cannot be read, with where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub file: String,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

impl std::error::Error for TraceError {}

#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    version: Option<u32>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: String,
    version: u32,
    title: String,
    config: ConfigFile,
    seed: Option<u64>,
    actions: Vec<String>,
    expect: ExpectFile,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
enum ExpectFile {
    Holds,
    Breaks { property: String, step: usize },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    keys: u8,
    writes: u8,
    foreign_writes: u8,
    compactions: u8,
    faults: u8,
    fault_kinds: Vec<String>,
    servers: u8,
    reflectors: u8,
    cache_window: u8,
    etcd_watch_buffer: Option<u8>,
    tombstones: String,
    progress_notify: bool,
    manager: Option<ManagerFile>,
    reflector: ReflectorFile,
    flaws: Vec<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManagerFile {
    clusters: u8,
    requests: u8,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReflectorFile {
    backoff_initial_ms: u64,
    backoff_max_ms: u64,
    backoff_reset_ms: u64,
    watch_timeout_secs: u32,
    short_watch_ms: u64,
    bookmarks: bool,
}

const TOMBSTONES: [(TombstonePolicy, &str); 2] = [
    (TombstonePolicy::DropAtCompaction, "drop-at-compaction"),
    (TombstonePolicy::KeepAtCompactRev, "keep-at-compact-rev"),
];

impl Trace {
    /// The trace file's bytes: pretty JSON, one action per line, fields in a fixed order. The same
    /// trace always gives the same bytes.
    pub fn to_json(&self) -> String {
        let c = &self.config;
        let r = &c.reflector;
        let file = File {
            format: FORMAT.into(),
            version: VERSION,
            title: self.title.clone(),
            config: ConfigFile {
                keys: c.keys,
                writes: c.writes,
                foreign_writes: c.foreign_writes,
                compactions: c.compactions,
                faults: c.faults,
                fault_kinds: c.fault_kinds.iter().map(|k| k.name().to_string()).collect(),
                servers: c.servers,
                reflectors: c.reflectors,
                cache_window: c.cache_window,
                etcd_watch_buffer: c.etcd_watch_buffer,
                tombstones: TOMBSTONES.iter().find(|(t, _)| *t == c.tombstones).map_or("", |(_, n)| n).into(),
                progress_notify: c.progress_notify,
                manager: c.manager.map(|m| ManagerFile { clusters: m.clusters, requests: m.requests }),
                reflector: ReflectorFile {
                    backoff_initial_ms: r.backoff_initial_ms,
                    backoff_max_ms: r.backoff_max_ms,
                    backoff_reset_ms: r.backoff_reset_ms,
                    watch_timeout_secs: r.watch_timeout_secs,
                    short_watch_ms: r.short_watch_ms,
                    bookmarks: r.bookmarks,
                },
                flaws: c.flaws.iter().map(|f| f.name().to_string()).collect(),
            },
            seed: self.seed,
            actions: self.actions.iter().map(action_text::format).collect(),
            expect: match &self.expect {
                Verdict::Holds => ExpectFile::Holds,
                Verdict::Breaks { property, step } => {
                    ExpectFile::Breaks { property: property.name().into(), step: *step }
                }
            },
        };
        let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Read and check a trace file.
    pub fn load(path: &Path) -> Result<Trace, TraceError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| TraceError { file: name.clone(), message: format!("cannot read: {e}") })?;
        Trace::parse(&name, &text)
    }

    /// Check a trace file's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Trace, TraceError> {
        let err = |message: String| TraceError { file: file.to_string(), message };
        let header: Header = serde_json::from_str(text).map_err(|e| err(format!("not a trace: {e}")))?;
        if header.format.as_deref() != Some(FORMAT) {
            return Err(err(format!("not a trace: \"format\" must be \"{FORMAT}\"")));
        }
        match header.version {
            Some(VERSION) => {}
            Some(v) => {
                return Err(err(format!(
                    "unknown trace version {v} (this listwatch reads version {VERSION})"
                )))
            }
            None => return Err(err("not a trace: no \"version\"".into())),
        }
        let raw: File = serde_json::from_str(text).map_err(|e| err(e.to_string()))?;
        let config = config(&raw.config).map_err(|m| err(format!("config: {m}")))?;
        let mut actions = Vec::with_capacity(raw.actions.len());
        let mut sys = System::new(config);
        for (i, spelled) in raw.actions.iter().enumerate() {
            let action = action_text::parse(spelled).map_err(|m| err(format!("actions[{i}]: {m}")))?;
            sys.try_apply(action).map_err(|_| {
                err(format!("actions[{i}] '{spelled}': not enabled at that point of the trace"))
            })?;
            actions.push(action);
        }
        let expect = match raw.expect {
            ExpectFile::Holds => Verdict::Holds,
            ExpectFile::Breaks { property, step } => {
                let p = Property::parse(&property)
                    .ok_or_else(|| err(format!("expect: unknown property '{property}'")))?;
                if step > actions.len() {
                    return Err(err(format!(
                        "expect: step {step} is past the last action ({})",
                        actions.len()
                    )));
                }
                Verdict::Breaks { property: p, step }
            }
        };
        Ok(Trace { title: raw.title, config, seed: raw.seed, actions, expect })
    }

    /// Write the trace to `path` whole or not at all (a temporary file renamed into place).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, self.to_json())?;
        std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

fn config(f: &ConfigFile) -> Result<Config, String> {
    let mut fault_kinds = FaultKinds::NONE;
    for name in &f.fault_kinds {
        let kind = FaultKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| format!("unknown fault kind '{name}'"))?;
        fault_kinds = fault_kinds.with(kind);
    }
    let mut flaws = Flaws::NONE;
    for name in &f.flaws {
        flaws = flaws.with(name.parse::<Flaw>().map_err(|e| e.to_string())?);
    }
    let tombstones = TOMBSTONES
        .iter()
        .find(|(_, n)| n == &f.tombstones)
        .map(|(t, _)| *t)
        .ok_or_else(|| format!("unknown tombstone policy '{}'", f.tombstones))?;
    let at_least_one =
        |name: &str, v: u64| if v == 0 { Err(format!("{name} must be at least 1")) } else { Ok(()) };
    at_least_one("servers", f.servers.into())?;
    at_least_one("cache_window", f.cache_window.into())?;
    at_least_one("etcd_watch_buffer", f.etcd_watch_buffer.map_or(1, u64::from))?;
    let r = &f.reflector;
    at_least_one("reflector.backoff_initial_ms", r.backoff_initial_ms)?;
    at_least_one("reflector.watch_timeout_secs", r.watch_timeout_secs.into())?;
    if r.backoff_max_ms < r.backoff_initial_ms {
        return Err("reflector.backoff_max_ms is below reflector.backoff_initial_ms".into());
    }
    if let Some(m) = &f.manager {
        at_least_one("manager.clusters", m.clusters.into())?;
    }
    Ok(Config {
        keys: f.keys,
        writes: f.writes,
        foreign_writes: f.foreign_writes,
        compactions: f.compactions,
        faults: f.faults,
        fault_kinds,
        servers: f.servers,
        reflectors: f.reflectors,
        cache_window: f.cache_window,
        etcd_watch_buffer: f.etcd_watch_buffer,
        tombstones,
        progress_notify: f.progress_notify,
        manager: f.manager.as_ref().map(|m| ManagerConfig { clusters: m.clusters, requests: m.requests }),
        reflector: ReflectorConfig {
            backoff_initial_ms: r.backoff_initial_ms,
            backoff_max_ms: r.backoff_max_ms,
            backoff_reset_ms: r.backoff_reset_ms,
            watch_timeout_secs: r.watch_timeout_secs,
            short_watch_ms: r.short_watch_ms,
            bookmarks: r.bookmarks,
        },
        flaws,
    })
}
