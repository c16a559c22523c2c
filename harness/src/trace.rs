//! A counterexample as a person reads it: one line per step (step, actor, action), what the reflector
//! saw and did indented under it, and the broken guarantee at the end.

use std::fmt::Write;

use listwatch_model::{Action, Config, Observed};
use listwatch_properties::Violation;

use crate::check_model::CheckState;

/// Render the steps of a trace, replayed from the start of `config`.
pub fn render(config: Config, actions: &[Action], violation: &Violation) -> String {
    let mut state = CheckState::start(config);
    let mut out = String::new();
    let _ = writeln!(out, "  step  actor             action");
    for (i, action) in actions.iter().enumerate() {
        let seen = state.step(*action);
        let _ = writeln!(out, "  {:>4}  {:<17} {action}", i + 1, action.actor());
        for o in seen.iter().filter(|o| shown(o)) {
            let _ = writeln!(out, "{:>26}{o}", "· ");
        }
        for client in state.sys.client_ids() {
            if seen.iter().any(|o| touches(o, client)) {
                let view = state.sys.view(client);
                let cache: Vec<String> =
                    view.cache.objects().map(|o| format!("{}@{}", o.key, o.rv)).collect();
                let _ = writeln!(
                    out,
                    "{:>26}{client}: claims RV {}, cache [{}]",
                    "· ",
                    view.resource_version,
                    cache.join(", ")
                );
            }
        }
    }
    let _ = writeln!(out, "  {violation}");
    out
}

fn shown(o: &Observed) -> bool {
    !matches!(o, Observed::Routed { .. })
}

fn touches(o: &Observed, client: listwatch_model::ClientId) -> bool {
    matches!(o, Observed::Received { client: c, .. } | Observed::Broken { client: c } if *c == client)
}
