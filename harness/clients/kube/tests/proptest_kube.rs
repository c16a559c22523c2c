//! proptest with kube-runtime in the loop: any schedule, run twice from the start with fresh clients,
//! shows the same observations step for step and the same verdict; and its verdict is what `replay`
//! of the same steps gives. Schedules are drawn as choices among the enabled steps, so every one is
//! valid, and proptest shrinks a failing one.

use listwatch_harness::replay::judge_with;
use listwatch_harness::scope::Scope;
use listwatch_kube::{Kube, KubeConfig};
use listwatch_model::{Action, Clients, Config, Observed, System};
use listwatch_properties::{first_violation, Monitor, Property};
use proptest::collection::vec;
use proptest::prelude::*;

/// The steps a run took, what each showed (the start first), and the first property broken, with its
/// step.
type Ran = (Vec<Action>, Vec<Vec<Observed>>, Option<(usize, Property)>);

/// The steps `choices` pick, what each showed, and the first property broken (with its step).
fn run(kc: KubeConfig, config: Config, seed: u64, choices: &[u16]) -> Ran {
    let (mut sys, seen) = System::start_with(config, |id| Kube(kc).make(&config, seed, id));
    let mut monitor = Monitor::new(&sys, &seen);
    let (mut actions, mut shown, mut enabled) = (Vec::new(), vec![seen], Vec::new());
    for choice in choices {
        enabled.clear();
        sys.actions(&mut enabled);
        let Some(action) = enabled.get(usize::from(*choice) % enabled.len().max(1)).copied() else { break };
        let seen = sys.apply(action);
        monitor.observe(&sys, &seen);
        actions.push(action);
        shown.push(seen);
        if let Some(v) = first_violation(&sys, &monitor) {
            return (actions.clone(), shown, Some((actions.len(), v.property)));
        }
    }
    (actions, shown, None)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_schedule_runs_the_same_twice_and_replays_to_its_verdict(
        config_index in 0usize..KubeConfig::ALL.len(),
        seed in any::<u64>(),
        choices in vec(any::<u16>(), 0..60),
    ) {
        let mut kc = KubeConfig::ALL[config_index];
        kc.waiters = 1;
        let mut config = Scope::Small.config();
        config.faults = 2;
        let first = run(kc, config, seed, &choices);
        let second = run(kc, config, seed, &choices);
        prop_assert_eq!(&first.1, &second.1, "the same schedule showed other observations");
        prop_assert_eq!(first.2, second.2);
        // The harness's judge (what `replay` runs), with the run's seed, gives the same verdict.
        let (verdict, _) = judge_with(&Kube(kc), seed, config, &first.0).expect("kube-runtime runs in this process");
        let expected = match first.2 {
            Some((step, property)) => listwatch_harness::tracefile::Verdict::Breaks { property, step },
            None => listwatch_harness::tracefile::Verdict::Holds,
        };
        prop_assert_eq!(verdict, expected);
    }
}
