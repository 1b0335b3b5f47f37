//! Every transition of the page's trace import, driven natively.

use overlap_session::import::{ImportAction, ImportEvent, ImportSession, IMPORT_BUDGET_MS};
use overlap_session::messages::{from_json, to_json};
use overlap_session::{TraceFile, WorkerReply, WorkerRequest};
use overlap_trace::{MAX_FILES, MAX_TRACE_BYTES};

fn file(name: &str, bytes: u64) -> TraceFile {
    TraceFile {
        name: name.to_string(),
        bytes,
    }
}

fn alerts(actions: &[ImportAction]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match a {
            ImportAction::Alert(a) => Some(a.clone()),
            _ => None,
        })
        .collect()
}

/// Opens one file and gets it posted: the import's number.
fn started(s: &mut ImportSession, bytes: u64) -> u64 {
    let a = s.handle(ImportEvent::Open(vec![file("rank0.json.gz", bytes)]));
    assert_eq!(a[0], ImportAction::Spawn);
    let gen = match a[1] {
        ImportAction::ArmBudget { gen, ms } => {
            assert_eq!(ms, IMPORT_BUDGET_MS);
            gen
        }
        ref other => panic!("{other:?}"),
    };
    assert!(matches!(a[2], ImportAction::Progress { fraction, .. } if fraction == 0.0));
    let a = s.handle(ImportEvent::Ready);
    assert_eq!(
        a,
        vec![ImportAction::Post(Box::new(WorkerRequest::Import {
            gen,
            files: vec![file("rank0.json.gz", bytes)],
            rules: String::new(),
        }))]
    );
    gen
}

#[test]
fn files_are_posted_once_the_worker_is_ready_and_shown_when_read() {
    let mut s = ImportSession::default();
    let gen = started(&mut s, 1_000_000);
    assert!(s.busy());
    // A second Ready posts nothing more.
    assert!(s.handle(ImportEvent::Ready).is_empty());
    let a = s.handle(ImportEvent::Progress {
        gen,
        read_bytes: 500_000,
        total_bytes: 1_000_000,
    });
    assert_eq!(
        a,
        vec![ImportAction::Progress {
            fraction: 0.5,
            label: "Reading the trace: 0 of 1 MB".to_string()
        }]
    );
    // Less than a step further: no repaint.
    assert!(s
        .handle(ImportEvent::Progress {
            gen,
            read_bytes: 505_000,
            total_bytes: 1_000_000,
        })
        .is_empty());
    let a = s.handle(ImportEvent::Imported { gen });
    assert_eq!(
        a,
        vec![
            ImportAction::Terminate,
            ImportAction::CancelBudget,
            ImportAction::DoneProgress,
            ImportAction::Show { gen }
        ]
    );
    assert!(!s.busy());
    // A late reply of the same import changes nothing.
    assert!(s.handle(ImportEvent::Imported { gen }).is_empty());
}

#[test]
fn the_newest_import_wins_and_an_older_reply_is_dropped() {
    let mut s = ImportSession::default();
    let first = started(&mut s, 10);
    let a = s.handle(ImportEvent::Open(vec![file("b.json", 20)]));
    // The first import's worker goes before the new one starts.
    assert_eq!(
        &a[..4],
        &[
            ImportAction::Terminate,
            ImportAction::CancelBudget,
            ImportAction::DoneProgress,
            ImportAction::Spawn
        ]
    );
    assert!(s.handle(ImportEvent::Imported { gen: first }).is_empty());
    assert!(s
        .handle(ImportEvent::Refused {
            gen: first,
            message: "x".to_string()
        })
        .is_empty());
    assert!(s.handle(ImportEvent::BudgetSpent(first)).is_empty());
    let a = s.handle(ImportEvent::Ready);
    assert!(
        matches!(&a[0], ImportAction::Post(r) if matches!(r.as_ref(), WorkerRequest::Import { gen, .. } if *gen == first + 1))
    );
    assert!(s.is_latest(first + 1));
}

#[test]
fn the_readers_refusal_becomes_one_alert_and_the_worker_goes() {
    let mut s = ImportSession::default();
    let gen = started(&mut s, 10);
    let why = "rank0.json.gz ends early (after 812 bytes inflated): the trace is cut short; copy it again whole";
    let a = s.handle(ImportEvent::Refused {
        gen,
        message: why.to_string(),
    });
    assert_eq!(a[0], ImportAction::Terminate);
    assert_eq!(
        alerts(&a),
        vec![format!("The trace could not be opened: {why}")]
    );
    assert!(!s.busy());
}

#[test]
fn what_is_known_before_reading_is_refused_without_a_worker() {
    let mut s = ImportSession::default();
    let a = s.handle(ImportEvent::Open(vec![]));
    assert_eq!(
        alerts(&a),
        vec!["The trace could not be opened: no file was given; pick or drop a .json or .json.gz trace"]
    );
    assert!(!a.contains(&ImportAction::Spawn));
    let a = s.handle(ImportEvent::Open(vec![
        file("small.json", 5),
        file("huge.json", 2 * MAX_TRACE_BYTES),
    ]));
    assert_eq!(
        alerts(&a),
        vec!["The trace could not be opened: huge.json is 2 GiB: over the 1 GiB a trace file may hold; profile fewer steps (torch.profiler.schedule with active=1)"]
    );
    assert!(!a.contains(&ImportAction::Spawn));
    let many: Vec<_> = (0..=MAX_FILES)
        .map(|i| file(&format!("{i}.json"), 1))
        .collect();
    let a = s.handle(ImportEvent::Open(many));
    assert!(alerts(&a)[0].contains("4097 files were given, over the import's limit of 4096"));
    assert!(!s.busy());
}

#[test]
fn a_stuck_import_is_stopped_by_its_budget() {
    let mut s = ImportSession::default();
    let gen = started(&mut s, 10);
    let a = s.handle(ImportEvent::BudgetSpent(gen));
    assert_eq!(a[0], ImportAction::Terminate);
    assert_eq!(
        alerts(&a),
        vec!["Stopped: reading the trace took longer than 90 s, the page's budget for it. `overlap-lab import` reads it from the command line without one."]
    );
}

#[test]
fn a_crash_or_panic_while_reading_is_alerted_once() {
    let mut s = ImportSession::default();
    started(&mut s, 10);
    let a = s.handle(ImportEvent::Panicked("index out of bounds".to_string()));
    assert_eq!(a[0], ImportAction::Terminate);
    assert!(alerts(&a)[0].contains("internal error (index out of bounds)"));
    // The trap and `Crashed` that follow a panic say nothing more.
    assert!(s
        .handle(ImportEvent::Crashed("unreachable".to_string()))
        .is_empty());
    started(&mut s, 10);
    let a = s.handle(ImportEvent::Crashed("out of memory".to_string()));
    assert!(alerts(&a)[0].starts_with("The trace reader stopped: out of memory."));
}

#[test]
fn a_worker_that_does_not_start_or_take_the_files_is_alerted() {
    let mut s = ImportSession::default();
    s.handle(ImportEvent::Open(vec![file("a.json", 1)]));
    let a = s.handle(ImportEvent::SpawnFailed("no workers".to_string()));
    assert_eq!(
        alerts(&a),
        vec!["The trace could not be opened: no workers."]
    );
    // The worker never started: nothing to terminate.
    assert!(!a.contains(&ImportAction::Terminate));
    started(&mut s, 1);
    let a = s.handle(ImportEvent::PostFailed);
    assert_eq!(a[0], ImportAction::Terminate);
    assert_eq!(alerts(&a).len(), 1);
}

#[test]
fn cancel_stops_the_import_silently() {
    let mut s = ImportSession::default();
    let gen = started(&mut s, 10);
    let a = s.handle(ImportEvent::Cancel);
    assert_eq!(
        a,
        vec![
            ImportAction::Terminate,
            ImportAction::CancelBudget,
            ImportAction::DoneProgress
        ]
    );
    assert!(s.handle(ImportEvent::Imported { gen }).is_empty());
    assert!(s.handle(ImportEvent::Cancel).is_empty());
}

#[test]
fn the_import_messages_survive_their_json() {
    let request = WorkerRequest::Import {
        gen: 4,
        files: vec![file("rank0.json", 123)],
        rules: "my_a2a=all_to_all:ep".to_string(),
    };
    assert_eq!(from_json::<WorkerRequest>(&to_json(&request)), Ok(request));
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/hta/all_to_all");
    let figures = overlap_trace::import_paths(&[dir]).unwrap();
    let reply = WorkerReply::Imported {
        gen: 4,
        figures,
        rows: vec![],
        span_s: 0.1 + 0.2,
        import_ms: 1.0 / 3.0,
    };
    // The measured figures bit for bit: the page shows the reader's own.
    assert_eq!(from_json::<WorkerReply>(&to_json(&reply)), Ok(reply));
}

#[test]
fn the_readers_rules_go_with_every_import_after_them() {
    let mut s = ImportSession::default();
    assert!(s
        .handle(ImportEvent::Rules("my_a2a=all_to_all:ep".into()))
        .is_empty());
    s.handle(ImportEvent::Open(vec![file("a.json", 1)]));
    let a = s.handle(ImportEvent::Ready);
    assert!(
        matches!(&a[..], [ImportAction::Post(r)] if matches!(&**r,
            WorkerRequest::Import { rules, .. } if rules == "my_a2a=all_to_all:ep")),
        "{a:?}"
    );
}
