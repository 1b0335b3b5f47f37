//! Every transition of the page's layout search, driven natively: the
//! request posted once the worker is ready, progress, the result shown,
//! the newest search winning, a cancel, the budget, a crash; and the
//! messages through their JSON.

use overlap_core::search::{Objective, Progress};
use overlap_core::ScenarioInput;
use overlap_session::messages::{from_json, to_json};
use overlap_session::search::{
    SearchAction, SearchAsk, SearchEvent, SearchSession, SEARCH_BUDGET_MS,
};
use overlap_session::{Heard, Machine, WorkerReply, WorkerRequest};

fn ask(gpus: Option<u64>) -> SearchAsk {
    SearchAsk {
        input: ScenarioInput::default(),
        gpus,
        objective: Objective::Step,
    }
}

/// Starts a search and gets it posted: its number.
fn started(s: &mut SearchSession, a: SearchAsk) -> u64 {
    let out = s.handle(SearchEvent::Start(Box::new(a.clone())));
    let n = out.len();
    assert_eq!(out[n - 3], SearchAction::Spawn, "{out:?}");
    let gen = match out[n - 2] {
        SearchAction::ArmBudget { gen, ms } => {
            assert_eq!(ms, SEARCH_BUDGET_MS);
            gen
        }
        ref other => panic!("{other:?}"),
    };
    assert!(matches!(out[n - 1], SearchAction::Progress { fraction, .. } if fraction == 0.0));
    let out = s.handle(SearchEvent::Ready);
    assert_eq!(
        out,
        vec![SearchAction::Post(Box::new(WorkerRequest::Search {
            gen,
            input: a.input,
            gpus: a.gpus,
            objective: a.objective,
        }))]
    );
    gen
}

fn progress(space: u64, remaining: u64) -> Progress {
    Progress {
        space,
        simulated: space - remaining,
        pruned: 0,
        refused: 0,
        remaining,
    }
}

#[test]
fn a_search_is_posted_when_its_worker_is_ready_and_shown_when_done() {
    let mut s = SearchSession::default();
    let gen = started(&mut s, ask(Some(64)));
    assert!(s.busy());
    assert!(
        s.handle(SearchEvent::Ready).is_empty(),
        "a second Ready posts again"
    );
    let out = s.handle(SearchEvent::Progress {
        gen,
        progress: progress(100, 40),
    });
    match &out[..] {
        [SearchAction::Progress { fraction, label }] => {
            assert!((fraction - 0.6).abs() < 1e-12);
            assert!(label.contains("60 of 100"), "{label}");
        }
        other => panic!("{other:?}"),
    }
    // Less than a step further: the bar stays.
    assert!(s
        .handle(SearchEvent::Progress {
            gen,
            progress: progress(1000, 399),
        })
        .is_empty());
    let out = s.handle(SearchEvent::Searched { gen });
    assert_eq!(
        out,
        vec![
            SearchAction::Terminate,
            SearchAction::CancelBudget,
            SearchAction::DoneProgress,
            SearchAction::Show { gen },
        ]
    );
    assert!(!s.busy());
    assert!(s.asked(&ask(Some(64))) && !s.asked(&ask(None)));
}

#[test]
fn the_newest_search_wins_and_an_older_reply_is_dropped() {
    let mut s = SearchSession::default();
    let old = started(&mut s, ask(None));
    let out = s.handle(SearchEvent::Start(Box::new(ask(Some(16)))));
    assert_eq!(
        out[0],
        SearchAction::Terminate,
        "the older search's worker stays: {out:?}"
    );
    let new = match s.handle(SearchEvent::Ready).as_slice() {
        [SearchAction::Post(r)] => match **r {
            WorkerRequest::Search { gen, gpus, .. } => {
                assert_eq!(gpus, Some(16));
                gen
            }
            ref other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    assert!(new > old);
    assert!(s.handle(SearchEvent::Searched { gen: old }).is_empty());
    assert!(s
        .handle(SearchEvent::Refused {
            gen: old,
            message: "old".into()
        })
        .is_empty());
    assert!(matches!(
        s.handle(SearchEvent::Searched { gen: new }).last(),
        Some(SearchAction::Show { gen }) if *gen == new
    ));
}

#[test]
fn a_cancel_stops_the_worker_and_asking_again_runs_it() {
    let mut s = SearchSession::default();
    let gen = started(&mut s, ask(None));
    let out = s.handle(SearchEvent::Cancel);
    assert_eq!(
        out,
        vec![
            SearchAction::Terminate,
            SearchAction::CancelBudget,
            SearchAction::DoneProgress
        ]
    );
    assert!(!s.busy() && !s.asked(&ask(None)));
    // Its result, had it come, is not shown.
    assert!(s.handle(SearchEvent::Searched { gen }).is_empty());
    started(&mut s, ask(None));
}

#[test]
fn refusals_budgets_and_crashes_are_one_alert_each() {
    let alert = |out: Vec<SearchAction>| match out.last() {
        Some(SearchAction::Alert(a)) => a.clone(),
        other => panic!("{other:?}"),
    };
    let mut s = SearchSession::default();
    let gen = started(&mut s, ask(None));
    let a = alert(s.handle(SearchEvent::Refused {
        gen,
        message: "--gpus 12: valid are multiples of 8".into(),
    }));
    assert!(a.contains("refused") && a.contains("--gpus 12"), "{a}");

    let gen = started(&mut s, ask(Some(8)));
    let a = alert(s.handle(SearchEvent::BudgetSpent(gen)));
    assert!(a.contains(&format!("{} s", SEARCH_BUDGET_MS / 1000)), "{a}");
    assert!(a.contains("overlap-lab search"), "{a}");

    started(&mut s, ask(Some(16)));
    let a = alert(s.handle(SearchEvent::Crashed("out of memory".into())));
    assert!(
        a.contains("out of memory") && a.contains("overlap-lab search"),
        "{a}"
    );
    assert!(!s.busy());
    // A crash with no search under way retires the worker quietly.
    assert!(s.handle(SearchEvent::Crashed("late".into())).is_empty());
}

#[test]
fn replies_are_heard_as_the_search_s_events_and_cross_as_json() {
    let progress = progress(10, 4);
    let reply = WorkerReply::SearchProgress { gen: 3, progress };
    let back: WorkerReply = from_json(&to_json(&reply)).unwrap();
    assert_eq!(back, reply);
    assert_eq!(
        SearchSession::heard(Heard::Reply(&reply), ()),
        vec![SearchEvent::Progress { gen: 3, progress }]
    );
    let refused = WorkerReply::SearchRefused {
        gen: 3,
        message: "no".into(),
    };
    assert_eq!(
        SearchSession::heard(Heard::Reply(&refused), ()),
        vec![SearchEvent::Refused {
            gen: 3,
            message: "no".into()
        }]
    );
    // Another job's reply is not the search's.
    let other = WorkerReply::ImportRefused {
        gen: 3,
        message: "no".into(),
    };
    assert!(SearchSession::heard(Heard::Reply(&other), ()).is_empty());
}
