//! The one trace format: versioned JSON holding the configuration, the seed if any, the actions and
//! the expected verdict. Every driver writes it (the checker's counterexamples, the simulator's shrunk
//! failures, the corpus) and `show` / `replay` read it.
//!
//! Loading checks everything it can without running anything: the JSON, the version, every field and
//! every action's spelling. Whether each action is enabled where it stands is checked by running the
//! trace with its client (`replay::check_enabled`), which `replay` and `show` do before anything else. An
//! error is one line naming the file and the position.

use std::fmt;
use std::path::Path;

use listwatch_model::{
    Action, ApiServerRelease, Config, FaultKind, FaultKinds, Flaw, Flaws, ListMode, ManagerConfig,
    ModelReflector, ProgressNotify, ReflectorConfig, TombstonePolicy,
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
    /// The client under test, by name (`model`, the model reflector, unless the file names another).
    pub client: String,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client: Option<String>,
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
    /// E8; absent (none) in files that predate it.
    #[serde(default, skip_serializing_if = "is_zero")]
    lease_revokes: u8,
    faults: u8,
    fault_kinds: Vec<String>,
    servers: u8,
    reflectors: u8,
    cache_window: u8,
    etcd_watch_buffer: Option<u8>,
    tombstones: String,
    /// E7/A12: whether etcd answers progress requests; absent (it does) in files that predate it.
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    etcd_progress_requests: bool,
    /// `true` (every server), `false` (none), or the servers that get them, by name.
    progress_notify: serde_json::Value,
    manager: Option<ManagerFile>,
    reflector: ReflectorFile,
    /// A14; absent (off) in files that predate it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    resilient_cache_init: bool,
    /// The API server release whose rules the servers follow; absent: the newest the model knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    apiserver: Option<String>,
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
    /// A9's health check; absent in files that predate it (the default then).
    #[serde(default = "default_health_check_ms", skip_serializing_if = "is_default_health_check_ms")]
    health_check_ms: u64,
    /// A13's page size; absent: unpaginated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    page_size: Option<u8>,
    /// C10's mode, `list-watch` or `watch-list`; absent: `list-watch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mode: Option<String>,
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

fn default_health_check_ms() -> u64 {
    ReflectorConfig::default().health_check_ms
}

fn is_default_health_check_ms(ms: &u64) -> bool {
    *ms == default_health_check_ms()
}

const TOMBSTONES: [(TombstonePolicy, &str); 2] = [
    (TombstonePolicy::DropAtCompaction, "drop-at-compaction"),
    (TombstonePolicy::KeepAtCompactRev, "keep-at-compact-rev"),
];

impl Trace {
    /// Whether the trace is of the model reflector.
    pub fn is_model(&self) -> bool {
        self.client == ModelReflector::NAME
    }

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
                lease_revokes: c.lease_revokes,
                faults: c.faults,
                fault_kinds: c.fault_kinds.iter().map(|k| k.name().to_string()).collect(),
                servers: c.servers,
                reflectors: c.reflectors,
                cache_window: c.cache_window,
                etcd_watch_buffer: c.etcd_watch_buffer,
                tombstones: TOMBSTONES.iter().find(|(t, _)| *t == c.tombstones).map_or("", |(_, n)| n).into(),
                etcd_progress_requests: c.etcd_progress_requests,
                progress_notify: progress_notify_json(c.progress_notify, c.servers),
                manager: c.manager.map(|m| ManagerFile { clusters: m.clusters, requests: m.requests }),
                reflector: ReflectorFile {
                    backoff_initial_ms: r.backoff_initial_ms,
                    backoff_max_ms: r.backoff_max_ms,
                    backoff_reset_ms: r.backoff_reset_ms,
                    watch_timeout_secs: r.watch_timeout_secs,
                    short_watch_ms: r.short_watch_ms,
                    bookmarks: r.bookmarks,
                    health_check_ms: r.health_check_ms,
                    page_size: r.page_size,
                    mode: (r.mode != ListMode::ListWatch).then(|| r.mode.name().to_string()),
                },
                resilient_cache_init: c.resilient_cache_init,
                apiserver: (c.apiserver != ApiServerRelease::NEWEST).then(|| c.apiserver.to_string()),
                flaws: c.flaws.iter().map(|f| f.name().to_string()).collect(),
            },
            client: (!self.is_model()).then(|| self.client.clone()),
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
        let client = raw.client.unwrap_or_else(|| ModelReflector::NAME.to_string());
        if client.is_empty() {
            return Err(err("client: an empty name (leave \"client\" out for the model reflector)".into()));
        }
        let mut actions = Vec::with_capacity(raw.actions.len());
        for (i, spelled) in raw.actions.iter().enumerate() {
            actions.push(action_text::parse(spelled).map_err(|m| err(format!("actions[{i}]: {m}")))?);
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
        Ok(Trace { title: raw.title, config, seed: raw.seed, actions, expect, client })
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

/// `progress_notify` as the file spells it: a boolean when every server or none gets them.
fn progress_notify_json(set: ProgressNotify, servers: u8) -> serde_json::Value {
    match set.uniform(servers) {
        Some(all) => serde_json::Value::Bool(all),
        None => set.servers(servers).map(|s| serde_json::Value::String(s.to_string())).collect(),
    }
}

fn progress_notify(value: &serde_json::Value, servers: u8) -> Result<ProgressNotify, String> {
    let bad =
        || "progress_notify must be true, false or a list of servers like [\"apiserver-0\"]".to_string();
    let names = match value {
        serde_json::Value::Bool(true) => return Ok(ProgressNotify::ALL),
        serde_json::Value::Bool(false) => return Ok(ProgressNotify::NONE),
        serde_json::Value::Array(names) => names,
        _ => return Err(bad()),
    };
    let mut listed = Vec::with_capacity(names.len());
    for name in names {
        let name = name.as_str().ok_or_else(bad)?;
        let server = action_text::parse_server(name).map_err(|m| format!("progress_notify: {m}"))?;
        if server.0 >= servers {
            return Err(format!("progress_notify names {server}, but there are {servers} servers"));
        }
        listed.push(server);
    }
    let set = ProgressNotify::only(listed).ok_or_else(|| {
        format!("progress_notify may list servers below apiserver-{} only", ProgressNotify::LISTABLE)
    })?;
    // One spelling per meaning: a list naming every server is `true`.
    Ok(match set.uniform(servers) {
        Some(true) => ProgressNotify::ALL,
        _ => set,
    })
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
    let mode = match &r.mode {
        None => ListMode::ListWatch,
        Some(name) => ListMode::parse(name).ok_or_else(|| {
            format!("reflector.mode must be \"list-watch\" or \"watch-list\", not \"{name}\"")
        })?,
    };
    Ok(Config {
        keys: f.keys,
        writes: f.writes,
        foreign_writes: f.foreign_writes,
        compactions: f.compactions,
        lease_revokes: f.lease_revokes,
        faults: f.faults,
        fault_kinds,
        servers: f.servers,
        reflectors: f.reflectors,
        cache_window: f.cache_window,
        etcd_watch_buffer: f.etcd_watch_buffer,
        tombstones,
        etcd_progress_requests: f.etcd_progress_requests,
        progress_notify: progress_notify(&f.progress_notify, f.servers)?,
        manager: f.manager.as_ref().map(|m| ManagerConfig { clusters: m.clusters, requests: m.requests }),
        reflector: ReflectorConfig {
            backoff_initial_ms: r.backoff_initial_ms,
            backoff_max_ms: r.backoff_max_ms,
            backoff_reset_ms: r.backoff_reset_ms,
            watch_timeout_secs: r.watch_timeout_secs,
            short_watch_ms: r.short_watch_ms,
            bookmarks: r.bookmarks,
            health_check_ms: r.health_check_ms,
            page_size: r.page_size,
            mode,
        },
        resilient_cache_init: f.resilient_cache_init,
        apiserver: match &f.apiserver {
            None => ApiServerRelease::NEWEST,
            Some(text) => ApiServerRelease::parse(text)
                .ok_or_else(|| format!("config.apiserver: '{text}' is not a release like v0.33.13"))?,
        },
        flaws,
    })
}

#[cfg(test)]
mod tests {
    use listwatch_model::ServerId;

    use super::*;

    fn trace(servers: u8, progress_notify: ProgressNotify) -> Trace {
        Trace {
            title: "t".into(),
            config: Config { servers, progress_notify, ..Config::default() },
            seed: None,
            actions: Vec::new(),
            expect: Verdict::Holds,
            client: ModelReflector::NAME.to_string(),
        }
    }

    fn with_field(servers: u8, spelled: &str) -> Result<ProgressNotify, String> {
        let text = trace(servers, ProgressNotify::NONE)
            .to_json()
            .replace("\"progress_notify\": false", &format!("\"progress_notify\": {spelled}"));
        Trace::parse("t.json", &text).map(|t| t.config.progress_notify).map_err(|e| e.to_string())
    }

    #[test]
    fn progress_notify_is_a_boolean_when_uniform_and_a_list_of_servers_when_mixed() {
        let mixed = ProgressNotify::only([ServerId(0), ServerId(2)]).expect("listable");
        let text = trace(3, mixed).to_json();
        assert!(text.contains("\"progress_notify\": [\n      \"apiserver-0\",\n      \"apiserver-2\"\n    ]"));
        assert_eq!(Trace::parse("t.json", &text).expect("reads back").config.progress_notify, mixed);
        assert!(trace(3, ProgressNotify::ALL).to_json().contains("\"progress_notify\": true"));
        assert!(trace(3, ProgressNotify::NONE).to_json().contains("\"progress_notify\": false"));
        let all = ProgressNotify::only([ServerId(0), ServerId(1)]).expect("listable");
        assert!(trace(2, all).to_json().contains("\"progress_notify\": true"), "one spelling per meaning");
        assert_eq!(with_field(2, "[\"apiserver-1\", \"apiserver-0\"]"), Ok(ProgressNotify::ALL));
        assert_eq!(with_field(2, "[]"), Ok(ProgressNotify::NONE));
        assert_eq!(with_field(2, "true"), Ok(ProgressNotify::ALL));
    }

    #[test]
    fn the_api_server_release_is_written_only_when_not_the_newest_and_a_bad_one_is_named() {
        let mut t = trace(1, ProgressNotify::NONE);
        assert!(!t.to_json().contains("\"apiserver\""), "the newest is the default, not written");
        t.config.apiserver = ApiServerRelease::new(33, 13);
        let text = t.to_json();
        assert!(text.contains("\"apiserver\": \"v0.33.13\""));
        assert_eq!(Trace::parse("t.json", &text).expect("reads back").config.apiserver, t.config.apiserver);
        let bad = text.replace("v0.33.13", "v0.33");
        let err = Trace::parse("t.json", &bad).expect_err("a bad release").to_string();
        assert!(err.contains("config.apiserver: 'v0.33' is not a release like v0.33.13"), "{err}");
    }

    #[test]
    fn the_reflector_mode_is_written_only_for_watch_list_and_a_bad_one_is_named() {
        let mut t = trace(1, ProgressNotify::NONE);
        assert!(!t.to_json().contains("\"mode\""), "list-watch is the default, not written");
        t.config.reflector.mode = ListMode::WatchList;
        let text = t.to_json();
        assert!(text.contains("\"mode\": \"watch-list\""));
        assert_eq!(
            Trace::parse("t.json", &text).expect("reads back").config.reflector.mode,
            ListMode::WatchList
        );
        let bad = text.replace("\"mode\": \"watch-list\"", "\"mode\": \"stream\"");
        let err = Trace::parse("t.json", &bad).expect_err("a bad mode").to_string();
        assert_eq!(
            err,
            "t.json: config: reflector.mode must be \"list-watch\" or \"watch-list\", not \"stream\""
        );
    }

    #[test]
    fn a_bad_progress_notify_names_the_field() {
        for (spelled, message) in [
            (
                "[\"apiserver-2\"]",
                "t.json: config: progress_notify names apiserver-2, but there are 2 servers",
            ),
            ("[\"server-1\"]", "t.json: config: progress_notify: 'server-1' is not an id like apiserver-0"),
            ("1", "t.json: config: progress_notify must be true, false or a list of servers"),
            ("[1]", "t.json: config: progress_notify must be true, false or a list of servers"),
        ] {
            let err = with_field(2, spelled).expect_err(spelled);
            assert!(err.starts_with(message), "{spelled}: {err}");
        }
    }
}
