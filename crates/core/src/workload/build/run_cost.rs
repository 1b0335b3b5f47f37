//! What a scenario costs to simulate, predicted before anything runs, so
//! that the validator can refuse a step the page could not afford, cheaply
//! and before anything large is allocated.
//!
//! The prediction is arithmetic on counts of the step's smallest builds:
//! at most four, of one and two "units" of micro-batches past the schedule's
//! base (`affine_micro_batches`) by one and two layers per virtual stage,
//! each held to [`MAX_COUNTED_OPS`]. Every count below is a sum over the
//! ops of the step; each schedule runs every micro-batch through the same
//! ops and every layer of a virtual stage runs the same ops, so each count
//! is bilinear in the micro-batch count and the layers per virtual stage
//! ([`ShapeCost`]): the small builds give it exactly for any batch and depth
//! (tests check this against full builds, on chosen and on random shapes).
//! Before a build is made, an arithmetic floor ([`ops_floor`]) refuses one
//! that could not be under the counting limit.
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
//! - With the modelled interference (`crate::workload::graph::interference`), collectives
//!   also cross their members' HBM, and the memory-bound part of a compute
//!   op is a flow on its GPU's HBM: one more event processed (its last byte),
//!   one more planned (its compute-bound part), and one re-plan of itself
//!   and of each class that crosses that HBM when it joins and when it
//!   leaves. (Only those classes share a resource with it; a re-rating that
//!   spreads further moves classes whose rate the HBM's own classes free or
//!   take, which `bounded_cost` checks over random scenarios.)

use crate::model::axis::Axis;
use crate::model::fidelity::Fidelity;
use crate::model::scenario::{Scenario, Workload};
use crate::workload::build::schedule::{affine_micro_batches, steady_counts};
use crate::workload::graph::interference::{memory_phase_s, NetworkSetup, Sharing};
use crate::workload::graph::{task::COMPUTE, Graph};

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
    /// Upper bound on the engine's work re-rating flows, in link usages
    /// visited: each flow that joins or leaves makes the network re-rate
    /// the component of links it shares (`sim::network`), visiting every
    /// class that can move there across each of its links. This, not the
    /// events alone, is what drives the time of a step whose many
    /// concurrent flows share a core (issue 45's 86 s inference step).
    pub rerate_work: u64,
    /// Bars a timeline of the run draws (a compute op's one, a collective's
    /// one per member lane): what a trace of the step is sized from before
    /// it is built (`input::trace_size::trace_refusal`).
    pub bars: u64,
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
            rerate_work: self.rerate_work + o.rerate_work,
            bars: self.bars.max(o.bars),
        }
    }
}

/// Operations one counting build may hold. The cost of any step is
/// predicted from at most four builds of it at two micro-batch counts and
/// two layer counts (see [`ShapeCost`]), each held to this: a build costs
/// about 100 bytes and 80 ns per op (the 1T step's counting builds,
/// measured with `overlap-lab link` on this project's 2-core machine), so
/// the builds a refusal makes stay near 30 MB and a few tens of ms
/// whatever the scenario's size. A step whose smallest builds are over it
/// (a pipeline of thousands of stages, or an interleaved one of over a
/// hundred stages x virtual stages) is refused as too long to count.
pub const MAX_COUNTED_OPS: u64 = 1_000_000;

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

/// The scenario with another layer count.
fn with_layers(s: &Scenario, layers: u32) -> Scenario {
    let mut x = s.clone();
    if let Workload::Transformer(t) = &mut x.workload {
        t.layers = layers;
    }
    x
}

/// One reduced run of the scenario: predicted ([`predict`]), or, for a
/// scenario too long to predict (never one the validator accepts), counted
/// from its full build.
pub fn run_cost(s: &Scenario) -> Cost {
    run_cost_within(s, u64::MAX).unwrap_or_else(|| {
        let g = crate::workload::build::build_capped(
            s,
            Fidelity::Reduced,
            0,
            usize::MAX,
            false,
            &crate::collective::Libraries::of(s),
        );
        graph_cost(&g, &Sharing::of(s))
    })
}

/// As [`cost`], or `None` when a run holds more than `cap_ops` ops or the
/// scenario is too long to predict (see [`MAX_COUNTED_OPS`]). Nothing is
/// built in proportion to the step.
pub fn cost_within(s: &Scenario, cap_ops: u64) -> Option<Cost> {
    let off = s.all_overlap_off();
    let run = run_cost_within(s, cap_ops)?;
    if off == *s {
        Some(run)
    } else {
        Some(run.then(run_cost_within(&off, cap_ops)?))
    }
}

/// As [`run_cost`], or `None` when the run holds more than `cap_ops` ops or
/// is too long to predict.
pub fn run_cost_within(s: &Scenario, cap_ops: u64) -> Option<Cost> {
    predict(s).filter(|c| c.ops <= cap_ops)
}

/// Whether the scenario's cost can be predicted within [`MAX_COUNTED_OPS`]
/// per counting build, it and its all-off baseline.
pub fn countable(s: &Scenario) -> bool {
    predict(s).is_some() && predict(&s.all_overlap_off()).is_some()
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

/// The scenario's [`Budget`], predicted (see [`predict`]): `None` when the
/// scenario is too long to predict (its counting builds would hold more
/// than [`MAX_COUNTED_OPS`]). `_run_cap` is kept for callers: nothing built
/// here grows with it.
pub fn budget_within(s: &Scenario, _run_cap: u64) -> Option<Budget> {
    let off = s.all_overlap_off();
    let mut budget: Option<Budget> = None;
    for s in std::iter::once(s).chain((off != *s).then_some(&off)) {
        let step = predict(s)?;
        let runs = match steady_counts(s) {
            Some(counts) => counts
                .map(|m| predict(&with_micro_batches(s, m)))
                .into_iter()
                .collect::<Option<Vec<_>>>()?,
            None => vec![step],
        };
        // A step still settling at those counts is run again at later
        // margins (`later_steady_counts`), each margin's three runs cheaper
        // than the whole step, which the fallback may run anyway: not
        // counted here; `steady_state` makes a later run only within the
        // memory of one run.
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

/// Operations a run of the scenario holds at the least, by arithmetic on
/// its shape: each layer runs at least one op per micro-batch and pass
/// (forward; and backward in training), and each pipeline boundary at least
/// one send per micro-batch and direction. Refuses a build before it is
/// made (and allocates) when even this is over the counting limit.
pub fn ops_floor(s: &Scenario) -> u64 {
    let Workload::Transformer(t) = &s.workload else {
        return 0;
    };
    let passes = if t.mode == crate::model::scenario::Mode::Train {
        2
    } else {
        1
    };
    let m = u64::from(s.micro_batches());
    let vst = u64::from(s.parallel.pp) * u64::from(s.parallel.virtual_stages);
    passes * m * (u64::from(t.layers) + vst.saturating_sub(1))
}

/// The cost of one reduced run, predicted without building it: see
/// [`ShapeCost`]. `None` when a counting build would hold more than
/// [`MAX_COUNTED_OPS`].
pub fn predict(s: &Scenario) -> Option<Cost> {
    if !matches!(s.workload, Workload::Transformer(_)) {
        return count_within(s, MAX_COUNTED_OPS);
    }
    ShapeCost::of(s)?.at(s)
}

/// A transformer run's cost as a function of its micro-batch count `m` and
/// layer count `layers`, its shape fixed otherwise: affine in `m` from
/// `base` on in steps of `unit` (`affine_micro_batches`), each micro-batch
/// running the same ops; and, the layers spread over the `vst` virtual
/// stages evenly but for `layers % vst` (`stage_layers`), affine in `q =
/// layers / vst` at a fixed remainder (a layout's run at its own depth).
/// Four builds, at `m` in {`base`, `base + unit`} and `q` in {1, 2}, give
/// it exactly at any size (or fewer, at the run's own `m` or `q` below
/// those); a test checks this against full builds on random shapes. The
/// builds are the smallest: one pipeline fill through two layers a stage.
struct ShapeCost {
    /// The micro-batch counts built: `[base, base + unit]`, or the run's own.
    m: [u32; 2],
    /// Layer rounds built: `[1, 2]`, or the run's own.
    q: [u32; 2],
    /// Counts at `(m[i], q[j])`.
    c: [[Cost; 2]; 2],
}

impl ShapeCost {
    fn of(s: &Scenario) -> Option<Self> {
        let Workload::Transformer(t) = &s.workload else {
            return None;
        };
        let (base, unit) = affine_micro_batches(s.parallel.schedule, s.parallel.pp);
        let vst = s.parallel.pp * s.parallel.virtual_stages;
        let (m, q) = (s.micro_batches(), t.layers / vst);
        let ms = if m > base + unit {
            [base, base + unit]
        } else {
            [m, m]
        };
        // Layers whose gradients fill a DP bucket from empty: the buckets
        // flush every `k` layers of a GPU, so the count is affine in `q` in
        // steps of `k` from `k` on (from there every chunk's run of layers
        // holds a flush, whatever its first bucket carried in).
        let k = bucket_period_layers(s, t, q);
        let q0 = k + q % k;
        let qs = if q > q0 + k { [q0, q0 + k] } else { [q, q] };
        let rem = t.layers % vst;
        let mut c = [[Cost::default(); 2]; 2];
        for (i, &mi) in ms.iter().enumerate() {
            for (j, &qj) in qs.iter().enumerate() {
                let built = with_layers(&with_micro_batches(s, mi), qj * vst + rem);
                if ops_floor(&built) > MAX_COUNTED_OPS {
                    return None;
                }
                c[i][j] = count_within(&built, MAX_COUNTED_OPS)?;
            }
        }
        Some(Self { m: ms, q: qs, c })
    }

    /// The count at the scenario's own `m` and `layers` (its shape the one
    /// this was built for); `None` should the result not fit a `u64`.
    fn at(&self, s: &Scenario) -> Option<Cost> {
        let Workload::Transformer(t) = &s.workload else {
            return None;
        };
        let vst = s.parallel.pp * s.parallel.virtual_stages;
        let steps = |x: u32, pts: [u32; 2]| -> i128 {
            if pts[1] == pts[0] {
                0
            } else {
                (i128::from(x) - i128::from(pts[0])) / i128::from(pts[1] - pts[0])
            }
        };
        let (u, v) = (
            steps(s.micro_batches(), self.m),
            steps(t.layers / vst, self.q),
        );
        let f = |get: fn(&Cost) -> u64| -> Option<u64> {
            let [[a, b], [c, d]] = self.c.map(|row| row.map(|x| i128::from(get(&x))));
            // a at (m0, q0), b at (m0, q1), c at (m1, q0), d at (m1, q1).
            let value = a + (c - a) * u + (b - a) * v + (d - c - b + a) * u * v;
            u64::try_from(value).ok()
        };
        Some(Cost {
            ops: f(|c| c.ops)?,
            events: f(|c| c.events)?,
            planned_events: f(|c| c.planned_events)?,
            peak_flows: f(|c| c.peak_flows)?,
            rerate_work: f(|c| c.rerate_work)?,
            bars: f(|c| c.bars)?,
        })
    }
}

/// Layers of a GPU whose gradients fill a DP bucket from empty, summed as
/// the builder sums them (`Builder::grads_final`); 1 where no buckets fill
/// layer by layer (FSDP reduces each layer's gradients itself; inference
/// has none). Past `q + 1` (more than a chunk of the run holds), or with a
/// pipeline layout, it is `q + 2`: the run is then counted at its own depth
/// (no bucket fills within a chunk from empty; a layout fixes each depth).
fn bucket_period_layers(s: &Scenario, t: &crate::model::scenario::Transformer, q: u32) -> u32 {
    use crate::model::scenario::{DpSharding, Mode};
    if s.parallel.pipeline_layout.is_some() {
        return q + 2;
    }
    if t.mode != Mode::Train || s.parallel.dp_sharding == DpSharding::Full {
        return 1;
    }
    let bytes = crate::workload::cost::params::layer_params(t, s.parallel.tp)
        * f64::from(s.overlap.grad_bytes);
    let bucket_bytes = s.overlap.bucket_mb * 1e6;
    let (mut pending, mut k) = (0.0, 0);
    while k <= q + 1 {
        pending += bytes;
        k += 1;
        if pending >= bucket_bytes {
            return k;
        }
    }
    q + 2
}

/// Builds the run and counts it, or `None` when it holds more than `cap_ops` ops.
///
/// The last few counts are kept (per thread), as a count depends on its
/// scenario and cap alone: a page that checks each new input asks again
/// for the same small builds, of the all-off baseline at every overlap
/// switch and of a scenario switched back, and the validator's search for
/// the largest value that fits asks for the same shape at many batches.
fn count_within(s: &Scenario, cap_ops: u64) -> Option<Cost> {
    thread_local! {
        static KEPT: std::cell::RefCell<std::collections::VecDeque<(Scenario, u64, Option<Cost>)>> =
            const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
    }
    /// Counts kept: the four small builds of a scenario and of its
    /// baseline, for a few scenarios.
    const KEPT_COUNTS: usize = 32;
    let kept = KEPT.with_borrow(|kept| {
        kept.iter()
            .find(|(k, cap, _)| *cap == cap_ops && k == s)
            .map(|e| e.2)
    });
    if let Some(cost) = kept {
        return cost;
    }
    let cap = usize::try_from(cap_ops).unwrap_or(usize::MAX);
    let g = crate::workload::build::build_for_count(s, cap);
    let cost = (!g.over_cap()).then(|| graph_cost(&g, &Sharing::of(s)));
    KEPT.with_borrow_mut(|kept| {
        if kept.len() == KEPT_COUNTS {
            kept.pop_front();
        }
        kept.push_back((s.clone(), cap_ops, cost));
    });
    cost
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
            c.bars += 1;
            c.events += 1;
            c.planned_events += 1;
            if memory_phase_s(g, sharing, id) > 0.0 {
                c.events += 1;
                c.planned_events += 1;
                c.peak_flows += 1;
                c.planned_events += 2 * (1 + components.hbm_classes[task.gpu as usize]);
                c.rerate_work += 2 * components.hbm_reach_work[task.gpu as usize];
            }
            continue;
        }
        let members = g.members_of(id as u32).len() as u64;
        c.bars += members;
        c.events += 2;
        c.planned_events += 1 + 2 * members;
        if task.work > 0.0 {
            c.peak_flows += 1;
            c.planned_events += 2 * components.classes_near(task.pattern);
            c.rerate_work += 2 * components.work_near(task.pattern);
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
    /// Per root resource, the link usages of the classes on its component:
    /// what one re-rating there visits at most.
    work: Vec<u64>,
    /// Per GPU, what re-rating its HBM visits at most: the usages of the
    /// classes that cross it and of every class on the link components
    /// those reach (a memory-bound kernel joining or leaving the HBM re-rates
    /// the collectives crossing it, and with them everything on their links:
    /// issue 45's 86 s inference step, whose every kernel re-rated all the
    /// pipeline sends sharing an oversubscribed core).
    hbm_reach_work: Vec<u64>,
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
        let mut used = vec![[false; Axis::COUNT]; g.patterns.len()];
        for t in &g.tasks {
            if t.axis != COMPUTE && t.work > 0.0 {
                used[t.pattern as usize][t.axis as usize] = true;
            }
        }
        let mut classes = vec![0u64; resources.max(1)];
        let mut hbm_classes = vec![0u64; g.gpus.len()];
        let mut work = vec![0u64; resources.max(1)];
        let mut hbm_work = vec![0u64; g.gpus.len()];
        // Per GPU, the link components of the classes crossing its HBM.
        let mut hbm_roots: Vec<Vec<u32>> = vec![Vec::new(); g.gpus.len()];
        for (p, axes) in used.iter().enumerate() {
            let n = axes.iter().filter(|u| **u).count() as u64;
            let usages = n * setup.patterns[p].len() as u64;
            classes[pattern_root[p] as usize] += n;
            work[pattern_root[p] as usize] += usages;
            for u in &setup.patterns[p] {
                if let Some(gpu) = (u.resource as usize).checked_sub(setup.links) {
                    hbm_classes[gpu] += n;
                    hbm_work[gpu] += usages;
                    if n > 0 {
                        hbm_roots[gpu].push(pattern_root[p]);
                    }
                }
            }
        }
        let hbm_reach_work = hbm_roots
            .into_iter()
            .zip(&hbm_work)
            .map(|(mut roots, own)| {
                roots.sort_unstable();
                roots.dedup();
                own + roots.iter().map(|&r| work[r as usize]).sum::<u64>()
            })
            .collect();
        Self {
            pattern_root,
            classes,
            hbm_classes,
            work,
            hbm_reach_work,
        }
    }

    fn work_near(&self, pattern: u32) -> u64 {
        self.work[self.pattern_root[pattern as usize] as usize]
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
                &crate::workload::build::build(
                    &s,
                    Fidelity::Reduced,
                    0,
                    &crate::collective::Libraries::of(&s),
                ),
                &Sharing::of(&s),
            );
            assert_eq!(run_cost(&s), full, "{json}");
        }
    }

    /// The prediction from the smallest builds equals the full build's
    /// count, on random shapes: every schedule, depth, batch, TP width and
    /// chunking, recomputation, sharding and bucket size (exact: the count
    /// is bilinear in micro-batches and layers per virtual stage); and the
    /// arithmetic floor is below it.
    #[test]
    fn predicted_equals_counted_on_random_shapes() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let schedules = [
            "1f1b",
            "gpipe",
            "interleaved",
            "zb-1p",
            "zb-2p",
            "zb-v",
            "dualpipe-v",
        ];
        let checked = std::cell::Cell::new(0);
        let mut runner = TestRunner::new(Config {
            cases: 160,
            ..Config::default()
        });
        let shape = (
            0..schedules.len(),
            prop_oneof![Just(1u32), Just(2), Just(4)],
            1u32..=3,
            (1u32..=7, 0u32..=7),
            1u32..=12,
            prop_oneof![Just(1u32), Just(2), Just(4)],
            (1u32..=4, any::<bool>(), any::<bool>(), any::<bool>()),
            (
                0usize..3,
                any::<bool>(),
                prop_oneof![Just(0.5f64), Just(7.0), Just(500.0)],
            ),
        );
        runner
            .run(
                &shape,
                |(sched, pp, vs, (q, rem), m, tp, (chunks, tp_on, sp, infer), (rc, dp_on, bucket))| {
                    let schedule = schedules[sched];
                    let vs = match schedule {
                        "interleaved" | "zb-v" | "dualpipe-v" => vs.max(2),
                        _ => 1,
                    };
                    let vs = if matches!(schedule, "zb-v" | "dualpipe-v") { 2 } else { vs };
                    let m = if schedule == "interleaved" { m * pp } else { m };
                    let mode = if infer && schedule == "gpipe" { "inference" } else { "train" };
                    let layers = pp * vs * q + rem % (pp * vs);
                    let recompute = ["none", "selective", "full"][rc];
                    let dp = 16 / (tp * pp);
                    let json = format!(
                        r#"{{"workload":{{"mode":"{mode}","layers":{layers},"hidden":512,"heads":8,"seq":256,"global_batch":{gb},"micro_batch":1,"recompute":"{recompute}","sequence_parallel":{sp}}},"parallel":{{"tp":{tp},"pp":{pp},"dp":{dp},"schedule":"{schedule}","virtual_stages":{vs}}},"overlap":{{"tp":{tp_on},"tp_chunks":{chunks},"dp":{dp_on},"bucket_mb":{bucket}}}}}"#,
                        gb = m * dp,
                        sp = sp && tp > 1,
                    );
                    let Ok(s) = parse_scenario(&json) else {
                        return Ok(());
                    };
                    checked.set(checked.get() + 1);
                    for s in [s.clone(), s.all_overlap_off()] {
                        let full = graph_cost(
                            &crate::workload::build::build(&s, Fidelity::Reduced, 0, &crate::collective::Libraries::of(&s)),
                            &Sharing::of(&s),
                        );
                        prop_assert_eq!(predict(&s), Some(full), "{}", json);
                        prop_assert!(ops_floor(&s) <= full.ops, "{}", json);
                    }
                    Ok(())
                },
            )
            .unwrap();
        assert!(checked.get() > 100, "only {} valid shapes", checked.get());
    }

    /// A kept count is only ever given back for its own scenario and cap.
    #[test]
    fn a_kept_count_is_its_own_scenarios_at_its_own_cap() {
        let s = parse_scenario(r#"{"workload":{"global_batch":24}}"#).unwrap();
        let fresh = |s: &Scenario| {
            graph_cost(
                &crate::workload::build::build(
                    s,
                    Fidelity::Reduced,
                    0,
                    &crate::collective::Libraries::of(s),
                ),
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
