//! `overlap-lab search`: the core's layout search (`overlap_core::search`)
//! as a table, JSON or CSV, with its progress on standard error.

use std::time::{Duration, Instant};

use overlap_core::search::{self, Dimension, Objective, Options, Outcome, Ranked};
use overlap_core::{Axis, ScenarioInput};

use crate::cli::SearchArgs;

/// How often a long search says where it stands on standard error.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Runs the search `a` asks for on `input`.
pub fn run(a: &SearchArgs, input: &ScenarioInput) -> Result<String, String> {
    let fix = match &a.fix {
        Some(list) => list
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(Dimension::from_path)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("--fix: {e}"))?,
        None => Vec::new(),
    };
    let options = Options {
        gpus: a.gpus,
        objective: a.objective.into(),
        top: a.top as usize,
        max_batch: a.max_batch,
        fix,
        ..Options::default()
    };
    let started = Instant::now();
    let mut last = started;
    let outcome = search::search(input, &options, |p| {
        let now = Instant::now();
        if now.duration_since(last) >= PROGRESS_EVERY {
            last = now;
            eprintln!(
                "overlap-lab search: {} simulated, {} pruned, {} refused, {} to go of {} ({:.0} s)",
                p.simulated,
                p.pruned,
                p.refused,
                p.remaining,
                p.space,
                now.duration_since(started).as_secs_f64()
            );
        }
    })?;
    if a.format.json {
        return Ok(serde_json::to_string_pretty(&outcome).expect("outcomes serialise") + "\n");
    }
    if a.format.csv {
        return Ok(search::csv(&outcome));
    }
    Ok(table(&outcome, started.elapsed()))
}

/// The axes any listed candidate reports.
fn axes(outcome: &Outcome) -> Vec<Axis> {
    Axis::ALL
        .into_iter()
        .filter(|a| {
            outcome
                .best
                .iter()
                .chain(&outcome.front)
                .any(|r| r.figures.exposed_ms.contains_key(a.name()))
        })
        .collect()
}

fn header(axes: &[Axis]) -> String {
    let mut out = format!(
        "  {:>4} {:>11} {:>10} {:>9} {:>11} {:>10}",
        "rank", "step ms", "ms/sample", "memory GB", "compute ms", "bubble ms"
    );
    for a in axes {
        out += &format!(" {:>9}", format!("{} exp ms", a.name()));
    }
    out += "  front  layout\n";
    out
}

fn row(r: &Ranked, axes: &[Axis]) -> String {
    let f = &r.figures;
    let mut out = format!(
        "  {:>4} {:>11.1} {:>10.3} {:>9.1} {:>11.1} {:>10.1}",
        r.rank, f.step_time_ms, r.time_per_sample_ms, f.memory_gb, f.compute_ms, f.bubble_ms
    );
    for a in axes {
        out += &format!(
            " {:>9.1}",
            f.exposed_ms.get(a.name()).copied().unwrap_or(0.0)
        );
    }
    out += &format!(
        "  {:>5}  {}\n",
        if r.on_front { "*" } else { "" },
        r.description
    );
    out
}

/// The human-readable result: what was searched, the counts, the best
/// list, the front, and why the winner wins.
fn table(o: &Outcome, took: Duration) -> String {
    let batch = match (o.max_batch, o.global_batch) {
        (Some(b), _) => format!("max batch {b}"),
        (None, Some(b)) => format!("global batch {b}"),
        (None, None) => String::new(),
    };
    let r = &o.refusals;
    let mut out = format!(
        "# search: {} GPUs, {batch}, {} candidates in {:.1} s: {} refused ({} do not fit in memory, \
         {} do not divide, {} above a limit), {} pruned by their lower bound, {} simulated\n",
        o.gpus,
        o.space,
        took.as_secs_f64(),
        o.refused,
        r.memory,
        r.divide,
        r.limit,
        o.pruned,
        o.simulated
    );
    if !o.fixed.is_empty() {
        out += &format!("# fixed to the scenario's values: {}\n", o.fixed.join(", "));
    }
    let axes = axes(o);
    let ranked_by = match o.objective {
        Objective::Step => "step time",
        Objective::Memory => "memory",
        Objective::Both => "the Pareto front",
    };
    out += &format!("\n# best {} by {ranked_by}\n", o.best.len());
    out += &header(&axes);
    for r in &o.best {
        out += &row(r, &axes);
    }
    out += &format!(
        "\n# step-time/memory Pareto front: {} layouts (none faster with as little memory)\n",
        o.front.len()
    );
    out += &header(&axes);
    for r in &o.front {
        out += &row(r, &axes);
    }
    match &o.winner {
        Some(w) => {
            out += &format!("\n{w}\n");
            if let Some(g) = &o.given {
                out += &format!("\nAgainst the scenario's own layout: {g}\n");
            }
        }
        None => {
            out += "\nNo layout fits: every candidate was refused (see the counts above).\n";
            for (reason, example) in &r.examples {
                out += &format!("  for example ({reason}): {example}\n");
            }
        }
    }
    out
}
