//! The judgements on hand-driven runs, without the checker: a flaw's story breaks its property, the
//! same story on the correct system breaks none, and a violation quotes its guarantee.

use listwatch_model::{Action, ClientId, Config, Fault, Flaw, Flaws, Key, ServerId, System, Timer};
use listwatch_properties::{first_violation, witnessed, Monitor, Property};

const R: ClientId = ClientId(0);
const S: ServerId = ServerId(0);

struct Run {
    sys: System,
    monitor: Monitor,
}

impl Run {
    fn new(config: Config) -> Self {
        let (sys, seen) = System::start(config);
        let monitor = Monitor::new(&sys, &seen);
        Run { sys, monitor }
    }

    fn step(&mut self, action: Action) -> &mut Self {
        let seen = self.sys.try_apply(action).expect("enabled");
        self.monitor.observe(&self.sys, &seen);
        self
    }

    /// Repeat a step while it is enabled.
    fn drain(&mut self, action: Action) -> &mut Self {
        while self.sys.enabled(action) {
            self.step(action);
        }
        self
    }
}

fn stale_delete_story(flaws: Flaws) -> Run {
    let config =
        Config { keys: 2, writes: 2, faults: 0, compactions: 0, cache_window: 8, ..Config::default() };
    let mut run = Run::new(config.with_flaws(flaws));
    run.step(Action::Create(Key(0))).drain(Action::Ingest(S));
    run.step(Action::Route(R, S)).drain(Action::Deliver(R)).step(Action::Route(R, S));
    run.step(Action::Delete(Key(0))).drain(Action::Ingest(S)).drain(Action::Deliver(R));
    run
}

#[test]
fn a_delete_with_its_old_rv_breaks_no_rv_regression_and_the_correct_server_breaks_nothing() {
    let flawed = stale_delete_story(Flaws::only(Flaw::StaleDeleteRv));
    let v = first_violation(&flawed.sys, &flawed.monitor).expect("caught");
    assert_eq!(v.property, Property::NoRvRegression);
    let correct = stale_delete_story(Flaws::NONE);
    assert_eq!(first_violation(&correct.sys, &correct.monitor), None);
}

#[test]
fn a_client_timeout_answered_with_a_list_is_a_needless_relist() {
    for (flaws, expected) in
        [(Flaws::only(Flaw::RelistOnTimeout), Some(Property::NoNeedlessRelist)), (Flaws::NONE, None)]
    {
        let mut run = Run::new(Config { writes: 0, faults: 0, compactions: 0, flaws, ..Config::default() });
        run.step(Action::Route(R, S)).drain(Action::Deliver(R)).step(Action::Route(R, S));
        while run.sys.reflector(R).next_timer().map(|t| t.0) != Some(Timer::WatchTimeout) {
            run.step(Action::FireTimer(R));
        }
        run.step(Action::FireTimer(R));
        assert_eq!(first_violation(&run.sys, &run.monitor).map(|v| v.property), expected, "{flaws}");
    }
}

#[test]
fn a_clean_close_followed_by_a_rewatch_is_the_witness_of_no_needless_relist() {
    let mut run = Run::new(Config { writes: 0, faults: 1, compactions: 0, ..Config::default() });
    run.step(Action::Route(R, S)).drain(Action::Deliver(R)).step(Action::Route(R, S));
    run.step(Action::FireTimer(R)); // aged past the short-watch threshold
    assert!(!witnessed(Property::NoNeedlessRelist, &run.sys, &run.monitor));
    run.step(Action::Fault(Fault::ServerTimeout(R))).drain(Action::Deliver(R));
    assert!(witnessed(Property::NoNeedlessRelist, &run.sys, &run.monitor));
    assert_eq!(first_violation(&run.sys, &run.monitor), None);
}

#[test]
fn a_violation_quotes_its_guarantee() {
    let flawed = stale_delete_story(Flaws::only(Flaw::StaleDeleteRv));
    let text = first_violation(&flawed.sys, &flawed.monitor).unwrap().to_string();
    assert!(text.starts_with("no-rv-regression violated: \""), "{text}");
    assert!(text.contains(Property::NoRvRegression.guarantee()), "{text}");
    assert!(text.contains("reflector-0"), "{text}");
}

fn watch_list_config(flaws: Flaws) -> Config {
    let reflector =
        listwatch_model::ReflectorConfig { mode: listwatch_model::ListMode::WatchList, ..Default::default() };
    Config {
        keys: 1,
        writes: 2,
        faults: 1,
        compactions: 0,
        cache_window: 8,
        reflector,
        flaws,
        ..Config::default()
    }
}

/// C10: a streaming list's initial events move nothing the client claims (synthetic ADDEDs below its
/// RV are no regression), the end bookmark is a full list (ready from then on), and a stream that
/// broke after an event may be retried at once.
#[test]
fn a_streaming_list_is_judged_as_a_list_and_its_retry_needs_no_backoff() {
    let mut run = Run::new(watch_list_config(Flaws::NONE));
    run.step(Action::Create(Key(0))).drain(Action::Ingest(S));
    run.step(Action::Route(R, S)).step(Action::Deliver(R)); // ADDED a@1
    assert!(!run.sys.view(R).synced && !run.monitor.guarantees.ready_means_listed.clients[0].listed);
    run.step(Action::Fault(Fault::Disconnect(R))); // retried at once
    run.step(Action::Delete(Key(0))).drain(Action::Ingest(S));
    run.step(Action::Route(R, S)).drain(Action::Deliver(R));
    assert!(run.sys.view(R).synced && run.monitor.guarantees.ready_means_listed.clients[0].listed);
    assert!(witnessed(Property::ReadyMeansListed, &run.sys, &run.monitor));
    assert_eq!(first_violation(&run.sys, &run.monitor), None);
    // The same story with the aborted stream's buffer kept: the Replace holds a deleted object.
    let mut run = Run::new(watch_list_config(Flaws::only(Flaw::PartialInitialBuffer)));
    run.step(Action::Create(Key(0))).drain(Action::Ingest(S));
    run.step(Action::Route(R, S)).step(Action::Deliver(R));
    run.step(Action::Fault(Fault::Disconnect(R)));
    run.step(Action::Delete(Key(0))).drain(Action::Ingest(S));
    run.step(Action::Route(R, S)).drain(Action::Deliver(R));
    let v = first_violation(&run.sys, &run.monitor).expect("caught");
    assert!(matches!(v.property, Property::NoResurrectedDelete | Property::CacheIsSnapshot), "{v}");
}

/// kube-rs#1844: asking for the initial events again after a watch ended cleanly is a relist.
#[test]
fn a_streaming_list_where_a_rewatch_is_owed_is_a_needless_relist() {
    for (flaws, expected) in
        [(Flaws::only(Flaw::RewatchInitialEvents), Some(Property::NoNeedlessRelist)), (Flaws::NONE, None)]
    {
        let mut run = Run::new(Config { writes: 0, ..watch_list_config(flaws) });
        run.step(Action::Route(R, S)).drain(Action::Deliver(R));
        run.step(Action::FireTimer(R)); // aged past the short-watch threshold
        run.step(Action::Fault(Fault::ServerTimeout(R))).drain(Action::Deliver(R));
        assert_eq!(first_violation(&run.sys, &run.monitor).map(|v| v.property), expected, "{flaws}");
    }
}
