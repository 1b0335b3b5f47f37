//! What a search gives: the best layouts, the front, the refusals by
//! reason, the counts, and a sentence on why the winner wins.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::front::{compare, front, Objective, Point};
use super::lead::{lead, PartPair};
use super::options::Options;
use super::space::{recompute_name, sharding_name, Layout};
use crate::input::parse::ScenarioInput;
use crate::model::axis::Axis;
use crate::model::scenario::Scenario;
use crate::output::report::Report;

/// Why a candidate was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Its fullest GPU needs more memory than it has.
    Memory,
    /// The core's checks refuse it: a degree that does not divide what it
    /// splits, or a combination the scenario format does not take.
    Divide,
    /// A value above its field's range, or a step over the simulator's
    /// cost budget.
    Limit,
}

/// Refused candidates by reason, with the first message of each.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Refusals {
    /// Does not fit in memory.
    pub memory: u64,
    /// Does not divide (or does not combine).
    pub divide: u64,
    /// Above a limit.
    pub limit: u64,
    /// The first refusal of each reason, in the space's order, as the
    /// core words it.
    pub examples: BTreeMap<String, String>,
}

impl Refusals {
    /// Counts one refusal.
    pub fn add(&mut self, reason: Reason, message: &str) {
        let (count, name) = match reason {
            Reason::Memory => (&mut self.memory, "memory"),
            Reason::Divide => (&mut self.divide, "divide"),
            Reason::Limit => (&mut self.limit, "limit"),
        };
        *count += 1;
        self.examples
            .entry(name.to_string())
            .or_insert_with(|| message.to_string());
    }

    /// Every refusal.
    pub fn total(&self) -> u64 {
        self.memory + self.divide + self.limit
    }
}

/// Where a search stands, after each wave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Candidates in the space.
    pub space: u64,
    /// Candidates simulated so far.
    pub simulated: u64,
    /// Candidates pruned so far.
    pub pruned: u64,
    /// Candidates refused so far (all of screening's, and the budget's so far).
    pub refused: u64,
    /// Candidates not yet simulated, pruned or refused.
    pub remaining: u64,
}

/// A simulated candidate's figures (from its report).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// The step, ms.
    pub step_time_ms: f64,
    /// The slowest GPU's compute, ms.
    pub compute_ms: f64,
    /// The slowest GPU's bubble (idle charged to no axis), ms.
    pub bubble_ms: f64,
    /// Exposed communication per axis, ms, keyed by the axis's name.
    pub exposed_ms: BTreeMap<String, f64>,
    /// Memory of the fullest GPU, GB.
    pub memory_gb: f64,
    /// Model FLOPs utilisation against the precision's peak.
    pub mfu: f64,
}

impl Figures {
    /// The figures of `s`'s report.
    pub fn of(s: &Scenario, r: &Report) -> Self {
        Self {
            step_time_ms: r.step_time_ms,
            compute_ms: r.compute_ms,
            bubble_ms: r.bubble_fraction * r.step_time_ms,
            exposed_ms: Axis::ALL
                .into_iter()
                .filter(|&a| s.has_axis(a))
                .map(|a| (a.name().to_string(), r.axes.get(a).exposed_ms))
                .collect(),
            memory_gb: r.memory_gb.total,
            mfu: r.mfu,
        }
    }
}

/// A simulated candidate as the lists show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ranked {
    /// Its place among every simulated candidate by the objective, from 1.
    pub rank: usize,
    /// The layout's canonical description.
    pub description: String,
    /// The fields it sets.
    pub layout: Layout,
    /// Its figures.
    #[serde(flatten)]
    pub figures: Figures,
    /// The step over the global batch, ms per sample.
    pub time_per_sample_ms: f64,
    /// The lower bound the search held it to before simulating, ms.
    pub lower_bound_ms: f64,
    /// Whether it is on the step-time/memory Pareto front.
    pub on_front: bool,
    /// Its scenario input: the user's with the layout's fields set (the
    /// page opens it; `Outcome::scenario` is the winner's in the JSON).
    #[serde(skip)]
    pub scenario: ScenarioInput,
}

/// A search's result (`overlap-lab search --json`).
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// GPUs the model was laid out on.
    pub gpus: u64,
    /// What the best list is ranked by.
    pub objective: Objective,
    /// The scenario's global batch, when every layout runs it.
    pub global_batch: Option<u32>,
    /// The maximum batch, when each layout's is derived from it.
    pub max_batch: Option<u32>,
    /// Fields kept at the scenario's value.
    pub fixed: Vec<&'static str>,
    /// Candidates enumerated.
    pub space: u64,
    /// Candidates refused, all reasons.
    pub refused: u64,
    /// Candidates refused, by reason.
    pub refusals: Refusals,
    /// Candidates pruned by their lower bound.
    pub pruned: u64,
    /// Candidates simulated.
    pub simulated: u64,
    /// Proxy scenarios whose graphs the bounds were read from.
    pub proxies: u64,
    /// The best `top` by the objective.
    pub best: Vec<Ranked>,
    /// The Pareto front, fastest first.
    pub front: Vec<Ranked>,
    /// Why the first of the best list is first, against the second.
    pub winner: Option<String>,
    /// The scenario's own layout against the fastest found: within 10% of
    /// it, or which fields the fastest changes and how much faster it is
    /// (`against`); why it could not be compared otherwise. `None` when the
    /// best list is ranked by memory or empty.
    pub given: Option<String>,
    /// The first of the best list as scenario input (`overlap-lab simulate` runs it).
    pub scenario: Option<ScenarioInput>,
    /// Every simulated candidate: its description, bound and step, ms, in
    /// the order simulated (for tests of the bound; not in the JSON).
    #[serde(skip)]
    pub checked: Vec<Checked>,
}

/// A simulated candidate's bound against its step.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    /// The layout's canonical description.
    pub description: String,
    /// Its lower bound, ms.
    pub lower_bound_ms: f64,
    /// Its simulated step, ms.
    pub step_time_ms: f64,
    /// Its memory, GB.
    pub memory_gb: f64,
}

/// Counts the driver hands over.
pub(crate) struct Counts {
    pub space: u64,
    pub refusals: Refusals,
    pub pruned: u64,
    pub proxies: u64,
}

/// The outcome from every simulated candidate: `(index into layouts,
/// bound in seconds, figures)`.
pub(crate) fn assemble(
    input: &ScenarioInput,
    filled: &Scenario,
    options: &Options,
    layouts: &[Layout],
    done: Vec<(usize, f64, Figures)>,
    counts: Counts,
) -> Outcome {
    let points: Vec<Point> = done
        .iter()
        .map(|(i, _, f)| Point {
            time_s: f.step_time_ms / 1e3 / f64::from(layouts[*i].global_batch.max(1)),
            memory_gb: f.memory_gb,
            description: layouts[*i].describe(),
        })
        .collect();
    let mut order: Vec<usize> = (0..done.len()).collect();
    order.sort_by(|&a, &b| compare(options.objective, &points[a], &points[b]));
    let mut rank = vec![0; done.len()];
    for (r, &k) in order.iter().enumerate() {
        rank[k] = r + 1;
    }
    let on_front = front(&points);
    let mut is_front = vec![false; done.len()];
    for &k in &on_front {
        is_front[k] = true;
    }
    let ranked = |k: usize| {
        let (i, bound_s, f) = &done[k];
        let layout = layouts[*i];
        Ranked {
            rank: rank[k],
            description: points[k].description.clone(),
            layout,
            figures: f.clone(),
            time_per_sample_ms: points[k].time_s * 1e3,
            lower_bound_ms: bound_s * 1e3,
            on_front: is_front[k],
            scenario: layout.apply(input, filled),
        }
    };
    let best: Vec<Ranked> = match options.objective {
        Objective::Both => on_front
            .iter()
            .copied()
            .take(options.top.max(1))
            .map(ranked)
            .collect(),
        _ => order
            .iter()
            .copied()
            .take(options.top.max(1))
            .map(ranked)
            .collect(),
    };
    let front_list: Vec<Ranked> = on_front.iter().copied().map(ranked).collect();
    let checked = done
        .iter()
        .zip(&points)
        .map(|((_, bound_s, f), p)| Checked {
            description: p.description.clone(),
            lower_bound_ms: bound_s * 1e3,
            step_time_ms: f.step_time_ms,
            memory_gb: f.memory_gb,
        })
        .collect();
    let winner = best
        .first()
        .map(|w| sentence(w, best.get(1), options.max_batch.is_some()));
    let scenario = best.first().map(|w| w.scenario.clone());
    let model_batch = match &filled.workload {
        crate::model::scenario::Workload::Transformer(t) => Some(t.global_batch),
        _ => None,
    };
    let mut fixed: Vec<&'static str> = options.fix.iter().map(|d| d.path()).collect();
    fixed.sort_unstable();
    fixed.dedup();
    Outcome {
        gpus: filled.hardware.gpus(),
        objective: options.objective,
        global_batch: options.max_batch.is_none().then_some(model_batch).flatten(),
        max_batch: options.max_batch,
        fixed,
        space: counts.space,
        refused: counts.refusals.total(),
        refusals: counts.refusals,
        pruned: counts.pruned,
        simulated: done.len() as u64,
        proxies: counts.proxies,
        best,
        front: front_list,
        winner,
        given: None,
        scenario,
        checked,
    }
}

/// How the best layout compares with a given one (a published layout, or
/// the scenario's own) simulated at `given_ms` per step: within
/// `tolerance` (0.1: 10%) of it, or which of its fields the best changes
/// and how much faster it is. Per sample where the two run different
/// global batches (a search with a maximum batch), else per step.
pub fn against(best: &Ranked, given: &Layout, given_ms: f64, tolerance: f64) -> String {
    let per_sample = best.layout.global_batch != given.global_batch;
    let (best_t, given_t, unit) = if per_sample {
        (
            best.time_per_sample_ms,
            given_ms / f64::from(given.global_batch.max(1)),
            "per sample",
        )
    } else {
        (best.figures.step_time_ms, given_ms, "per step")
    };
    if best_t >= given_t * (1.0 - tolerance) {
        return format!(
            "{} takes {} {unit}, within {:.0}% of the best found ({}: {})",
            given.describe(),
            time_text(given_t),
            tolerance * 100.0,
            best.description,
            time_text(best_t)
        );
    }
    let changes = changes(given, &best.layout);
    format!(
        "the best found ({}) takes {} {unit}, {:.1}% less than {} ({}): it changes {}",
        best.description,
        time_text(best_t),
        (1.0 - best_t / given_t) * 100.0,
        given.describe(),
        time_text(given_t),
        changes.join(", ")
    )
}

/// A field of a layout as [`changes`] writes it.
type Written = fn(&Layout) -> String;

/// The fields `to` sets differently from `from`, as "field a -> b".
pub fn changes(from: &Layout, to: &Layout) -> Vec<String> {
    // Each field as its name and how it is written, in the order listed.
    let fields: [(&str, Written); 18] = [
        ("tp", |l| l.tp.to_string()),
        ("cp", |l| l.cp.to_string()),
        ("pp", |l| l.pp.to_string()),
        ("dp", |l| l.dp.to_string()),
        ("ep", |l| l.ep.to_string()),
        ("schedule", |l| l.schedule.name().into()),
        ("virtual_stages", |l| l.virtual_stages.to_string()),
        ("micro_batch", |l| l.micro_batch.to_string()),
        ("global_batch", |l| l.global_batch.to_string()),
        ("recompute", |l| recompute_name(l.recompute).into()),
        ("sequence_parallel", |l| l.sequence_parallel.to_string()),
        ("dp_sharding", |l| sharding_name(l.dp_sharding).into()),
        ("overlap.tp", |l| l.overlap.tp.to_string()),
        ("overlap.pp", |l| l.overlap.pp.to_string()),
        ("overlap.dp", |l| l.overlap.dp.to_string()),
        ("overlap.ep", |l| l.overlap.ep.to_string()),
        ("overlap.cp", |l| l.overlap.cp.to_string()),
        ("overlap.param_gather", |l| {
            l.overlap.param_gather.to_string()
        }),
    ];
    fields
        .into_iter()
        .filter_map(|(name, write)| {
            let (a, b) = (write(from), write(to));
            (a != b).then(|| format!("{name} {a} -> {b}"))
        })
        .collect()
}

/// A time as a sentence writes it: seconds from one second up.
pub fn time_text(ms: f64) -> String {
    if ms.abs() >= 1000.0 {
        format!("{:.2} s", ms / 1e3)
    } else if ms.abs() >= 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.3} ms")
    }
}

/// The parts of a step the sentence compares: compute, each axis's exposed
/// time, the bubble; per step, or per sample (`per_sample`).
fn parts(r: &Ranked, per_sample: bool) -> Vec<(String, f64)> {
    let scale = if per_sample {
        1.0 / f64::from(r.layout.global_batch.max(1))
    } else {
        1.0
    };
    let mut out = vec![("compute".to_string(), r.figures.compute_ms * scale)];
    for (axis, ms) in &r.figures.exposed_ms {
        let label = Axis::from_name(axis).map_or(axis.as_str(), |a| a.label());
        out.push((format!("exposed {label}"), ms * scale));
    }
    out.push(("bubble".to_string(), r.figures.bubble_ms * scale));
    out
}

/// Why the winner is first: its figure against the runner-up's, the part
/// of the step (compute, an axis's exposed time, the bubble) it saves most
/// on, and the part it gives back, where that one differs more
/// ([`lead`]). With a maximum batch the layouts' batches differ, and the
/// parts compare per sample.
fn sentence(winner: &Ranked, runner_up: Option<&Ranked>, per_sample: bool) -> String {
    let Some(other) = runner_up else {
        return format!(
            "{} is the only layout simulated: {} per step, {:.1} GB on its fullest GPU.",
            winner.description,
            time_text(winner.figures.step_time_ms),
            winner.figures.memory_gb
        );
    };
    let unit = if per_sample { " per sample" } else { "" };
    let l = lead(&parts(winner, per_sample), &parts(other, per_sample));
    let (wt, ot) = if per_sample {
        (winner.time_per_sample_ms, other.time_per_sample_ms)
    } else {
        (winner.figures.step_time_ms, other.figures.step_time_ms)
    };
    let pair = |p: &PartPair| {
        format!(
            "{}: {}{unit} against {}{unit}",
            p.part,
            time_text(p.winner),
            time_text(p.runner_up)
        )
    };
    let why = match (&l.ahead, &l.behind) {
        (Some(a), None) => format!("it saves most on {}", pair(a)),
        (Some(a), Some(b)) => format!(
            "it saves most on {}, and gives back more on {}",
            pair(a),
            pair(b)
        ),
        (None, Some(b)) => format!(
            "no part of its step is smaller; it gives back most on {}",
            pair(b)
        ),
        (None, None) => "their steps' parts are equal".to_string(),
    };
    format!(
        "{} ranks first: {}{unit} and {:.1} GB, against {}{unit} and {:.1} GB for the runner-up ({}); {why}.",
        winner.description,
        time_text(wt),
        winner.figures.memory_gb,
        time_text(ot),
        other.figures.memory_gb,
        other.description,
    )
}

/// The best list and the front's other members as CSV, by rank: a header,
/// then one line per candidate.
pub fn csv(outcome: &Outcome) -> String {
    let mut rows: Vec<&Ranked> = outcome.best.iter().collect();
    for r in &outcome.front {
        if !rows.iter().any(|x| x.description == r.description) {
            rows.push(r);
        }
    }
    rows.sort_by_key(|r| r.rank);
    let mut out = String::from(
        "rank,on_front,tp,cp,pp,dp,ep,schedule,virtual_stages,micro_batch,global_batch,recompute,\
         sequence_parallel,dp_sharding,overlap_tp,overlap_pp,overlap_dp,overlap_ep,overlap_cp,\
         param_gather,step_time_ms,time_per_sample_ms,memory_gb,compute_ms,bubble_ms",
    );
    for a in Axis::ALL {
        out += &format!(",exposed_{}_ms", a.name());
    }
    out += ",mfu,lower_bound_ms\n";
    for r in rows {
        let l = &r.layout;
        let o = l.overlap;
        out += &format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.rank,
            r.on_front,
            l.tp,
            l.cp,
            l.pp,
            l.dp,
            l.ep,
            l.schedule.name(),
            l.virtual_stages,
            l.micro_batch,
            l.global_batch,
            recompute_name(l.recompute),
            l.sequence_parallel,
            sharding_name(l.dp_sharding),
            o.tp,
            o.pp,
            o.dp,
            o.ep,
            o.cp,
            o.param_gather,
            r.figures.step_time_ms,
            r.time_per_sample_ms,
            r.figures.memory_gb,
            r.figures.compute_ms,
            r.figures.bubble_ms
        );
        for a in Axis::ALL {
            out += &format!(
                ",{}",
                r.figures.exposed_ms.get(a.name()).copied().unwrap_or(0.0)
            );
        }
        out += &format!(",{},{}\n", r.figures.mfu, r.lower_bound_ms);
    }
    out
}
