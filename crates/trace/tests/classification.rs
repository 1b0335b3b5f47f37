//! Classification any trace can use (issue 57): DeepSeek's own
//! expert-parallel kernels in the table, read on an excerpt of its
//! published training profile (`tests/data/deepseek`); the user's rules
//! before the table, overriding it either way; and a trace in which nothing
//! is recognised as communication saying so, with its candidates.

use std::path::{Path, PathBuf};

use overlap_trace::rules::{Kind, UserRule};
use overlap_trace::{import_paths, import_paths_with, Classifier, Imported};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
}

fn excerpt() -> PathBuf {
    data("deepseek/train_excerpt.json")
}

fn with_rules(rules: &[&str]) -> Imported {
    let rules = rules.iter().map(|r| UserRule::parse(r).unwrap()).collect();
    import_paths_with(&[excerpt()], &Classifier::new(rules)).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn deepseeks_expert_parallel_kernels_are_ep() {
    let m = import_paths(&[excerpt()]).unwrap();
    let g = &m.gpus[0];
    assert_eq!((g.rank, m.world_size), (Some(0), Some(64)));
    // In the excerpt (µs): cached_notify 1008, dispatch 3320,
    // notify_dispatch 1381, combine 6549, none overlapping; the layout
    // kernel (74) is local work.
    let kinds: Vec<(&str, f64)> = g
        .comm_by_kind_ms
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    assert_eq!(kinds[0].0, "DeepSeek EP combine");
    assert!(close(kinds[0].1, 6.549));
    assert!(close(kinds[1].1, 3.320) && kinds[1].0 == "DeepSeek EP dispatch");
    assert!(close(kinds[2].1, 1.008 + 1.381) && kinds[2].0 == "DeepSeek EP notify");
    assert!(close(g.comm_ms, 12.258), "{}", g.comm_ms);
    assert_eq!(g.axes.keys().collect::<Vec<_>>(), vec!["ep"]);
    assert!(g.comm_candidates.is_empty());
    // One rank of 64: said, and no transfer figure.
    assert_eq!(g.transfer.transfer_ms, None);
    assert!(
        m.messages[0].contains("one GPU read (rank 0 of 64)"),
        "{:?}",
        m.messages
    );
}

#[test]
fn the_users_rules_come_first_either_way() {
    // Communication taken out: nothing left recognised.
    let m = with_rules(&["dpsk::ep=compute"]);
    let g = &m.gpus[0];
    assert!(g.comm_by_kind_ms.is_empty() && g.comm_ms == 0.0);
    // The compute stream (7, the most kernels) left aside, the longest
    // kernels elsewhere: the combine on stream 27 first, then the dispatch.
    let c: Vec<(&str, i64)> = g
        .comm_candidates
        .iter()
        .map(|c| (c.function.as_str(), c.stream))
        .collect();
    assert_eq!(c[0], ("dpsk::ep::internode::combine", 27));
    assert_eq!(c[1], ("dpsk::ep::internode::dispatch", 27));
    assert!(close(g.comm_candidates[0].ms, 6.549));
    assert_eq!(g.comm_candidates[0].kernels, 1);
    assert!(c.iter().all(|(_, s)| *s != 7), "{c:?}");
    assert!(c.len() <= 5);
    let said = m
        .messages
        .iter()
        .find(|s| s.contains("no kernel is recognised"))
        .unwrap();
    assert!(
        said.contains("on any GPU")
            && said.contains("dpsk::ep::internode::combine (stream 27")
            && said.contains("--classify PATTERN=KIND[:AXIS]"),
        "{said}"
    );

    // A rule of the user's names the kind and the axis: here the combine
    // as a CP all-to-all, the rest as the table reads it.
    let m = with_rules(&[r"internode::combine<=all_to_all:cp"]);
    let g = &m.gpus[0];
    assert!(close(g.comm_by_kind_ms["User AllToAll"], 6.549));
    assert!(close(g.axes["cp"].comm_ms, 6.549));
    assert!(close(g.axes["ep"].comm_ms, 12.258 - 6.549));
    // Without an axis, the process group says it (here none: unknown).
    let m = with_rules(&["grouped_gemm::cuda::fp8_ptp128c=all_gather"]);
    assert!(m.gpus[0].axes.contains_key("unknown"));
    assert!(m.gpus[0].comm_by_kind_ms.contains_key("User AllGather"));
    // memcpy: neither compute nor communication.
    let m = with_rules(&["batched_transpose=memcpy"]);
    assert!(close(m.gpus[0].memcpy_ms, 0.090));
}

#[test]
fn rules_are_tried_in_order_and_kinds_are_listed() {
    let rules = vec![
        UserRule::parse("combine=compute").unwrap(),
        UserRule::parse("dpsk=all_reduce:dp").unwrap(),
    ];
    let c = Classifier::new(rules);
    let m = import_paths_with(&[excerpt()], &c).unwrap();
    let g = &m.gpus[0];
    // Every dpsk kernel but the combine is now a DP all-reduce, the
    // layout and the grouped GEMMs (dpsk::grouped_gemm) among them.
    assert!(!g.comm_by_kind_ms.contains_key("DeepSeek EP combine"));
    assert_eq!(g.axes.keys().collect::<Vec<_>>(), vec!["dp"]);
    assert_eq!(
        Kind::ALL.map(Kind::name).join(" "),
        "all_reduce all_gather reduce_scatter all_to_all send_recv memcpy compute"
    );
}
