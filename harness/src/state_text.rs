//! A state in Kubernetes terms, for the Explorer: etcd's revision and keys, each API server's cache (RV,
//! window, the 410 threshold, the watches it serves), each client (readiness, claimed RV, its connection
//! and cache, its next timer) and what is left of the environment's budgets.

use std::fmt::Write;

use listwatch_model::{Client, System};

/// The state of `sys`, a line per component.
pub fn render<C: Client>(sys: &System<C>) -> String {
    let store = sys.store();
    let mut out = String::new();
    let keys: Vec<String> = store
        .truth_at(store.rev())
        .values()
        .map(|kv| format!("{}@{} v{}", kv.key, kv.mod_rev, kv.version))
        .collect();
    let _ = writeln!(
        out,
        "etcd: revision {}, compacted at {}; {}",
        store.rev(),
        store.compacted(),
        if keys.is_empty() { "no objects".to_string() } else { keys.join(", ") }
    );
    for s in sys.servers() {
        let cache = s.cache();
        let window: Vec<String> = cache.window().map(|e| e.rv.to_string()).collect();
        let watches: Vec<String> =
            s.watches().iter().map(|(c, w)| format!("{c} from {} (sent {})", w.from, w.sent)).collect();
        let _ = write!(
            out,
            "{}: cache at RV {}, window [{}], 410 below {}, {} object(s); watches: {}",
            s.id(),
            cache.rv(),
            window.join(" "),
            cache.floor(),
            cache.objects().count(),
            if watches.is_empty() { "none".to_string() } else { watches.join(", ") }
        );
        let waiting: Vec<String> = s
            .waiting_lists()
            .iter()
            .map(|(c, w)| format!("{c}'s LIST for RV {}", w.rv))
            .chain(s.waiting_watch_lists().iter().map(|(c, rv)| format!("{c}'s streaming list for RV {rv}")))
            .collect();
        if !waiting.is_empty() {
            let _ = write!(out, "; waiting: {}", waiting.join(", "));
        }
        if s.initializing() {
            out.push_str("; reinitialising (429)");
        }
        out.push('\n');
    }
    for c in sys.client_ids() {
        let view = sys.view(c);
        let cache: Vec<String> = view.cache.objects().map(|o| format!("{}@{}", o.key, o.rv)).collect();
        let conn = match sys.network().conn(c) {
            None => "no connection".to_string(),
            Some(conn) => {
                let at = conn.server.map_or("not yet routed".to_string(), |s| format!("at {s}"));
                let dead = if conn.dead { ", dead (silently)" } else { "" };
                format!("{} {at}, {} queued{dead}", conn.request, conn.queue.len())
            }
        };
        let timer = sys
            .client(c)
            .next_timer()
            .map_or("no timer".to_string(), |(t, ms)| format!("next timer {t:?} in {ms} ms"));
        let _ = writeln!(
            out,
            "{c}: {}, claims RV {}; {conn}; {timer}; cache [{}]",
            if view.synced { "ready" } else { "not ready" },
            view.resource_version,
            cache.join(", ")
        );
    }
    let b = sys.budget();
    let _ = write!(
        out,
        "left: writes {}, writes elsewhere {}, compactions {}, faults {}",
        b.writes, b.foreign_writes, b.compactions, b.faults
    );
    if b.lease_revokes > 0 {
        let _ = write!(out, ", lease revokes {}", b.lease_revokes);
    }
    out
}

#[cfg(test)]
mod tests {
    use listwatch_model::{Action, ClientId, Config, Key, ServerId, System};

    #[test]
    fn a_state_reads_in_kubernetes_terms() {
        let mut sys = System::new(Config::default());
        sys.apply(Action::Create(Key(0)));
        sys.apply(Action::Route(ClientId(0), ServerId(0)));
        let text = super::render(&sys);
        assert!(text.starts_with("etcd: revision 1, compacted at 0; default/a@1 v1\n"), "{text}");
        assert!(
            text.contains("apiserver-0: cache at RV 0, window [], 410 below 0, 0 object(s); watches: none"),
            "{text}"
        );
        assert!(
            text.contains("reflector-0: not ready, claims RV 0; LIST rv=\"0\" at apiserver-0, 1 queued"),
            "{text}"
        );
        assert!(text.ends_with("left: writes 2, writes elsewhere 0, compactions 1, faults 1"), "{text}");
    }
}
