//! Every transition of the run session, driven natively: each test feeds
//! the machine the events the browser would (with the times they happen)
//! and checks the actions it returns.

use overlap_core::{Scenario, ScenarioInput};
use overlap_session::machine::{
    Action, Event, FiguresShown, Session, Worker, FAST_RUN_MS, RUN_BUDGET_MS, SETTLE_MS,
    TIMELINE_BUDGET_MS, WORKER_MEMORY_LIMIT_BYTES,
};
use overlap_session::{RunCounts, WorkerRequest};

/// The default preset with its global batch set: scenarios whose all-off
/// baselines differ from one another.
fn scenario(global_batch: u32) -> (ScenarioInput, Scenario) {
    let mut input = overlap_core::presets::default_preset().input();
    input.workload.global_batch = Some(global_batch);
    let scenario = input.resolve().expect("the default preset resolves");
    (input, scenario)
}

fn request(s: &mut Session, now_ms: f64, global_batch: u32) -> Vec<Action> {
    let (input, scenario) = scenario(global_batch);
    s.handle(
        now_ms,
        Event::Request {
            input: Box::new(input),
            scenario: Box::new(scenario),
            made_at: 1e12 + now_ms,
        },
    )
}

/// The generations posted, in order.
fn posted(actions: &[Action]) -> Vec<u64> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Post(request) => match request.as_ref() {
                WorkerRequest::Simulate { gen, .. } => Some(*gen),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn alerts(actions: &[Action]) -> Vec<(String, bool)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Alert(a) => Some((a.cause.clone(), a.report_link)),
            _ => None,
        })
        .collect()
}

fn has(actions: &[Action], wanted: &Action) -> bool {
    actions.contains(wanted)
}

/// A session with a ready worker, run 1 posted at t = 0.
fn running_first() -> Session {
    let mut s = Session::default();
    assert_eq!(request(&mut s, 0.0, 16), vec![Action::Spawn]);
    assert_eq!(s.worker(), Worker::Starting);
    let ready = s.handle(0.0, Event::Ready);
    assert_eq!(posted(&ready), vec![1]);
    assert!(has(
        &ready,
        &Action::ArmBudget {
            gen: 1,
            ms: RUN_BUDGET_MS
        }
    ));
    s
}

/// Run 1's result came at `at_ms` and took `sim_ms`; it is shown.
fn finish(s: &mut Session, gen: u64, at_ms: f64, sim_ms: f64) {
    let got = s.handle(
        at_ms,
        Event::Result {
            gen,
            sim_ms,
            memory_bytes: 1e6,
        },
    );
    assert!(
        got.iter()
            .any(|a| matches!(a, Action::Decode { gen: g, figures: None, .. } if *g == gen)),
        "{got:?}"
    );
    assert_eq!(
        s.handle(at_ms + 5.0, Event::Decoded(gen)),
        vec![Action::Show { gen }]
    );
    assert!(!s.busy());
}

#[test]
fn a_request_starts_a_worker_posts_on_ready_and_shows_its_result() {
    let mut s = running_first();
    assert!(s.busy() && !s.figures_ahead());
    let got = s.handle(
        30.0,
        Event::Result {
            gen: 1,
            sim_ms: 25.0,
            memory_bytes: 1e6,
        },
    );
    assert!(matches!(got[0], Action::NoteWait { .. }), "{got:?}");
    assert!(matches!(
        got[1],
        Action::Decode {
            gen: 1,
            figures: None,
            ..
        }
    ));
    assert!(s.busy(), "busy while its timeline is decoded");
    assert_eq!(
        s.handle(40.0, Event::Decoded(1)),
        vec![Action::Show { gen: 1 }]
    );
    assert!(!s.busy());
}

#[test]
fn supersede_a_fast_run_is_let_finish_and_its_result_dropped() {
    let mut s = running_first();
    // Within FAST_RUN_MS * 4 of its start, the last run fast (none yet).
    let got = request(&mut s, 100.0, 32);
    assert!(
        posted(&got).is_empty() && !has(&got, &Action::Terminate),
        "{got:?}"
    );
    // Run 1 finishes: overtaken, it is not decoded; run 2 goes at once.
    let got = s.handle(
        150.0,
        Event::Result {
            gen: 1,
            sim_ms: 30.0,
            memory_bytes: 1e6,
        },
    );
    assert!(
        !got.iter().any(|a| matches!(a, Action::Decode { .. })),
        "{got:?}"
    );
    assert_eq!(posted(&got), vec![2]);
}

#[test]
fn supersede_a_slow_run_is_stopped_and_a_new_worker_started() {
    let mut s = running_first();
    // Nothing known of its speed, but it has run over FAST_RUN_MS * 4.
    let got = request(&mut s, FAST_RUN_MS * 4.0 + 1.0, 32);
    assert_eq!(got, vec![Action::Terminate, Action::Spawn]);
    assert!(
        s.runs_json().contains(r#""stopped":1"#),
        "{}",
        s.runs_json()
    );
    // The new worker gets the newest request only.
    assert_eq!(posted(&s.handle(400.0, Event::Ready)), vec![2]);
    // The stopped run's late budget timer finds nothing to stop.
    assert!(s
        .handle(RUN_BUDGET_MS as f64, Event::BudgetSpent(1))
        .is_empty());
}

#[test]
fn coalesced_input_after_a_slow_run_sends_only_the_newest_once_it_rests() {
    let mut s = running_first();
    finish(&mut s, 1, 1000.0, 900.0);
    // A slider dragged: three inputs within SETTLE_MS * 2 of the result.
    for (i, t) in [1010.0, 1050.0, 1090.0].into_iter().enumerate() {
        let got = request(&mut s, t, 20 + i as u32 * 4);
        assert_eq!(got, vec![Action::ArmSettle { ms: SETTLE_MS }]);
        assert!(s.busy());
    }
    let got = s.handle(1090.0 + f64::from(SETTLE_MS), Event::SettleElapsed);
    assert_eq!(posted(&got), vec![4], "only the newest of 2, 3, 4");
}

#[test]
fn coalesced_requests_while_the_worker_starts_post_only_the_newest() {
    let mut s = Session::default();
    assert_eq!(request(&mut s, 0.0, 16), vec![Action::Spawn]);
    assert!(request(&mut s, 5.0, 20).is_empty());
    assert!(request(&mut s, 9.0, 24).is_empty());
    assert_eq!(posted(&s.handle(50.0, Event::Ready)), vec![3]);
    // A late result of an earlier number is dropped.
    let got = s.handle(
        60.0,
        Event::Result {
            gen: 2,
            sim_ms: 5.0,
            memory_bytes: 0.0,
        },
    );
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn budget_overrun_stops_the_run_and_says_so() {
    let mut s = running_first();
    let got = s.handle(f64::from(RUN_BUDGET_MS), Event::BudgetSpent(1));
    assert_eq!(got[0], Action::Terminate);
    let said = alerts(&got);
    assert_eq!(said.len(), 1);
    assert!(said[0].0.contains("longer than 15 s"), "{said:?}");
    assert!(said[0].0.contains("overlap-lab simulate"));
    assert!(!said[0].1, "no report link: not a bug");
    assert!(!s.busy());
    // A late result of the stopped run is not shown.
    let got = s.handle(
        16_000.0,
        Event::Result {
            gen: 1,
            sim_ms: 16_000.0,
            memory_bytes: 0.0,
        },
    );
    assert!(!got.iter().any(|a| matches!(a, Action::Decode { .. })));
}

#[test]
fn budget_overrun_after_the_figures_names_the_timeline() {
    let mut s = running_first();
    s.handle(
        2000.0,
        Event::Figures {
            gen: 1,
            figures_ms: 2000.0,
            cached: false,
            keep_before: true,
        },
    );
    let got = s.handle(
        2000.0 + f64::from(TIMELINE_BUDGET_MS),
        Event::BudgetSpent(1),
    );
    let said = alerts(&got);
    assert!(
        said[0].0.contains("timeline took longer than 30 s"),
        "{said:?}"
    );
    assert!(said[0].0.contains("The figures are this scenario's"));
}

#[test]
fn figures_first_are_shown_and_give_the_timeline_its_own_budget() {
    let mut s = running_first();
    let got = s.handle(
        400.0,
        Event::Figures {
            gen: 1,
            figures_ms: 380.0,
            cached: false,
            keep_before: true,
        },
    );
    assert!(matches!(got[0], Action::NoteWait { .. }));
    assert_eq!(
        got[1],
        Action::ArmBudget {
            gen: 1,
            ms: TIMELINE_BUDGET_MS
        }
    );
    assert!(matches!(got[2], Action::ShowFigures { gen: 1, .. }));
    assert!(s.figures_ahead() && s.busy());
    let got = s.handle(
        900.0,
        Event::Result {
            gen: 1,
            sim_ms: 880.0,
            memory_bytes: 1e6,
        },
    );
    assert!(
        got.iter().any(|a| matches!(
            a,
            Action::Decode {
                gen: 1,
                figures: Some(FiguresShown { keep_before: true }),
                ..
            }
        )),
        "{got:?}"
    );
    assert!(
        !got.iter().any(|a| matches!(a, Action::NoteWait { .. })),
        "the wait was noted with the figures"
    );
}

#[test]
fn a_newer_request_while_quick_figures_are_made_is_posted_to_the_same_worker() {
    let mut s = running_first();
    s.handle(
        300.0,
        Event::Figures {
            gen: 1,
            figures_ms: 300.0,
            cached: false,
            keep_before: false,
        },
    );
    finish_figures_first(&mut s, 1, 800.0);
    // Run 2 on its figures; run 3 asked within FAST_FIGURES_MS * 2.
    assert_eq!(posted(&request(&mut s, 2000.0, 32)), vec![2]);
    let got = request(&mut s, 2300.0, 48);
    assert_eq!(got, vec![Action::ArmSettle { ms: SETTLE_MS }]);
    let got = s.handle(2300.0 + f64::from(SETTLE_MS), Event::SettleElapsed);
    assert_eq!(posted(&got), vec![3]);
    assert!(!has(&got, &Action::Terminate), "{got:?}");
    // Run 2's figures, late: overtaken, not shown.
    let got = s.handle(
        2500.0,
        Event::Figures {
            gen: 2,
            figures_ms: 300.0,
            cached: false,
            keep_before: false,
        },
    );
    assert!(got.is_empty(), "{got:?}");
}

fn finish_figures_first(s: &mut Session, gen: u64, at_ms: f64) {
    let got = s.handle(
        at_ms,
        Event::Result {
            gen,
            sim_ms: at_ms,
            memory_bytes: 1e6,
        },
    );
    assert!(got.iter().any(|a| matches!(a, Action::Decode { .. })));
    assert_eq!(
        s.handle(at_ms, Event::Decoded(gen)),
        vec![Action::Show { gen }]
    );
}

#[test]
fn crash_retires_the_worker_alerts_with_the_link_and_the_next_request_starts_anew() {
    let mut s = running_first();
    let got = s.handle(50.0, Event::Crashed("memory access out of bounds".into()));
    assert_eq!(got[0], Action::Terminate);
    let said = alerts(&got);
    assert!(said[0].0.contains("memory access out of bounds") && said[0].1);
    assert!(!s.busy() && s.worker() == Worker::Absent);
    assert_eq!(request(&mut s, 5000.0, 32), vec![Action::Spawn]);
}

#[test]
fn panic_is_reported_once_though_the_trap_follows() {
    let mut s = running_first();
    let got = s.handle(50.0, Event::Panicked("index out of range".into()));
    assert_eq!(got[0], Action::Terminate);
    let said = alerts(&got);
    assert!(said[0].0.contains("internal error (index out of range)"));
    assert!(said[0].0.contains("This is a bug") && said[0].1);
    // The trap that follows the panic says nothing more.
    assert!(alerts(&s.handle(51.0, Event::Crashed("unreachable".into()))).is_empty());
    // A later crash of a new worker is reported again.
    request(&mut s, 5000.0, 32);
    s.handle(5010.0, Event::Ready);
    assert_eq!(
        alerts(&s.handle(5020.0, Event::Crashed("x".into()))).len(),
        1
    );
}

#[test]
fn stop_cancels_the_run_and_a_late_result_is_dropped() {
    let mut s = running_first();
    let got = s.handle(20.0, Event::Stop);
    assert_eq!(got[0], Action::Terminate);
    let said = alerts(&got);
    assert!(said[0]
        .0
        .starts_with("Cancelled: you stopped the simulation. The timeline and figures"));
    assert!(!s.busy());
    // Stop when nothing runs says nothing.
    assert!(s.handle(30.0, Event::Stop).is_empty());
}

#[test]
fn stop_after_the_figures_keeps_them_and_says_so() {
    let mut s = running_first();
    s.handle(
        300.0,
        Event::Figures {
            gen: 1,
            figures_ms: 300.0,
            cached: false,
            keep_before: false,
        },
    );
    let said = alerts(&s.handle(400.0, Event::Stop));
    assert!(
        said[0].0.contains("The figures are this scenario's"),
        "{said:?}"
    );
}

#[test]
fn stop_while_settling_drops_the_waiting_request_and_its_timer() {
    let mut s = running_first();
    finish(&mut s, 1, 1000.0, 900.0);
    request(&mut s, 1010.0, 32);
    let got = s.handle(1020.0, Event::Stop);
    assert!(has(&got, &Action::CancelSettle), "{got:?}");
    assert_eq!(alerts(&got).len(), 1);
    assert!(posted(&s.handle(1200.0, Event::SettleElapsed)).is_empty());
}

#[test]
fn invalid_input_stops_a_slow_run_and_lets_a_fast_one_finish() {
    let mut s = running_first();
    let got = s.handle(10.0, Event::Invalid);
    assert!(got.is_empty(), "a young run of unknown speed: {got:?}");
    // Its result is no longer the newest: not shown.
    let got = s.handle(
        20.0,
        Event::Result {
            gen: 1,
            sim_ms: 10.0,
            memory_bytes: 0.0,
        },
    );
    assert!(
        !got.iter().any(|a| matches!(a, Action::Decode { .. })),
        "{got:?}"
    );
    request(&mut s, 1000.0, 32);
    let got = s.handle(FAST_RUN_MS + 1001.0, Event::Invalid);
    assert_eq!(got, vec![Action::Terminate]);
    assert!(!s.busy());
}

#[test]
fn a_newer_request_drops_the_timeline_being_decoded() {
    let mut s = running_first();
    s.handle(
        30.0,
        Event::Result {
            gen: 1,
            sim_ms: 25.0,
            memory_bytes: 0.0,
        },
    );
    let got = request(&mut s, 35.0, 32);
    assert_eq!(got[0], Action::DropDecoding);
    assert_eq!(posted(&got), vec![2]);
    assert!(s.handle(40.0, Event::Decoded(1)).is_empty());
}

#[test]
fn a_decode_failure_is_an_alert_with_the_link() {
    let mut s = running_first();
    s.handle(
        30.0,
        Event::Result {
            gen: 1,
            sim_ms: 25.0,
            memory_bytes: 0.0,
        },
    );
    let got = s.handle(
        31.0,
        Event::DecodeFailed {
            gen: 1,
            why: "The simulation's timeline could not be read: cut.".into(),
        },
    );
    assert_eq!(
        alerts(&got),
        vec![(
            "The simulation's timeline could not be read: cut.".to_string(),
            true
        )]
    );
    assert!(!s.busy());
}

#[test]
fn a_bloated_worker_is_retired_before_a_run_with_another_baseline() {
    let mut s = running_first();
    let got = s.handle(
        30.0,
        Event::Result {
            gen: 1,
            sim_ms: 25.0,
            memory_bytes: WORKER_MEMORY_LIMIT_BYTES + 1.0,
        },
    );
    s.handle(35.0, Event::Decoded(1));
    assert!(!got.contains(&Action::Terminate));
    // The same scenario with an overlap switch flipped: the same baseline.
    let (mut input, _) = scenario(16);
    input.overlap.tp = Some(!input.overlap.tp.unwrap_or(false));
    let same_baseline = input.resolve().unwrap();
    let got = s.handle(
        1000.0,
        Event::Request {
            input: Box::new(input),
            scenario: Box::new(same_baseline),
            made_at: 0.0,
        },
    );
    assert_eq!(posted(&got), vec![2]);
    s.handle(
        1030.0,
        Event::Result {
            gen: 2,
            sim_ms: 25.0,
            memory_bytes: WORKER_MEMORY_LIMIT_BYTES + 1.0,
        },
    );
    s.handle(1035.0, Event::Decoded(2));
    // Another baseline: a new worker, small again.
    assert_eq!(
        request(&mut s, 2000.0, 32),
        vec![Action::Terminate, Action::Spawn]
    );
}

#[test]
fn no_timeline_says_why_in_its_place() {
    let mut s = running_first();
    s.handle(
        300.0,
        Event::Figures {
            gen: 1,
            figures_ms: 300.0,
            cached: false,
            keep_before: false,
        },
    );
    let refusal = |gen| Event::NoTimeline {
        gen,
        field: "workload.global_batch".into(),
        message: "lower it to 3414 to draw it".into(),
    };
    let got = s.handle(301.0, refusal(1));
    assert_eq!(
        got,
        vec![Action::TimelineRefused {
            field: "workload.global_batch".into(),
            message: "lower it to 3414 to draw it".into()
        }]
    );
    assert!(!s.busy());
    // An overtaken run's statement is not shown.
    request(&mut s, 1000.0, 32);
    s.handle(1010.0, Event::Ready);
    // Run 2 is on its figures, which came quickly last time: run 3 goes at once.
    assert_eq!(posted(&request(&mut s, 1020.0, 48)), vec![3]);
    let got = s.handle(1030.0, refusal(2));
    assert!(
        !got.iter()
            .any(|a| matches!(a, Action::TimelineRefused { .. })),
        "{got:?}"
    );
}

#[test]
fn a_refusal_names_its_field_beside_the_control_or_alerts() {
    let refused = |gen| Event::Refused {
        gen,
        field: Some("workload.global_batch".into()),
        message: "too large".into(),
    };
    // The scenario the page opened with, before anything was shown: the
    // page opens the default scenario with the message.
    let mut s = running_first();
    assert_eq!(
        s.handle(50.0, refused(1)),
        vec![Action::FirstRunRefused {
            field: "workload.global_batch".into(),
            message: "too large".into()
        }]
    );
    // Once a run was shown, a refusal is an edit's: beside its control.
    let mut s = running_first();
    s.handle(
        300.0,
        Event::Figures {
            gen: 1,
            figures_ms: 300.0,
            cached: false,
            keep_before: false,
        },
    );
    request(&mut s, 400.0, 32);
    s.handle(
        500.0,
        Event::Result {
            gen: 1,
            sim_ms: 1.0,
            memory_bytes: 0.0,
        },
    );
    let got = s.handle(600.0, refused(2));
    assert!(
        got.contains(&Action::FieldRefused {
            field: "workload.global_batch".into(),
            message: "too large".into()
        }),
        "{got:?}"
    );
    request(&mut s, 1000.0, 32);
    let got = s.handle(
        1010.0,
        Event::Refused {
            gen: 3,
            field: None,
            message: "no".into(),
        },
    );
    assert_eq!(
        alerts(&got),
        vec![(
            "The simulator refused this scenario: no. Please report this link:".to_string(),
            true
        )]
    );
}

#[test]
fn a_worker_that_cannot_start_or_take_a_request_is_an_alert() {
    let mut s = Session::default();
    request(&mut s, 0.0, 16);
    let got = s.handle(1.0, Event::SpawnFailed("no Worker".into()));
    assert!(alerts(&got)[0].0.contains("could not start: no Worker"));
    assert!(!s.busy() && s.worker() == Worker::Absent);
    let mut s = running_first();
    let got = s.handle(1.0, Event::PostFailed);
    assert_eq!(got[0], Action::Terminate);
    assert!(alerts(&got)[0].0.contains("did not accept"));
    assert!(!s.busy());
}

#[test]
fn the_run_counts_add_retired_workers_and_stopped_runs() {
    let mut s = running_first();
    let five = RunCounts {
        started: 5,
        timelines: 4,
        ..RunCounts::ZERO
    };
    assert!(matches!(
        &s.handle(1.0, Event::Runs(five))[..],
        [Action::Runs(_)]
    ));
    s.handle(2.0, Event::Stop);
    request(&mut s, 3.0, 32);
    s.handle(4.0, Event::Ready);
    s.handle(
        5.0,
        Event::Runs(RunCounts {
            started: 1,
            ..RunCounts::ZERO
        }),
    );
    let json: serde_json::Value = serde_json::from_str(&s.runs_json()).unwrap();
    assert_eq!(json["started"], 6);
    assert_eq!(json["timelines"], 4);
    assert_eq!(json["stopped"], 1);
}
