//! Building a step's task graph: the workload's builder into an empty
//! graph, with what the timeline shows of each op or without it, capped
//! for counting, and laid out for the engine.

pub(crate) mod collective_bench;
pub mod fusion;
pub mod hbm_ledger;
pub(crate) mod matmul_allreduce;
pub(crate) mod pp_boundary;
pub mod run_cost;
pub mod schedule;
pub(crate) mod sharding;
pub(crate) mod transformer;

use crate::collective::Libraries;
use crate::model::fidelity::Fidelity;
use crate::model::scenario::{Scenario, Workload};
use crate::workload::graph::Graph;

/// Builds the step's task graph, with room for `reserve_ops` tasks and
/// what the timeline shows of each op.
/// `libraries` run its collectives (`Libraries::of(s)`, or a test's).
pub(crate) fn build(
    s: &Scenario,
    fidelity: Fidelity,
    reserve_ops: usize,
    libraries: &Libraries,
) -> Graph {
    build_capped(s, fidelity, reserve_ops, usize::MAX, true, libraries)
}

/// Builds the step's task graph for its figures alone: without what only
/// the timeline shows of each op (`Graph::meta`), a fifth of the graph.
pub(crate) fn build_for_figures(
    s: &Scenario,
    fidelity: Fidelity,
    reserve_ops: usize,
    libraries: &Libraries,
) -> Graph {
    build_capped(s, fidelity, reserve_ops, usize::MAX, false, libraries)
}

/// Builds the graph but stops adding ops soon after it holds `cap_ops`
/// (see `Graph::over_cap`): the result is then only good for counting.
/// `with_meta`: keeps what the timeline shows of each op.
pub(crate) fn build_capped(
    s: &Scenario,
    fidelity: Fidelity,
    reserve_ops: usize,
    cap_ops: usize,
    with_meta: bool,
    libraries: &Libraries,
) -> Graph {
    let mut g = build_unfinished(s, fidelity, reserve_ops, cap_ops, with_meta, libraries);
    g.finish();
    g
}

/// The reduced graph for counting alone (`cost`): its ops, without the
/// dependency arrays `Graph::finish` lays out for the engine (a third of a
/// counting build's peak memory), nor what the timeline shows of each op.
pub(crate) fn build_for_count(s: &Scenario, cap_ops: usize) -> Graph {
    build_unfinished(s, Fidelity::Reduced, 0, cap_ops, false, &Libraries::of(s))
}

fn build_unfinished(
    s: &Scenario,
    fidelity: Fidelity,
    reserve_ops: usize,
    cap_ops: usize,
    with_meta: bool,
    libraries: &Libraries,
) -> Graph {
    let mut g = Graph::default();
    g.libraries = libraries.clone();
    g.cap_ops = cap_ops;
    g.with_meta = with_meta;
    g.reserve(reserve_ops);
    match &s.workload {
        Workload::Transformer(t) => transformer::build(g, s, t, fidelity),
        Workload::MatmulAllreduce(mm) => matmul_allreduce::build(g, s, mm, fidelity),
        Workload::Collective(c) => collective_bench::build(g, s, c, fidelity),
    }
}
