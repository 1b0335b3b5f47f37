//! The three jobs the page runs in workers (the simulation, the trace
//! import, the sweep view's curves), driven through the one `Machine`
//! trait as the app's `client/job.rs` drives them: every reply goes
//! through `Machine::heard`, every event through `Machine::handle`, and
//! a fake worker answers what is posted.

use std::collections::VecDeque;

use overlap_core::scenario::CollectiveOp;
use overlap_core::sweep::{Candidate, Sweep};
use overlap_session::import::{ImportAction, ImportEvent};
use overlap_session::machine::{Action, Event};
use overlap_session::{
    Heard, ImportSession, Machine, PageNow, Session, SweepAction, SweepEvent, SweepSession,
    TraceFile, WorkerReply, WorkerRequest,
};
use serde_json::Value;

/// What the test reads of an action, whichever machine returned it.
trait Performed {
    /// The worker is started (it answers `Ready`).
    fn spawns(&self) -> bool;
    /// The worker is terminated.
    fn terminates(&self) -> bool;
    /// A request is posted.
    fn posted(&self) -> Option<&WorkerRequest>;
    /// A sentence is shown: an alert, or a problem beside the curves.
    fn says(&self) -> Option<&str>;
}

impl Performed for Action {
    fn spawns(&self) -> bool {
        *self == Action::Spawn
    }
    fn terminates(&self) -> bool {
        *self == Action::Terminate
    }
    fn posted(&self) -> Option<&WorkerRequest> {
        match self {
            Action::Post(r) => Some(r),
            _ => None,
        }
    }
    fn says(&self) -> Option<&str> {
        match self {
            Action::Alert(a) => Some(&a.cause),
            _ => None,
        }
    }
}

impl Performed for ImportAction {
    fn spawns(&self) -> bool {
        *self == ImportAction::Spawn
    }
    fn terminates(&self) -> bool {
        *self == ImportAction::Terminate
    }
    fn posted(&self) -> Option<&WorkerRequest> {
        match self {
            ImportAction::Post(r) => Some(r),
            _ => None,
        }
    }
    fn says(&self) -> Option<&str> {
        match self {
            ImportAction::Alert(a) => Some(a),
            _ => None,
        }
    }
}

impl Performed for SweepAction {
    fn spawns(&self) -> bool {
        // The curves' worker starts with the first request posted.
        false
    }
    fn terminates(&self) -> bool {
        *self == SweepAction::Terminate
    }
    fn posted(&self) -> Option<&WorkerRequest> {
        match self {
            SweepAction::Post(r) => Some(r),
            _ => None,
        }
    }
    fn says(&self) -> Option<&str> {
        match self {
            SweepAction::Problem(p) => Some(p),
            _ => None,
        }
    }
}

/// Feeds `first`, then every reply the fake `worker` gives to what is
/// posted (and `Ready` to a worker started), in order, until nothing more
/// comes: every action returned on the way.
fn drive<M: Machine>(
    m: &mut M,
    first: M::Event,
    context: impl Fn() -> M::Context,
    worker: impl Fn(&WorkerRequest) -> Vec<WorkerReply>,
) -> Vec<M::Action>
where
    M::Action: Performed,
{
    let mut now = 0.0;
    let mut done = Vec::new();
    let mut todo: VecDeque<M::Action> = m.handle(now, first).into();
    let mut replies = VecDeque::new();
    loop {
        while let Some(a) = todo.pop_front() {
            if a.spawns() {
                replies.push_back(WorkerReply::Ready);
            }
            if let Some(r) = a.posted() {
                replies.extend(worker(r));
            }
            done.push(a);
        }
        let Some(reply) = replies.pop_front() else {
            return done;
        };
        now += 1.0;
        for e in M::heard(Heard::Reply(&reply), context()) {
            todo.extend(m.handle(now, e));
        }
    }
}

/// What a panicking worker does to `m` once `first` is under way.
fn after_a_panic<M: Machine>(
    m: &mut M,
    first: M::Event,
    context: impl Fn() -> M::Context,
) -> Vec<M::Action>
where
    M::Action: Performed,
{
    // The worker starts and takes the request, and answers nothing.
    drive(m, first, &context, |_| Vec::new());
    let panic = WorkerReply::Panic {
        message: "boom".to_string(),
    };
    M::heard(Heard::Reply(&panic), context())
        .into_iter()
        .flat_map(|e| m.handle(10.0, e))
        .collect()
}

fn input() -> overlap_core::ScenarioInput {
    overlap_core::presets::find("didactic").unwrap().input()
}

fn simulate() -> Event {
    let input = input();
    let scenario = input.resolve().unwrap();
    Event::Request {
        input: Box::new(input),
        scenario: Box::new(scenario),
        made_at: 1e12,
    }
}

fn open() -> ImportEvent {
    ImportEvent::Open(vec![TraceFile {
        name: "rank0.json".to_string(),
        bytes: 1_000_000,
    }])
}

fn sweep() -> SweepEvent {
    SweepEvent::Sweep {
        input: Box::new(input()),
        field: "overlap.tp_chunks".to_string(),
        values: [1, 2, 4].into_iter().map(Value::from).collect(),
    }
}

/// The fake worker of every job: it answers as `src/serve/` does.
fn worker(request: &WorkerRequest) -> Vec<WorkerReply> {
    match request {
        WorkerRequest::Simulate { gen, input } => {
            let scenario = input.resolve().unwrap();
            let report = overlap_core::simulate_report(&scenario).unwrap().report;
            vec![WorkerReply::Result {
                gen: *gen,
                report,
                sim_ms: 5.0,
                timeline_ms: 4.0,
                encode_ms: 1.0,
                taken_up_at: 1e12,
                posted_at: 1e12,
                memory_bytes: 1e6,
                runs: Default::default(),
            }]
        }
        WorkerRequest::Import { gen, files, .. } => vec![
            WorkerReply::ImportProgress {
                gen: *gen,
                read_bytes: files[0].bytes / 2,
                total_bytes: files[0].bytes,
            },
            WorkerReply::ImportRefused {
                gen: *gen,
                message: "rank0.json: not a profiler trace".to_string(),
            },
        ],
        WorkerRequest::SweepPoint {
            gen,
            input,
            field,
            value,
            index,
        } => {
            let field = overlap_core::input::fields::find(field).unwrap();
            let row = Sweep::new(input.clone(), field).point(&Candidate::Value(value.clone()));
            vec![WorkerReply::SweepPoint {
                gen: *gen,
                index: *index,
                row,
                sim_ms: 1.0,
            }]
        }
        WorkerRequest::BusCurve {
            gen,
            hardware,
            collective,
        } => vec![WorkerReply::BusCurve {
            gen: *gen,
            collective: *collective,
            points: overlap_core::sweep::bus_curve(hardware, *collective),
        }],
        other => panic!("no job posts {other:?}"),
    }
}

#[test]
fn every_job_runs_to_its_end_through_the_trait() {
    // The simulation: started, posted once ready, its timeline decoded.
    let mut s = Session::default();
    let actions = drive(&mut s, simulate(), PageNow::default, worker);
    assert_eq!(actions.iter().filter(|a| a.spawns()).count(), 1);
    assert_eq!(actions.iter().filter_map(Performed::posted).count(), 1);
    assert!(
        actions
            .iter()
            .any(|a| matches!(a, Action::Decode { gen: 1, .. })),
        "{actions:?}"
    );
    assert!(Machine::busy(&s), "decoding is still under way");
    s.handle(20.0, Event::Decoded(1));
    assert!(!Machine::busy(&s));

    // The import: progress, then the reader's refusal as one alert.
    let mut i = ImportSession::default();
    let actions = drive(&mut i, open(), || (), worker);
    assert!(actions.iter().any(|a| matches!(
        a,
        ImportAction::Progress { fraction, .. } if *fraction == 0.5
    )));
    let said: Vec<&str> = actions.iter().filter_map(Performed::says).collect();
    assert_eq!(
        said,
        ["The trace could not be opened: rank0.json: not a profiler trace"]
    );
    assert!(actions.iter().any(Performed::terminates));
    assert!(!Machine::busy(&i));

    // The sweep: every point, then the bus curves, from one worker.
    let mut w = SweepSession::default();
    let actions = drive(&mut w, sweep(), || (), worker);
    assert_eq!(actions.iter().filter_map(Performed::posted).count(), 3);
    // No start of its own: the first request starts the worker.
    assert!(actions[0].posted().is_some(), "{actions:?}");
    let run = w.run().unwrap();
    assert!(run.done() && run.arrived() == 3);
    assert!(!Machine::busy(&w));
    let hardware = Box::new(input().hardware);
    let actions = drive(&mut w, SweepEvent::Bus { hardware }, || (), worker);
    assert_eq!(
        actions.iter().filter_map(Performed::posted).count(),
        CollectiveOp::ALL.len()
    );
    assert!(w.bus().iter().all(Option::is_some));
    assert!(!Machine::busy(&w));
}

#[test]
fn a_worker_that_panics_is_retired_and_said_so_by_every_machine() {
    let simulate = after_a_panic(&mut Session::default(), simulate(), PageNow::default);
    let import = after_a_panic(&mut ImportSession::default(), open(), || ());
    let sweep = after_a_panic(&mut SweepSession::default(), sweep(), || ());
    let said = |actions: &[&dyn Performed]| -> (bool, Vec<String>) {
        (
            actions.iter().any(|a| a.terminates()),
            actions
                .iter()
                .filter_map(|a| a.says().map(str::to_string))
                .collect(),
        )
    };
    for (name, (terminated, sentences)) in [
        (
            "simulate",
            said(
                &simulate
                    .iter()
                    .map(|a| a as &dyn Performed)
                    .collect::<Vec<_>>(),
            ),
        ),
        (
            "import",
            said(
                &import
                    .iter()
                    .map(|a| a as &dyn Performed)
                    .collect::<Vec<_>>(),
            ),
        ),
        (
            "sweep",
            said(
                &sweep
                    .iter()
                    .map(|a| a as &dyn Performed)
                    .collect::<Vec<_>>(),
            ),
        ),
    ] {
        assert!(terminated, "{name}: the panicked worker is not retired");
        assert_eq!(sentences.len(), 1, "{name}: {sentences:?}");
        assert!(sentences[0].contains("boom"), "{name}: {sentences:?}");
    }
}

#[test]
fn each_reply_is_the_business_of_the_jobs_that_asked_for_it() {
    let report = overlap_core::simulate_report(&input().resolve().unwrap())
        .unwrap()
        .report;
    let replies = [
        WorkerReply::Figures {
            gen: 1,
            report,
            sim_ms: 1.0,
            cached: false,
            taken_up_at: 0.0,
            resolve_ms: 0.0,
            posted_at: 0.0,
            runs: Default::default(),
        },
        WorkerReply::ImportProgress {
            gen: 1,
            read_bytes: 1,
            total_bytes: 2,
        },
        WorkerReply::SweepPoint {
            gen: 1,
            index: 0,
            row: overlap_core::sweep::Row::Refused {
                value: Value::from(0),
                error: "no".to_string(),
            },
            sim_ms: 1.0,
        },
        WorkerReply::PartsRan { gen: 1, ran: None },
        WorkerReply::Ready,
        WorkerReply::Crashed {
            message: "gone".to_string(),
        },
    ];
    let heard_by = |reply: &WorkerReply| -> Vec<&str> {
        let r = Heard::Reply(reply);
        [
            (
                "simulate",
                !Session::heard(r, PageNow::default()).is_empty(),
            ),
            ("import", !ImportSession::heard(r, ()).is_empty()),
            ("sweep", !SweepSession::heard(r, ()).is_empty()),
        ]
        .into_iter()
        .filter_map(|(name, heard)| heard.then_some(name))
        .collect()
    };
    let who: Vec<Vec<&str>> = replies.iter().map(heard_by).collect();
    assert_eq!(
        who,
        [
            vec!["simulate"],
            vec!["import"],
            vec!["sweep"],
            // The helper's answer is the simulation worker's own business.
            vec![],
            // The sweep's requests wait for `Ready` in the page's queue.
            vec!["simulate", "import"],
            vec!["simulate", "import", "sweep"],
        ]
    );
    // The page's own failures reach every machine.
    for failure in [Heard::SpawnFailed("refused"), Heard::PostFailed] {
        assert_eq!(Session::heard(failure, PageNow::default()).len(), 1);
        assert_eq!(ImportSession::heard(failure, ()).len(), 1);
        assert_eq!(SweepSession::heard(failure, ()).len(), 1);
    }
    // The figures carry what the page knew as they came.
    let figures = &replies[0];
    let keep = PageNow { keep_before: true };
    assert!(matches!(
        Session::heard(Heard::Reply(figures), keep)[..],
        [
            Event::Runs(_),
            Event::Figures {
                keep_before: true,
                ..
            }
        ]
    ));
}
