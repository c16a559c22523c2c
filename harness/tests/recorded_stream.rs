//! The properties judge a recorded observation stream with no model system behind it: what a client
//! did and showed, frame by frame, plus the writes the store reported. A recording of every corpus
//! trace gives the trace's verdict at the same step; a recording kept as a file is judged from disk
//! alone; and a hand-written stream of a client that loops with no failure and no progress breaks
//! `backoff` through its request-rate bound.

#[path = "support/corpus_files.rs"]
mod corpus_files;

use listwatch_harness::replay::record;
use listwatch_harness::tracefile::{Trace, Verdict};
use listwatch_model::{ClientId, ListResponse, ListRv, Message, Observed, Request, Rev, WatchFrom};
use listwatch_properties::{judge_frames, Environment, Frame, Property, Shown};

fn verdict(frames: &[Frame]) -> Verdict {
    match judge_frames(frames) {
        Some((step, v)) => Verdict::Breaks { property: v.property, step },
        None => Verdict::Holds,
    }
}

#[test]
fn a_recording_of_every_corpus_trace_gives_its_verdict_through_json() {
    let files = corpus_files::corpus_files();
    assert!(!files.is_empty());
    for file in files {
        let trace = Trace::load(&file).expect("a corpus trace loads");
        let frames = record(trace.config, &trace.actions);
        let json = serde_json::to_string(&frames).expect("frames serialize");
        let read: Vec<Frame> = serde_json::from_str(&json).expect("frames read back");
        assert_eq!(verdict(&read), trace.expect, "{}", file.display());
    }
}

const KEPT: &str = "observed/stale-delete-rv.kubernetes-58545.frames.json";

/// A recorded stream kept as a file, judged from the file alone. `LISTWATCH_RECORD=1` writes it anew
/// from the corpus trace of the same name.
#[test]
fn a_recorded_file_is_judged_without_the_model_system() {
    let path = corpus_files::corpus_dir().join(KEPT);
    if std::env::var_os("LISTWATCH_RECORD").is_some() {
        let trace = Trace::load(&corpus_files::corpus_dir().join("stale-delete-rv.kubernetes-58545.json"))
            .expect("loads");
        let json = serde_json::to_string_pretty(&record(trace.config, &trace.actions)).expect("serializes");
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("folder made");
        std::fs::write(&path, json + "\n").expect("written");
    }
    let text = std::fs::read_to_string(&path).expect("the recorded file is kept in corpus/observed");
    let frames: Vec<Frame> = serde_json::from_str(&text).expect("a recorded stream");
    let (step, violation) = judge_frames(&frames).expect("the recording shows kubernetes#58545");
    assert_eq!((violation.property, step), (Property::NoRvRegression, frames.len() - 1));
    assert!(violation.detail.contains("DELETED") && violation.detail.contains("at or below"), "{violation}");
}

fn shown(rv: u32, synced: bool) -> Shown {
    Shown {
        resource_version: Rev(rv),
        synced,
        between_events: true,
        unread: false,
        readiness_pending: false,
        watch_at_rest: false,
        connected: true,
        scheduled: false,
        queued: false,
        handlers_behind: false,
        handlers: 1,
        cache: Vec::new(),
    }
}

/// A client that re-lists the moment each LIST comes back: nothing fails, nothing moves, no time passes.
#[test]
fn a_list_loop_with_no_failure_breaks_the_request_rate_bound() {
    const C: ClientId = ClientId(0);
    let list = Request::List { rv: ListRv::Any };
    let env = Environment { quiet: false, settled: false, caught_up: true, faulty: false };
    let mut frames = vec![Frame {
        seen: vec![Observed::Sent { client: C, request: list }],
        environment: env,
        clients: vec![shown(0, false)],
        not_judged: Vec::new(),
    }];
    for _ in 0..6 {
        let ok = Message::List(Ok(ListResponse { rv: Rev(0), items: Vec::new(), cont: None }));
        let seen =
            vec![Observed::Received { client: C, message: ok }, Observed::Sent { client: C, request: list }];
        frames.push(Frame { seen, environment: env, clients: vec![shown(0, true)], not_judged: Vec::new() });
    }
    let (step, violation) = judge_frames(&frames).expect("the loop is caught");
    assert_eq!(violation.property, Property::Backoff);
    assert_eq!(step, usize::from(listwatch_properties::history::REQUESTS_WITHOUT_PROGRESS_MAX));
    assert!(violation.detail.contains("without its RV moving"), "{violation}");
}

/// The same loop, stopped at the bound: then a LIST answered past the claim, and at once the WATCH from
/// its RV, in one frame. The RV moved before the WATCH went, so the WATCH is not one more request without
/// progress, although the client's claim that shows the move comes after it (`check --scope large`
/// found the correct reflector failing so, in the watch-list world, before the LIST's answer counted).
#[test]
fn a_watch_sent_right_after_a_list_that_moved_the_rv_is_not_one_more_without_progress() {
    const C: ClientId = ClientId(0);
    let list = Request::List { rv: ListRv::Any };
    let env = Environment { quiet: false, settled: false, caught_up: true, faulty: false };
    let answer = |rv| Message::List(Ok(ListResponse { rv: Rev(rv), items: Vec::new(), cont: None }));
    let mut frames = vec![Frame {
        seen: vec![Observed::Sent { client: C, request: list }],
        environment: env,
        clients: vec![shown(0, false)],
        not_judged: Vec::new(),
    }];
    let bound = usize::from(listwatch_properties::history::REQUESTS_WITHOUT_PROGRESS_MAX);
    for _ in 1..bound {
        let seen = vec![
            Observed::Received { client: C, message: answer(0) },
            Observed::Sent { client: C, request: list },
        ];
        frames.push(Frame { seen, environment: env, clients: vec![shown(0, true)], not_judged: Vec::new() });
    }
    assert_eq!(judge_frames(&frames), None, "{bound} requests without progress are allowed");
    let watch = Request::Watch { from: WatchFrom::Rv(Rev(5)), timeout_secs: 300, bookmarks: true };
    let seen = vec![
        Observed::Received { client: C, message: answer(5) },
        Observed::Sent { client: C, request: watch },
    ];
    frames.push(Frame { seen, environment: env, clients: vec![shown(5, true)], not_judged: Vec::new() });
    assert_eq!(judge_frames(&frames), None, "the LIST's answer moved the RV");
}

/// A client that lists again and again, each LIST answered at the same RV past its claim, which it never
/// claims: the first answer moved its RV, the others did not, so the loop still breaks the bound.
#[test]
fn a_list_loop_answered_past_a_claim_never_made_still_breaks_the_request_rate_bound() {
    const C: ClientId = ClientId(0);
    let list = Request::List { rv: ListRv::Any };
    let env = Environment { quiet: false, settled: false, caught_up: true, faulty: false };
    let mut frames = vec![Frame {
        seen: vec![Observed::Sent { client: C, request: list }],
        environment: env,
        clients: vec![shown(0, false)],
        not_judged: Vec::new(),
    }];
    for _ in 0..8 {
        let ok = Message::List(Ok(ListResponse { rv: Rev(5), items: Vec::new(), cont: None }));
        let seen =
            vec![Observed::Received { client: C, message: ok }, Observed::Sent { client: C, request: list }];
        frames.push(Frame { seen, environment: env, clients: vec![shown(0, true)], not_judged: Vec::new() });
    }
    let (_, violation) = judge_frames(&frames).expect("the loop is caught");
    assert_eq!(violation.property, Property::Backoff);
    assert!(violation.detail.contains("without its RV moving"), "{violation}");
}

/// A client with two handlers is judged handler by handler: the second handler told nothing of an
/// object the cache holds breaks `notifications-match-cache`, naming that handler; told it, it holds.
#[test]
fn a_second_handler_left_untold_breaks_notifications_match_cache() {
    use listwatch_model::{Key, Notification, Object, Uid};
    const C: ClientId = ClientId(0);
    let a = Object { key: Key(0), uid: Uid(Rev(1)), rv: Rev(1), version: 1 };
    let env = Environment { quiet: false, settled: false, caught_up: true, faulty: false };
    let shows = |cache: Vec<Object>| Shown { handlers: 2, cache, ..shown(1, false) };
    let start = Frame {
        seen: vec![Observed::Wrote { rev: Rev(1), key: a.key, deleted: false }],
        environment: env,
        clients: vec![Shown { handlers: 2, ..shown(0, false) }],
        not_judged: Vec::new(),
    };
    let told = |handlers: &[u8]| {
        let seen = handlers
            .iter()
            .map(|&handler| Observed::Notified { client: C, handler, notification: Notification::Add(a) })
            .collect();
        vec![
            start.clone(),
            Frame { seen, environment: env, clients: vec![shows(vec![a])], not_judged: Vec::new() },
        ]
    };
    let (step, violation) = judge_frames(&told(&[0])).expect("handler #1 was never told");
    assert_eq!((violation.property, step), (Property::NotificationsMatchCache, 1));
    assert!(violation.detail.contains("handler #1 was told []"), "{violation}");
    assert_eq!(judge_frames(&told(&[0, 1])), None);
    let (_, violation) = judge_frames(&told(&[0, 1, 1])).expect("handler #1 told twice");
    assert!(violation.detail.contains("handler #1: add"), "{violation}");
}

/// The first frame states what the client cannot be judged by, and the stream is judged so: a LIST
/// refused with 403 and sent again, backed off but never told, breaks `failures-told` for a client
/// that tells its user of failures, and nothing for one whose first frame says it cannot be judged by
/// it (client-go with no watch error handler). What the file says survives a write and a read.
#[test]
fn the_first_frame_names_what_cannot_be_judged() {
    use listwatch_model::{ApiError, Timer};
    const C: ClientId = ClientId(0);
    let env = Environment { quiet: false, settled: false, caught_up: true, faulty: true };
    let list = Request::List { rv: ListRv::Any };
    let frames = |not_judged: Vec<Property>| {
        vec![
            Frame {
                seen: vec![Observed::Sent { client: C, request: list }],
                environment: env,
                clients: vec![shown(0, false)],
                not_judged,
            },
            Frame {
                seen: vec![Observed::Received {
                    client: C,
                    message: Message::List(Err(ApiError::Forbidden)),
                }],
                environment: env,
                clients: vec![shown(0, false)],
                not_judged: Vec::new(),
            },
            Frame {
                seen: vec![
                    Observed::TimerFired { client: C, timer: Timer::Backoff, after_ms: 1000 },
                    Observed::Sent { client: C, request: list },
                ],
                environment: env,
                clients: vec![shown(0, false)],
                not_judged: Vec::new(),
            },
        ]
    };
    let (at, v) = judge_frames(&frames(Vec::new())).expect("an untold failure breaks failures-told");
    assert_eq!((at, v.property), (2, Property::FailuresTold), "{v}");
    let untold = frames(vec![Property::FailuresTold]);
    assert_eq!(judge_frames(&untold), None);
    let text = serde_json::to_string(&untold).expect("frames serialize");
    assert!(text.contains(r#""not_judged":["failures-told"]"#), "{text}");
    let read: Vec<Frame> = serde_json::from_str(&text).expect("frames read back");
    assert_eq!(read, untold);
    // `show` says so, and judges the file as the run did.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("untold.frames.json");
    std::fs::write(&file, &text).expect("the file is written");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_listwatch"))
        .args(["show", &file.display().to_string()])
        .output()
        .expect("show runs");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("not judged, as the run recorded: failures-told\nverdict: every property holds"),
        "{shown}"
    );
}
