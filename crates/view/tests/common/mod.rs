//! What the tour's chapter tests share: a chapter's two runs as the page
//! builds them, and readings of their timelines. Each test file uses some
//! of it, so the rest is dead code to that file.
#![allow(dead_code)]

use overlap_core::scenario::Workload;
use overlap_core::timeline::{Axis, Interval, Phase};
use overlap_core::{simulate, Report, Scenario, ScenarioInput, Simulation};
use overlap_view::tour::{Chapter, Outcome, CHAPTERS};
use std::collections::BTreeSet;

pub fn run(input: &ScenarioInput) -> Simulation {
    simulate(&input.resolve().expect("a chapter's scenario resolves"))
}

pub struct Runs {
    pub before: Simulation,
    pub after: Simulation,
}

impl Runs {
    pub fn outcome(&self) -> Outcome<'_> {
        Outcome {
            before: &self.before.report,
            after: &self.after.report,
        }
    }
}

pub fn runs(title_start: &str) -> (&'static Chapter, Runs) {
    let c = CHAPTERS
        .iter()
        .find(|c| c.title.starts_with(title_start))
        .unwrap_or_else(|| panic!("no chapter titled {title_start}…"));
    let before = run(&c.before_input().expect("the chapter's preset exists"));
    let after = run(&c.after_input().expect("the chapter's preset exists"));
    (c, Runs { before, after })
}

pub fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-9)
}

/// End of the last backward compute op on a GPU, seconds.
pub fn last_backward_end_s(sim: &Simulation, gpu: usize) -> f64 {
    sim.timeline.gpus[gpu]
        .compute
        .iter()
        .filter(|i| i.phase == Phase::Backward)
        .map(|i| i.end_s)
        .fold(f64::NEG_INFINITY, f64::max)
}

/// Exposed equals the traffic: every op of the axis waits in full.
pub fn all_exposed(r: &Report, a: Axis) -> bool {
    let x = r.axes.get(a);
    x.comm_ms > 0.0 && close(x.exposed_ms, x.comm_ms, 1e-6)
}

/// How long two intervals run at the same time, seconds.
pub fn together_s(a: &Interval, b: &Interval) -> f64 {
    (a.end_s.min(b.end_s) - a.start_s.max(b.start_s)).max(0.0)
}

/// The chapter's scenario before its change, resolved.
pub fn scenario_before(c: &Chapter) -> Scenario {
    c.before_input()
        .expect("the chapter's preset exists")
        .resolve()
        .expect("it resolves")
}

/// The scenario's transformer (every chapter past the first runs one).
pub fn transformer(s: &Scenario) -> &overlap_core::scenario::Transformer {
    let Workload::Transformer(t) = &s.workload else {
        panic!("a transformer");
    };
    t
}

/// Busy time of the first GPU's compute ops that `keep` keeps, seconds.
pub fn busy_s(sim: &Simulation, keep: impl Fn(&Interval) -> bool) -> f64 {
    sim.timeline.gpus[0]
        .compute
        .iter()
        .filter(|x| keep(x))
        .map(|x| x.end_s - x.start_s)
        .sum()
}

/// A compute lane's busy time, seconds.
/// The first compute op on `g` that starts at or after `t_s`.
pub fn first_compute_after(g: &overlap_core::timeline::GpuLanes, t_s: f64) -> Option<&Interval> {
    g.compute
        .iter()
        .filter(|x| x.start_s >= t_s - 1e-12)
        .min_by(|x, y| x.start_s.total_cmp(&y.start_s))
}

/// The micro-batches whose compute a GPU's lanes show.
pub fn micro_batches_of(g: &overlap_core::timeline::GpuLanes) -> BTreeSet<u32> {
    g.compute
        .iter()
        .map(|i| i.micro_batch)
        .filter(|&m| m != overlap_core::timeline::NONE)
        .collect()
}

pub fn compute_busy_s(g: &overlap_core::timeline::GpuLanes) -> f64 {
    g.compute.iter().map(|x| x.end_s - x.start_s).sum()
}

/// The GPU whose busy compute is the report's `compute_ms`.
pub fn reported_gpu(sim: &Simulation) -> usize {
    let want_s = sim.report.compute_ms / 1e3;
    let found: Vec<usize> = (0..sim.timeline.gpus.len())
        .filter(|&g| close(compute_busy_s(&sim.timeline.gpus[g]), want_s, 1e-6))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0]
}

/// The passes stage `stage` runs merged with another, as (phase, micro-batch,
/// chunk): the builder's rule, a forward followed by a backward of another
/// micro-batch or chunk runs as one merged pass.
pub fn merged_steps(s: &Scenario, stage: u32, micro_batches: u32) -> BTreeSet<(Phase, u32, u32)> {
    use overlap_core::schedule::{stage_program, Pass};
    let p = &s.parallel;
    let program = stage_program(
        p.schedule,
        stage,
        p.pp,
        micro_batches,
        p.virtual_stages,
        true,
    );
    let program = overlap_core::workload::build::schedule::merged_passes::merged_order(s, program);
    let mut merged = BTreeSet::new();
    for w in program.windows(2) {
        let (f, b) = (w[0], w[1]);
        if f.pass == Pass::Forward
            && matches!(b.pass, Pass::Backward | Pass::InputGrad)
            && (f.micro_batch, f.chunk) != (b.micro_batch, b.chunk)
        {
            merged.insert((Phase::Forward, f.micro_batch, f.chunk));
            merged.insert((Phase::Backward, b.micro_batch, b.chunk));
        }
    }
    merged
}
