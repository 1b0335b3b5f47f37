//! A search's result as the page shows it ([`Found`]): the core's
//! [`Outcome`] without what only the command line prints, with each listed
//! candidate's scenario and the simulated candidates as points. It crosses
//! from the search worker to the page whole, so it is bounded
//! ([`MAX_POINTS`]) whatever the space.

use serde::{Deserialize, Serialize};

use super::front::Objective;
use super::outcome::{Outcome, Ranked, Refusals};
use crate::input::parse::ScenarioInput;

/// Candidates of one search drawn as points: every simulated one up to
/// this many (the scatter's dots), the rest counted only. Keeps the reply
/// and the picture bounded whatever the space.
pub const MAX_POINTS: usize = 2_000;

/// One simulated candidate as the scatter draws it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FoundPoint {
    /// Step time, ms.
    pub step_ms: f64,
    /// Memory of its fullest GPU, GB.
    pub memory_gb: f64,
}

/// One listed candidate: the best, or on the front.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FoundRow {
    /// Its place among every simulated candidate by the objective, from 1.
    pub rank: usize,
    /// The layout's canonical description.
    pub description: String,
    /// Step time, ms.
    pub step_ms: f64,
    /// Memory of its fullest GPU, GB.
    pub memory_gb: f64,
    /// Model FLOPs utilisation, 0..1.
    pub mfu: f64,
    /// Whether it is on the step-time/memory Pareto front.
    pub on_front: bool,
    /// Its scenario: the page loads it when the row is chosen.
    pub input: ScenarioInput,
}

impl FoundRow {
    fn of(r: &Ranked) -> Self {
        Self {
            rank: r.rank,
            description: r.description.clone(),
            step_ms: r.figures.step_time_ms,
            memory_gb: r.figures.memory_gb,
            mfu: r.figures.mfu,
            on_front: r.on_front,
            input: r.scenario.clone(),
        }
    }
}

/// A search's result as the page shows it: the core's [`Outcome`] without
/// what only the command line prints, with each listed candidate's
/// scenario and the simulated candidates as points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Found {
    /// GPUs the model was laid out on.
    pub gpus: u64,
    /// What the best list is ranked by.
    pub objective: Objective,
    /// The memory of one GPU, GB (`hardware.hbm_gb`): the scatter's line.
    pub hbm_gb: f64,
    /// Candidates enumerated.
    pub space: u64,
    /// Candidates refused, by reason.
    pub refusals: Refusals,
    /// Candidates pruned by their lower bound.
    pub pruned: u64,
    /// Candidates simulated.
    pub simulated: u64,
    /// Why the first of the best list is first, against the second.
    pub winner: Option<String>,
    /// The scenario's own layout against the fastest found (`Outcome::given`).
    pub given: Option<String>,
    /// The best, by the objective.
    pub best: Vec<FoundRow>,
    /// The Pareto front, fastest first.
    pub front: Vec<FoundRow>,
    /// The simulated candidates, at most [`MAX_POINTS`], in the order simulated.
    pub points: Vec<FoundPoint>,
}

impl Found {
    /// The page's view of `outcome`, on GPUs of `hbm_gb`.
    pub fn of(outcome: &Outcome, hbm_gb: f64) -> Self {
        Self {
            gpus: outcome.gpus,
            objective: outcome.objective,
            hbm_gb,
            space: outcome.space,
            refusals: outcome.refusals.clone(),
            pruned: outcome.pruned,
            simulated: outcome.simulated,
            winner: outcome.winner.clone(),
            given: outcome.given.clone(),
            best: outcome.best.iter().map(FoundRow::of).collect(),
            front: outcome.front.iter().map(FoundRow::of).collect(),
            points: outcome
                .checked
                .iter()
                .take(MAX_POINTS)
                .map(|c| FoundPoint {
                    step_ms: c.step_time_ms,
                    memory_gb: c.memory_gb,
                })
                .collect(),
        }
    }

    /// Candidates refused, all reasons.
    pub fn refused(&self) -> u64 {
        self.refusals.total()
    }

    /// One sentence of what the search did: the space, and how many
    /// candidates it refused (by reason), pruned and simulated.
    pub fn counts(&self) -> String {
        let r = &self.refusals;
        format!(
            "{} layouts on {} GPUs: {} refused ({} do not fit in memory, {} do not divide, {} above a limit), {} pruned by their lower bound, {} simulated.",
            self.space, self.gpus, self.refused(), r.memory, r.divide, r.limit, self.pruned, self.simulated
        )
    }
}

impl Found {
    /// The listed candidates as CSV (the page's "Download plot CSV"): the
    /// best, then the front's members not among them.
    pub fn csv(&self) -> String {
        let mut out = String::from("rank,layout,step_ms,memory_gb,mfu,on_front\n");
        let mut listed: Vec<&FoundRow> = self.best.iter().collect();
        for r in &self.front {
            if !listed.iter().any(|b| b.description == r.description) {
                listed.push(r);
            }
        }
        for r in listed {
            out += &format!(
                "{},\"{}\",{},{},{},{}\n",
                r.rank,
                r.description.replace('"', "\"\""),
                r.step_ms,
                r.memory_gb,
                r.mfu,
                r.on_front
            );
        }
        out
    }
}
