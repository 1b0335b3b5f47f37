//! A step's timeline drawn from one short run: the run whose two marked
//! periods repeat bar for bar stands for the whole step, its second period
//! drawn again once per extra unit of micro-batches (`output::periods`).
//! The same run is the scenario's part of its figures, so it is made once.

use super::runner::Runner;
use super::steady::{
    marked_run_counts, marked_tally, tally_of, unit_of, within_one_run, PartRan, Ran,
};
use crate::model::fidelity::Fidelity;
use crate::model::scenario::Scenario;
use crate::output::periods::Repeat;
use crate::output::summary;
use crate::output::timeline::Timeline;
use crate::workload;
use crate::workload::build::run_cost::with_micro_batches;
use crate::workload::graph::interference::Sharing;

/// The step's timeline as one short run draws it: the run at the count
/// whose two marked periods stand for the next two counts
/// ([`marked_counts`]), with how its second period repeats up to the
/// scenario's count (`output::periods`), and the run as the scenario's
/// part of its figures (the same run [`parts`] lists: the two are made
/// once). `None` where the step has no such run, or where its two periods
/// do not repeat bar for bar.
pub(crate) fn timeline(sim: &Runner, s: &Scenario) -> Option<(Timeline, PartRan, Repeat)> {
    let unit = unit_of(s)?;
    marked_run_counts(s)
        .into_iter()
        .enumerate()
        .filter(|&(i, m)| i == 0 || within_one_run(s, m))
        .find_map(|(_, m)| timeline_at(sim, s, m, unit))
}

/// The step's timeline from one marked short run at `m` micro-batches, if
/// its two periods repeat bar for bar.
fn timeline_at(
    sim: &Runner,
    s: &Scenario,
    m: u32,
    unit: u32,
) -> Option<(Timeline, PartRan, Repeat)> {
    let short = with_micro_batches(s, m);
    let mut graph = workload::build(
        &short,
        sim.fidelity,
        sim.reserve(&short),
        &sim.libraries(&short),
    );
    let mut run = sim.run(&graph, true, true, &Sharing::of(&short));
    graph.release_dependencies();
    let repeat = Repeat {
        marks_s: run
            .marks
            .iter()
            .map(|mark| mark.time_s)
            .collect::<Vec<_>>()
            .try_into()
            .ok()?,
        periods: (s.micro_batches() - m) / unit,
        unit,
    };
    let tallied = tally_of(sim, &graph, &run, m);
    // Its marked periods must repeat, as the figures' run's must.
    marked_tally(sim, s, unit, &tallied)?;
    let part = PartRan(Ran::Tally(vec![tallied]));
    let drawn = summary::timeline(&graph, &mut run, sim.fidelity == Fidelity::Reduced);
    repeat.holds_for(&drawn).then_some((drawn, part, repeat))
}
