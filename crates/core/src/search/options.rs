//! What a search is asked for ([`Options`]) and the bounds every search
//! keeps ([`MAX_SPACE`]).

use super::front::Objective;
use super::space::Dimension;
use crate::run::parallel;

/// The most candidates one search enumerates. Screening takes tens of
/// microseconds a candidate on one core and keeps under 100 bytes of each:
/// a million is under a minute on this project's 2-core machine and under
/// 100 MB. A project choice, not a measurement of a limit.
pub const MAX_SPACE: u64 = 1_000_000;

/// The best layouts listed when no `top` is given.
pub const DEFAULT_TOP: usize = 10;

/// What a search is asked for.
#[derive(Clone, Debug)]
pub struct Options {
    /// The GPUs to lay the model out on; `None`: the scenario's.
    pub gpus: Option<u64>,
    /// What the best list is ranked by.
    pub objective: Objective,
    /// How many best layouts to list.
    pub top: usize,
    /// With a maximum batch, each layout's global batch is the largest
    /// multiple of `dp x micro_batch` (x `pp` for the interleaved schedule)
    /// not above it, as Calculon's `llm-optimal-execution` takes the
    /// largest multiple of DP; `None`: the scenario's global batch.
    pub max_batch: Option<u32>,
    /// Fields kept at the scenario's value.
    pub fix: Vec<Dimension>,
    /// Threads to screen and simulate on.
    pub threads: usize,
    /// Simulate every candidate that fits, pruning none (for tests).
    pub exhaustive: bool,
    /// The most candidates enumerated; [`MAX_SPACE`] unless a test
    /// checks the refusal on a small space.
    pub max_space: u64,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            gpus: None,
            objective: Objective::Step,
            top: DEFAULT_TOP,
            max_batch: None,
            fix: Vec::new(),
            threads: parallel::available_threads(),
            exhaustive: false,
            max_space: MAX_SPACE,
        }
    }
}
