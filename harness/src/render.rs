//! `listwatch show`: a trace as a fixed-column table, as a mermaid sequence diagram, or as JSON with
//! what every step showed. All three replay the trace through the model; none reads a clock.

use std::collections::BTreeMap;
use std::fmt::Write;

use listwatch_model::{Action, ClientId, Fault, Observed, ServerId, System};

use crate::action_text;
use crate::check_model::CheckState;
use crate::replay::verdicts;
use crate::tracefile::Trace;

/// One step replayed: the action, who took it, what it showed, and the state after it.
struct Step {
    n: usize,
    action: Action,
    seen: Vec<Observed>,
    etcd: u32,
    clients: Vec<(u32, String)>,
}

fn steps(trace: &Trace) -> Vec<Step> {
    let mut state = CheckState::start(trace.config);
    trace
        .actions
        .iter()
        .enumerate()
        .map(|(i, action)| {
            let seen = state.step(*action);
            Step {
                n: i + 1,
                action: *action,
                seen,
                etcd: state.sys.store().rev().0,
                clients: clients(&state.sys),
            }
        })
        .collect()
}

fn clients(sys: &System) -> Vec<(u32, String)> {
    sys.client_ids()
        .map(|c| {
            let view = sys.view(c);
            let objects: Vec<String> =
                view.cache.objects().map(|o| format!("{}@{}", short_key(&o.key.to_string()), o.rv)).collect();
            (view.resource_version.0, format!("[{}]", objects.join(" ")))
        })
        .collect()
}

fn short_key(key: &str) -> &str {
    key.strip_prefix("default/").unwrap_or(key)
}

fn verdict_line(trace: &Trace) -> String {
    let r = verdicts(trace);
    let expected = if r.verdict == trace.expect { "as recorded" } else { "RECORDED DIFFERENTLY" };
    format!(
        "verdict: {} ({expected}: {}); correct reflector on the same steps: {}",
        r.verdict, trace.expect, r.correct
    )
}

/// One fixed-column line per step: step, actor, action, etcd's revision, each reflector's RV and cache.
pub fn text(trace: &Trace) -> String {
    let c = &trace.config;
    let mut out = format!("# {}\n# flaws: {}\n", trace.title, c.flaws);
    let _ = writeln!(out, "# world: {}", crate::scope::describe(c));
    if let Some(seed) = trace.seed {
        let _ = writeln!(out, "# seed: {seed}");
    }
    let _ =
        writeln!(out, "{:>4}  {:<13} {:<34} {:>4}  {:>4}  cache", "step", "actor", "action", "etcd", "rv");
    for s in steps(trace) {
        let rv: Vec<String> = s.clients.iter().map(|(rv, _)| rv.to_string()).collect();
        let cache: Vec<&str> = s.clients.iter().map(|(_, c)| c.as_str()).collect();
        let line = format!(
            "{:>4}  {:<13} {:<34} {:>4}  {:>4}  {}",
            s.n,
            s.action.actor(),
            action_text::format(&s.action),
            s.etcd,
            rv.join("/"),
            cache.join(" ")
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let _ = writeln!(out, "{}", verdict_line(trace));
    out
}

fn mermaid_text(s: &str) -> String {
    s.replace(';', ",").replace('#', "no. ").replace(['{', '}'], "")
}

/// A mermaid sequence diagram of the writer, etcd, the API server(s) and the reflector(s).
pub fn mermaid(trace: &Trace) -> String {
    let c = &trace.config;
    let mut out = String::from("sequenceDiagram\n");
    let _ = writeln!(out, "    participant W as writer\n    participant E as etcd");
    for s in 0..c.servers.max(1) {
        let _ = writeln!(out, "    participant S{s} as {}", ServerId(s));
    }
    for r in 0..c.reflectors {
        let _ = writeln!(out, "    participant R{r} as {}", ClientId(r));
    }
    if c.manager.is_some() {
        let _ = writeln!(out, "    participant M as client manager");
    }
    // The server each client's connection goes to, and the request on it.
    let mut routed: BTreeMap<u8, u8> = BTreeMap::new();
    let mut sent: BTreeMap<u8, String> = BTreeMap::new();
    // The first requests go out as the system starts, before step 1.
    for o in System::start(trace.config).1 {
        if let Observed::Sent { client, request } = o {
            sent.insert(client.0, request.to_string());
        }
    }
    for step in steps(trace) {
        let _ = writeln!(out, "    Note over W,E: step {}", step.n);
        for o in &step.seen {
            let line = match o {
                Observed::Wrote { rev, key, deleted } => {
                    let verb = if *deleted { "delete" } else { "put" };
                    format!("W->>E: {verb} {key} (rev {rev})")
                }
                Observed::Ingested { server, .. } => {
                    format!("E->>S{}: {}", server.0, mermaid_text(&o.to_string()))
                }
                Observed::Sent { client, request } => {
                    sent.insert(client.0, request.to_string());
                    continue;
                }
                Observed::Routed { client, server } => {
                    routed.insert(client.0, server.0);
                    let request = sent.get(&client.0).cloned().unwrap_or_default();
                    format!("R{}->>S{}: {}", client.0, server.0, mermaid_text(&request))
                }
                Observed::Received { client, message } => match routed.get(&client.0) {
                    Some(s) => format!("S{s}-->>R{}: {}", client.0, mermaid_text(&message.to_string())),
                    None => format!("Note over R{}: {}", client.0, mermaid_text(&message.to_string())),
                },
                Observed::Cancelled { client } | Observed::Broken { client } => {
                    routed.remove(&client.0);
                    format!("Note over R{}: {}", client.0, mermaid_text(&o.to_string()))
                }
                Observed::TimerFired { client, .. }
                | Observed::LeftOpen { client }
                | Observed::Garbled { client, .. }
                | Observed::SilenceNoticed { client, .. }
                | Observed::WaitedInVain { client, .. }
                | Observed::WaitEnded { client }
                | Observed::Told { client }
                | Observed::Notified { client, .. } => {
                    format!("Note over R{}: {}", client.0, mermaid_text(&o.to_string()))
                }
                Observed::WroteOther { rev } => format!("W->>E: put another resource (rev {rev})"),
                Observed::Compacted { .. } => format!("Note over E: {}", mermaid_text(&o.to_string())),
                Observed::ManagerRequested { .. }
                | Observed::ManagerTime { .. }
                | Observed::ManagerDone { .. }
                | Observed::LockTaken { .. }
                | Observed::LockReleased { .. }
                | Observed::WaitEntered { .. }
                | Observed::WaitLeft { .. }
                | Observed::ClusterUnreachable { .. }
                | Observed::ClusterReachable { .. } => {
                    format!("Note over M: {}", mermaid_text(&o.to_string()))
                }
            };
            let _ = writeln!(out, "    {line}");
        }
        if step.seen.is_empty() {
            let _ = writeln!(
                out,
                "    Note over {}: {}",
                over(&step.action),
                mermaid_text(&step.action.to_string())
            );
        }
    }
    let _ = writeln!(out, "    Note over W,E: {}", mermaid_text(&verdict_line(trace)));
    out
}

/// The participant a step with nothing observed happens at.
fn over(action: &Action) -> String {
    match action {
        Action::Fault(Fault::Disconnect(c) | Fault::ServerTimeout(c) | Fault::Refuse(c, _)) => {
            format!("R{}", c.0)
        }
        Action::Fault(Fault::WatchError(c, _)) | Action::Route(c, _) | Action::Deliver(c) => {
            format!("R{}", c.0)
        }
        Action::FireTimer(c) | Action::Bookmark(c) | Action::ListWaitExpired(c) => format!("R{}", c.0),
        Action::Fault(
            Fault::SilentDeath(c) | Fault::FreshnessTimeout(c) | Fault::Garble(c) | Fault::HoldConsumer(c),
        )
        | Action::SilenceNoticed(c)
        | Action::ReleaseConsumer(c) => {
            format!("R{}", c.0)
        }
        Action::Fault(Fault::EvictCache(s) | Fault::RelistCache(s) | Fault::RestartServer(s)) => {
            format!("S{}", s.0)
        }
        Action::Ingest(s) | Action::ProgressNotify(s) | Action::CacheReady(s) => format!("S{}", s.0),
        Action::Fault(Fault::PauseCluster(_))
        | Action::ManagerStep(_)
        | Action::ManagerTime
        | Action::ClusterSync(_)
        | Action::ResumeCluster(_) => "M".into(),
        Action::Create(_) | Action::Update(_) | Action::Delete(_) | Action::WriteOther | Action::Heal => {
            "W".into()
        }
        Action::Compact(_) | Action::RevokeLease => "E".into(),
    }
}

/// The trace file and, per step, what it showed and the state after it.
pub fn json(trace: &Trace) -> String {
    let r = verdicts(trace);
    let steps: Vec<serde_json::Value> = steps(trace)
        .into_iter()
        .map(|s| {
            serde_json::json!({
                "step": s.n,
                "actor": s.action.actor(),
                "action": action_text::format(&s.action),
                "observed": s.seen.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "etcd_rev": s.etcd,
                "reflectors": s.clients.iter().map(|(rv, cache)| serde_json::json!({"rv": rv, "cache": cache})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let trace_value: serde_json::Value = serde_json::from_str(&trace.to_json()).unwrap_or_default();
    let value = serde_json::json!({
        "trace": trace_value,
        "steps": steps,
        "verdict": r.verdict.to_string(),
        "correct_verdict": r.correct.to_string(),
    });
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}
