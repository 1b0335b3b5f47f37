//! What must run on a GPU between two of its compute ops, read from a
//! task graph: the collectives the second op waits for and that wait for
//! the first, each alone on its links or all through the busiest link
//! (`bound` sums these gaps into a pass's figures).

use std::collections::HashMap;

use crate::model::axis::Axis;
use crate::model::op::OpKind;
use crate::workload::graph::task::{TaskId, COMPUTE};
use crate::workload::graph::Graph;

/// The GPU's link a resource is, as an index into `links_s`.
pub(super) fn link_index(g: &Graph, resource: u32) -> Option<usize> {
    use crate::model::link::{Direction, LinkClass};
    let r = g.resources.get(resource as usize)?;
    r.gpu.filter(|&gpu| gpu == 0)?;
    Some(match (r.class, r.direction) {
        (LinkClass::Nvlink, Direction::Out) => 0,
        (LinkClass::Nvlink, Direction::In) => 1,
        (LinkClass::Network, Direction::Out) => 2,
        (LinkClass::Network, Direction::In) => 3,
    })
}

/// Collectives visited at most per gap: a few per op in practice; past
/// this the gap counts as zero (a smaller bound, still a bound).
const MAX_GAP_VISITS: usize = 256;

/// What must run between compute op `a` and compute op `b`: the longest
/// chain of counted collectives from one to the other, each alone on its
/// links, or the bytes all of them move through the busiest of the GPU's
/// links at its capacity, whichever is longer (every one of them starts
/// after `a` ends and ends before `b` starts); `dp`: FSDP's collectives
/// count too. Also the longest of those that are DP all-gathers, alone.
pub(super) fn gap_s(g: &Graph, a: TaskId, b: TaskId, dp: bool) -> (f64, f64) {
    // Consecutive ops with nothing between them.
    if g.successors(a)
        .iter()
        .all(|&c| g.tasks[c as usize].axis == COMPUTE)
    {
        return (0.0, 0.0);
    }
    let mut memo: HashMap<TaskId, f64> = HashMap::new();
    let mut best = 0.0f64;
    for &c in g.successors(a) {
        if let Some(x) = chain_to(g, c, b, dp, &mut memo) {
            best = best.max(x);
        }
        if memo.len() > MAX_GAP_VISITS {
            return (0.0, 0.0);
        }
    }
    let mut links = [0.0f64; 4];
    let mut gather = 0.0f64;
    for (&c, &x) in &memo {
        if x < 0.0 {
            continue;
        }
        let task = &g.tasks[c as usize];
        if task.axis == Axis::Dp.index() as u8 && g.meta[c as usize].op == OpKind::AllGather {
            gather = gather.max(alone_s(g, c));
        }
        for u in &g.patterns[task.pattern as usize] {
            if let Some(i) = link_index(g, u.resource) {
                let capacity = g.resources[u.resource as usize].capacity_bps;
                if capacity > 0.0 {
                    links[i] += u.weight * task.work.max(0.0) / capacity;
                }
            }
        }
    }
    (links.into_iter().fold(best, f64::max), gather)
}

/// The longest path from collective `c` (its time included) through
/// counted collectives into `b`; `None` when `c` is not counted or does
/// not lead to `b`.
fn chain_to(
    g: &Graph,
    c: TaskId,
    b: TaskId,
    dp: bool,
    memo: &mut HashMap<TaskId, f64>,
) -> Option<f64> {
    let task = &g.tasks[c as usize];
    let counted = [Axis::Tp, Axis::Cp, Axis::Ep]
        .iter()
        .any(|a| a.index() as u8 == task.axis)
        || (dp && task.axis == Axis::Dp.index() as u8);
    if task.axis == COMPUTE || !counted {
        return None;
    }
    if let Some(&x) = memo.get(&c) {
        return (x >= 0.0).then_some(x);
    }
    if memo.len() > MAX_GAP_VISITS {
        return None;
    }
    memo.insert(c, -1.0);
    let mut next: Option<f64> = None;
    for &d in g.successors(c) {
        let rest = if d == b {
            Some(0.0)
        } else {
            chain_to(g, d, b, dp, memo)
        };
        if let Some(x) = rest {
            next = Some(next.map_or(x, |n: f64| n.max(x)));
        }
    }
    let result = next.map(|rest| alone_s(g, c) + rest);
    memo.insert(c, result.unwrap_or(-1.0));
    result
}

/// A collective's time alone: its latency, then its bytes at its links'
/// rate with nothing else on them.
pub(super) fn alone_s(g: &Graph, c: TaskId) -> f64 {
    let task = &g.tasks[c as usize];
    let transfer = if task.work > 0.0 {
        task.work / g.alone_rate_bps(task.pattern)
    } else {
        0.0
    };
    task.latency_s() + if transfer.is_finite() { transfer } else { 0.0 }
}
