//! What a scenario costs to simulate, counted by the builder itself before
//! anything runs, so that the validator can refuse a step the page could not
//! afford.
//!
//! The builder builds the step at one and at two "units" of micro-batches
//! (one micro-batch; `pp` for the interleaved schedule, whose micro-batch
//! count must be a multiple of it). Every count below is a sum over the
//! ops of the step, and each schedule runs every micro-batch through the same
//! ops, so each count is affine in the micro-batch count: two small builds
//! give it exactly for any batch (a test checks this against full builds).
//!
//! The engine's bounds per op (see `engine` and `network`):
//! - Events processed: one per compute op (its finish; a re-planned finish
//!   supersedes the old one, which is skipped), at most two per collective
//!   (latency paid, last byte in).
//! - Events planned (heap pushes, superseded ones included): one per
//!   compute op; per collective one for its latency, one re-plan of the
//!   compute of each member when it starts and when it ends (NCCL kernels
//!   take SMs), and one re-plan of each flow class that can share a link
//!   with it, when it starts and when it ends. Classes that can share a link
//!   are those of its static component: the patterns connected to its own
//!   through common resources.
//! - With the modelled interference (`crate::workload::interference`), collectives
//!   also cross their members' HBM, and the memory-bound part of a compute
//!   op is a flow on its GPU's HBM: one more event processed (its last byte),
//!   one more planned (its compute-bound part), and one re-plan of itself
//!   and of each class that crosses that HBM when it joins and when it
//!   leaves. (Only those classes share a resource with it; a re-rating that
//!   spreads further moves classes whose rate the HBM's own classes free or
//!   take, which `bounded_cost` checks over random scenarios.)

use crate::model::fidelity::Fidelity;
use crate::model::scenario::{Scenario, Workload};
use crate::workload::graph::{Graph, COMPUTE};
use crate::workload::interference::{memory_phase_s, NetworkSetup, Sharing};
use crate::workload::schedule::{affine_micro_batches, steady_counts};

/// The predicted cost of simulating one scenario.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// Operations (compute ops and collectives) of the step.
    pub ops: u64,
    /// Upper bound on the events the engine processes.
    pub events: u64,
    /// Upper bound on the events the engine plans (heap pushes): its work.
    pub planned_events: u64,
    /// Upper bound on flows moving at once (every transfer of the step).
    pub peak_flows: u64,
}

impl Cost {
    /// Two runs one after the other: their events add up, their ops do not
    /// coexist (one run's graph is gone before the next is built).
    fn then(self, o: Cost) -> Cost {
        Cost {
            ops: self.ops.max(o.ops),
            events: self.events + o.events,
            planned_events: self.planned_events + o.planned_events,
            peak_flows: self.peak_flows.max(o.peak_flows),
        }
    }

    /// `self + (other - self) * k`, field by field (affine extrapolation).
    fn extrapolate(self, other: Cost, k: u64) -> Cost {
        let f = |a: u64, b: u64| a + (b - a) * k;
        Cost {
            ops: f(self.ops, other.ops),
            events: f(self.events, other.events),
            planned_events: f(self.planned_events, other.planned_events),
            peak_flows: f(self.peak_flows, other.peak_flows),
        }
    }
}

/// What `Simulator::simulate` runs: the scenario and, when it differs, its
/// all-overlap-off baseline; each with, at most, the three short runs from
/// whose steady state `crate::steady_state` extrapolates before it falls
/// back to the full run (`steady_counts`).
pub fn cost(s: &Scenario) -> Cost {
    let off = s.all_overlap_off();
    let mut c = cost_within(s, u64::MAX).expect("no cap");
    for s in std::iter::once(s).chain((off != *s).then_some(&off)) {
        for m in steady_counts(s).into_iter().flatten() {
            c = c.then(run_cost(&with_micro_batches(s, m)));
        }
    }
    c
}

/// The scenario at another micro-batch count (its global batch changed).
pub(crate) fn with_micro_batches(s: &Scenario, micro_batches: u32) -> Scenario {
    let mut small = s.clone();
    if let Workload::Transformer(t) = &mut small.workload {
        t.global_batch = micro_batches * t.micro_batch * s.parallel.dp;
    }
    small
}

/// One reduced run of the scenario.
pub fn run_cost(s: &Scenario) -> Cost {
    run_cost_within(s, u64::MAX).expect("no cap")
}

/// As [`cost`], or `None` as soon as a run is seen to hold more than
/// `cap_ops` ops: the builder stops counting there, so that a scenario far
/// over budget costs little to refuse.
pub fn cost_within(s: &Scenario, cap_ops: u64) -> Option<Cost> {
    let off = s.all_overlap_off();
    let run = run_cost_within(s, cap_ops)?;
    if off == *s {
        Some(run)
    } else {
        Some(run.then(run_cost_within(&off, cap_ops)?))
    }
}

/// As [`run_cost`], or `None` when the run holds more than `cap_ops` ops.
pub fn run_cost_within(s: &Scenario, cap_ops: u64) -> Option<Cost> {
    if !matches!(s.workload, Workload::Transformer(_)) {
        return count_within(s, cap_ops);
    }
    let (base, unit) = affine_micro_batches(s.parallel.schedule, s.parallel.pp);
    let m = s.micro_batches();
    if m <= base + unit {
        return count_within(s, cap_ops);
    }
    let c = AffineCost::of(s, cap_ops)?.at(m);
    (c.ops <= cap_ops).then_some(c)
}

/// What a scenario's figures cost, beside the whole step they stand for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The whole step: the scenario's run, then its baseline's (what a
    /// timeline holds, and what the figures extrapolate to).
    pub step: Cost,
    /// What the figures (`Simulator::simulate_report`) simulate: for the
    /// scenario and, when it differs, its all-off baseline, the three runs at
    /// the steady counts when the steady state applies (`steady_counts`),
    /// else the whole step. `ops` is the largest of those runs (they run one
    /// after another), `planned_events` their sum. An extrapolation that
    /// fails at run time falls back to the whole step only within the
    /// timeline's limit (`crate::steady_state`), so this bounds what the
    /// figures run.
    pub figures: Cost,
}

/// The scenario's [`Budget`], from the same two small builds for each
/// scenario; `None` as soon as a build holds more than `run_cap` ops. No
/// build ever holds more: the whole step's cost is extrapolated, however
/// large, and the caller compares it and the figures' runs with its limits.
pub fn budget_within(s: &Scenario, run_cap: u64) -> Option<Budget> {
    let off = s.all_overlap_off();
    let mut budget: Option<Budget> = None;
    for s in std::iter::once(s).chain((off != *s).then_some(&off)) {
        let m = s.micro_batches();
        let (base, unit) = affine_micro_batches(s.parallel.schedule, s.parallel.pp);
        let transformer = matches!(s.workload, Workload::Transformer(_));
        let (step, runs) = if transformer && m > base + unit {
            let affine = AffineCost::of(s, run_cap)?;
            let step = affine.at(m);
            let runs = match steady_counts(s) {
                Some(counts) => counts.map(|m| affine.at(m)).to_vec(),
                None => vec![step],
            };
            (step, runs)
        } else {
            let whole = count_within(s, run_cap)?;
            (whole, vec![whole])
        };
        let figures = runs[1..].iter().fold(runs[0], |f, &run| f.then(run));
        budget = Some(match budget {
            None => Budget { step, figures },
            Some(b) => Budget {
                step: b.step.then(step),
                figures: b.figures.then(figures),
            },
        });
    }
    budget
}

/// Builds the run and counts it, or `None` when it holds more than `cap_ops` ops.
///
/// The last few counts are kept (per thread), as a count depends on its
/// scenario and cap alone: a page that checks each new input asks again
/// for the same small builds, of the all-off baseline at every overlap
/// switch and of a scenario switched back, and a build of the 175B
/// interleaved step at 8 and 16 micro-batches takes milliseconds.
fn count_within(s: &Scenario, cap_ops: u64) -> Option<Cost> {
    thread_local! {
        static KEPT: std::cell::RefCell<std::collections::VecDeque<(Scenario, u64, Option<Cost>)>> =
            const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
    }
    /// Counts kept: the small builds of a scenario and its baseline
    /// (two each), for a few scenarios.
    const KEPT_COUNTS: usize = 16;
    let kept = KEPT.with_borrow(|kept| {
        kept.iter()
            .find(|(k, cap, _)| *cap == cap_ops && k == s)
            .map(|e| e.2)
    });
    if let Some(cost) = kept {
        return cost;
    }
    let cap = usize::try_from(cap_ops).unwrap_or(usize::MAX);
    let g = super::build_capped(s, Fidelity::Reduced, 0, cap, false);
    let cost = (!g.over_cap()).then(|| graph_cost(&g, &Sharing::of(s)));
    KEPT.with_borrow_mut(|kept| {
        if kept.len() == KEPT_COUNTS {
            kept.pop_front();
        }
        kept.push_back((s.clone(), cap_ops, cost));
    });
    cost
}

/// A transformer run's cost at any micro-batch count from `base` on in
/// steps of `unit` (see the module's doc), from two small builds.
struct AffineCost {
    base: u32,
    unit: u32,
    one: Cost,
    two: Cost,
}

impl AffineCost {
    /// Builds the scenario at `base` and `base + unit` micro-batches; `None`
    /// when either holds more than `cap_ops` ops.
    fn of(s: &Scenario, cap_ops: u64) -> Option<Self> {
        let (base, unit) = affine_micro_batches(s.parallel.schedule, s.parallel.pp);
        Some(Self {
            base,
            unit,
            one: count_within(&with_micro_batches(s, base), cap_ops)?,
            two: count_within(&with_micro_batches(s, base + unit), cap_ops)?,
        })
    }

    /// The cost at `micro_batches` (at least `base`, a whole number of
    /// units beyond it).
    fn at(&self, micro_batches: u32) -> Cost {
        let units = micro_batches.saturating_sub(self.base) / self.unit;
        self.one.extrapolate(self.two, u64::from(units))
    }
}

/// Counts a built graph.
pub(crate) fn graph_cost(g: &Graph, sharing: &Sharing) -> Cost {
    let setup = NetworkSetup::new(g, sharing);
    let components = Components::of(g, &setup);
    let mut c = Cost {
        ops: g.tasks.len() as u64,
        ..Cost::default()
    };
    for (id, task) in g.tasks.iter().enumerate() {
        if task.axis == COMPUTE {
            c.events += 1;
            c.planned_events += 1;
            if memory_phase_s(g, sharing, id) > 0.0 {
                c.events += 1;
                c.planned_events += 1;
                c.peak_flows += 1;
                c.planned_events += 2 * (1 + components.hbm_classes[task.gpu as usize]);
            }
            continue;
        }
        let members = g.members_of(id as u32).len() as u64;
        c.events += 2;
        c.planned_events += 1 + 2 * members;
        if task.work > 0.0 {
            c.peak_flows += 1;
            c.planned_events += 2 * components.classes_near(task.pattern);
            if sharing.modelled().is_some() {
                // The memory-bound kernels beside it on its members' HBM.
                c.planned_events += 2 * members;
            }
        }
    }
    c
}

/// Link resources joined by the patterns that cross them, and the flow
/// classes (pattern and axis) each group of joined resources can carry.
struct Components {
    /// Per pattern, its component (the root resource of its first usage).
    pattern_root: Vec<u32>,
    /// Per root resource, the classes used on its component.
    classes: Vec<u64>,
    /// Per GPU, the collective classes that cross its HBM (modelled
    /// interference; zero otherwise).
    hbm_classes: Vec<u64>,
}

impl Components {
    fn of(g: &Graph, setup: &NetworkSetup) -> Self {
        // Components of the links alone: HBM would join every pattern of a
        // GPU, but it binds only beside a memory-bound kernel, whose
        // re-plans are counted per kernel and per member instead.
        let resources = setup.links;
        let mut parent: Vec<u32> = (0..resources as u32).collect();
        fn find(parent: &mut [u32], mut r: u32) -> u32 {
            while parent[r as usize] != r {
                parent[r as usize] = parent[parent[r as usize] as usize];
                r = parent[r as usize];
            }
            r
        }
        for p in &g.patterns {
            if let Some(first) = p.first() {
                let a = find(&mut parent, first.resource);
                for u in &p[1..] {
                    let b = find(&mut parent, u.resource);
                    if a != b {
                        parent[b as usize] = a;
                    }
                }
            }
        }
        let pattern_root: Vec<u32> = g
            .patterns
            .iter()
            .map(|p| p.first().map_or(0, |u| find(&mut parent, u.resource)))
            .collect();
        // Distinct (pattern, axis) pairs that the step's transfers use.
        let mut used = vec![[false; 3]; g.patterns.len()];
        for t in &g.tasks {
            if t.axis != COMPUTE && t.work > 0.0 {
                used[t.pattern as usize][t.axis as usize] = true;
            }
        }
        let mut classes = vec![0u64; resources.max(1)];
        let mut hbm_classes = vec![0u64; g.gpus.len()];
        for (p, axes) in used.iter().enumerate() {
            let n = axes.iter().filter(|u| **u).count() as u64;
            classes[pattern_root[p] as usize] += n;
            for u in &setup.patterns[p] {
                if let Some(gpu) = (u.resource as usize).checked_sub(setup.links) {
                    hbm_classes[gpu] += n;
                }
            }
        }
        Self {
            pattern_root,
            classes,
            hbm_classes,
        }
    }

    fn classes_near(&self, pattern: u32) -> u64 {
        self.classes[self.pattern_root[pattern as usize] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_scenario;

    /// Two small builds give exactly what the full build counts.
    #[test]
    fn extrapolated_cost_equals_the_full_builds_count() {
        for (json, batch) in [
            (r#"{"workload":{"global_batch":GB}}"#, 96),
            (
                r#"{"workload":{"global_batch":GB,"sequence_parallel":true,"recompute":"full"},"parallel":{"schedule":"gpipe"}}"#,
                40,
            ),
            (
                r#"{"workload":{"global_batch":GB,"recompute":"selective"},"parallel":{"schedule":"interleaved","virtual_stages":2}}"#,
                48,
            ),
            (
                r#"{"workload":{"global_batch":GB,"mode":"inference"},"parallel":{"scatter_gather":false},"overlap":{"tp":false}}"#,
                30,
            ),
            (
                r#"{"workload":{"global_batch":GB,"sequence_parallel":true},"parallel":{"schedule":"zb-2p"}}"#,
                42,
            ),
            (
                r#"{"workload":{"global_batch":GB},"parallel":{"schedule":"zb-v","virtual_stages":2}}"#,
                34,
            ),
            (
                r#"{"workload":{"global_batch":GB,"recompute":"full"},"parallel":{"schedule":"dualpipe-v","virtual_stages":2}}"#,
                36,
            ),
        ] {
            let s = parse_scenario(&json.replace("GB", &batch.to_string())).unwrap();
            let full = graph_cost(
                &super::super::build(&s, Fidelity::Reduced, 0),
                &Sharing::of(&s),
            );
            assert_eq!(run_cost(&s), full, "{json}");
        }
    }

    /// A kept count is only ever given back for its own scenario and cap.
    #[test]
    fn a_kept_count_is_its_own_scenarios_at_its_own_cap() {
        let s = parse_scenario(r#"{"workload":{"global_batch":24}}"#).unwrap();
        let fresh = |s: &Scenario| {
            graph_cost(
                &super::super::build(s, Fidelity::Reduced, 0),
                &Sharing::of(s),
            )
        };
        let direct = fresh(&s);
        assert_eq!(count_within(&s, u64::MAX), Some(direct));
        assert_eq!(count_within(&s, u64::MAX), Some(direct), "kept");
        assert_eq!(count_within(&s, direct.ops - 1), None, "another cap");
        assert_eq!(count_within(&s, direct.ops), Some(direct));
        let other = with_micro_batches(&s, s.micro_batches() + 1);
        let other_cost = fresh(&other);
        assert_ne!(other_cost, direct);
        assert_eq!(count_within(&other, u64::MAX), Some(other_cost));
        assert_eq!(
            count_within(&s, u64::MAX),
            Some(direct),
            "kept beside another"
        );
    }
}
