//! The step-time/memory Pareto front, the ranking by objective, and the
//! pruning rules that keep both exact.
//!
//! A candidate is on the front when no other candidate has both a step
//! time and a memory lower or equal to its own with one of them strictly
//! lower. Step times compare per sample (`time_per_sample`): with a fixed
//! global batch that is the step's order; with a maximum batch, layouts
//! run different batches.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

/// What the best list is ranked by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// The step time (per sample, with a maximum batch), then memory.
    #[default]
    Step,
    /// The memory of the fullest GPU, then the step time.
    Memory,
    /// The front itself, fastest first.
    Both,
}

impl Objective {
    /// Every objective, in the order the command line lists them.
    pub const ALL: [Objective; 3] = [Objective::Step, Objective::Memory, Objective::Both];

    /// The objective named `name` ([`Objective::name`]).
    pub fn from_name(name: &str) -> Option<Objective> {
        Self::ALL.into_iter().find(|o| o.name() == name)
    }

    /// The name the command line and JSON use.
    pub const fn name(self) -> &'static str {
        match self {
            Objective::Step => "step",
            Objective::Memory => "memory",
            Objective::Both => "both",
        }
    }
}

/// A simulated candidate's place: its time per sample, its memory, and
/// its canonical description (ties).
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Step time over the global batch, seconds per sample.
    pub time_s: f64,
    /// Memory of the fullest GPU, GB.
    pub memory_gb: f64,
    /// The layout's canonical description.
    pub description: String,
}

/// `a` against `b` by `objective` (the front is ranked by time), ties
/// broken by the description.
pub fn compare(objective: Objective, a: &Point, b: &Point) -> Ordering {
    let by_time = a.time_s.total_cmp(&b.time_s);
    let by_memory = a.memory_gb.total_cmp(&b.memory_gb);
    let first = match objective {
        Objective::Step | Objective::Both => by_time.then(by_memory),
        Objective::Memory => by_memory.then(by_time),
    };
    first.then_with(|| a.description.cmp(&b.description))
}

/// Whether `a` dominates `b`: no worse in both, better in one.
pub fn dominates(a: &Point, b: &Point) -> bool {
    a.time_s <= b.time_s
        && a.memory_gb <= b.memory_gb
        && (a.time_s < b.time_s || a.memory_gb < b.memory_gb)
}

/// The indices of `points` on the front, fastest first (ties by memory,
/// then description). Sorted by time, a point is on the front when its
/// memory is below that of every point before it, or equal to the least
/// of them with an equal time.
pub fn front(points: &[Point]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| compare(Objective::Step, &points[a], &points[b]));
    let mut out: Vec<usize> = Vec::new();
    for i in order {
        let p = &points[i];
        if !out.iter().any(|&j| dominates(&points[j], p)) {
            out.push(i);
        }
    }
    out
}

/// The simulated points, kept so that "could a candidate still matter?"
/// is answered in a few comparisons.
#[derive(Default)]
pub struct Pruner {
    /// (memory, time) of every simulated point, by memory then time.
    points: Vec<(f64, f64)>,
    /// `prefix_min[i]`: the least time among `points[..=i]`.
    prefix_min: Vec<f64>,
    /// The `top` best points by the objective so far, sorted.
    best: Vec<Point>,
    objective: Option<Objective>,
    top: usize,
}

impl Pruner {
    /// A pruner keeping the `top` best by `objective` and the front.
    pub fn new(objective: Objective, top: usize) -> Self {
        Self {
            objective: Some(objective),
            top: top.max(1),
            ..Self::default()
        }
    }

    /// Takes in simulated points.
    pub fn add(&mut self, new: &[Point]) {
        let objective = self.objective.unwrap_or(Objective::Step);
        for p in new {
            self.points.push((p.memory_gb, p.time_s));
            self.best.push(p.clone());
        }
        self.points
            .sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut least = f64::INFINITY;
        self.prefix_min = self
            .points
            .iter()
            .map(|p| {
                least = least.min(p.1);
                least
            })
            .collect();
        self.best.sort_by(|a, b| compare(objective, a, b));
        self.best.truncate(self.top);
    }

    /// The least time among points of memory below (`strict`) or at most
    /// `memory_gb`.
    fn least_time(&self, memory_gb: f64, strict: bool) -> f64 {
        let n = self.points.partition_point(|p| {
            if strict {
                p.0 < memory_gb
            } else {
                p.0 <= memory_gb
            }
        });
        match n {
            0 => f64::INFINITY,
            n => self.prefix_min[n - 1],
        }
    }

    /// Whether a candidate of exact `memory_gb`, whose time per sample is
    /// at least `bound_s`, can be neither among the best nor on the front:
    /// some simulated point dominates whatever its time turns out to be,
    /// and (unless the objective is the front itself) `top` simulated
    /// points rank strictly before it already.
    pub fn prunes(&self, bound_s: f64, memory_gb: f64) -> bool {
        let dominated = self.least_time(memory_gb, true) <= bound_s
            || self.least_time(memory_gb, false) < bound_s;
        if !dominated {
            return false;
        }
        let objective = self.objective.unwrap_or(Objective::Step);
        if objective == Objective::Both || self.best.len() < self.top {
            return objective == Objective::Both;
        }
        let last = &self.best[self.best.len() - 1];
        match objective {
            Objective::Memory => {
                last.memory_gb < memory_gb || (last.memory_gb == memory_gb && last.time_s < bound_s)
            }
            _ => last.time_s < bound_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(time_s: f64, memory_gb: f64, d: &str) -> Point {
        Point {
            time_s,
            memory_gb,
            description: d.to_string(),
        }
    }

    #[test]
    fn the_front_keeps_what_nothing_dominates() {
        let points = [
            p(1.0, 50.0, "a"),
            p(2.0, 40.0, "b"),
            p(2.0, 45.0, "c"), // dominated by b
            p(3.0, 40.0, "d"), // dominated by b
            p(0.5, 80.0, "e"),
            p(1.0, 50.0, "f"), // equal to a: neither dominates
            p(4.0, 10.0, "g"),
        ];
        let f: Vec<&str> = front(&points)
            .into_iter()
            .map(|i| points[i].description.as_str())
            .collect();
        assert_eq!(f, ["e", "a", "f", "b", "g"]);
    }

    #[test]
    fn pruning_needs_a_dominating_point_and_a_full_best_list() {
        let mut pr = Pruner::new(Objective::Step, 2);
        pr.add(&[p(1.0, 50.0, "a")]);
        // Dominated, but the best list has room.
        assert!(!pr.prunes(2.0, 60.0));
        pr.add(&[p(1.5, 40.0, "b")]);
        assert!(pr.prunes(2.0, 60.0));
        // Less memory than every point: may be on the front.
        assert!(!pr.prunes(2.0, 30.0));
        // Its bound equals a time of the same memory: it could tie.
        assert!(!pr.prunes(1.5, 40.0));
        assert!(pr.prunes(1.6, 40.0));
        // Faster than the second best, perhaps.
        assert!(!pr.prunes(1.2, 60.0));
        let mut both = Pruner::new(Objective::Both, 1);
        both.add(&[p(1.0, 50.0, "a")]);
        assert!(both.prunes(1.1, 50.0));
        assert!(!both.prunes(0.9, 60.0));
    }
}
