//! The session's states: the worker's lifecycle, the request waiting for
//! it and the newest one posted.

use overlap_core::{Scenario, ScenarioInput};

use super::events::FiguresShown;

/// A request waiting for the worker.
#[derive(Clone, Debug)]
pub(super) struct Waiting {
    pub(super) gen: u64,
    /// When the input changed (ms since the epoch).
    pub(super) made_at: f64,
    pub(super) input: ScenarioInput,
    pub(super) scenario: Scenario,
}

/// The request the worker is computing.
#[derive(Clone, Debug)]
pub(super) struct InFlight {
    pub(super) gen: u64,
    pub(super) made_at: f64,
    pub(super) scenario: Scenario,
    /// When it was posted (the adapter's clock, ms).
    pub(super) started_ms: f64,
    /// Set when this run's figures came first and are shown.
    pub(super) figures: Option<FiguresShown>,
}

/// The worker's lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worker {
    /// None: one starts with the next request.
    Absent,
    /// Started; its message handler is not installed yet.
    Starting,
    /// Reads requests.
    Ready,
}

/// Where the newest posted request is.
#[derive(Clone, Debug)]
pub(super) enum Run {
    Idle,
    /// Posted to the worker, not answered yet (its figures may be shown).
    Running(Box<InFlight>),
    /// Answered: the page decodes its timeline, a slice at a time.
    Decoding {
        gen: u64,
        figures: Option<FiguresShown>,
    },
}

impl Run {
    pub(super) fn figures(&self) -> Option<FiguresShown> {
        match self {
            Run::Idle => None,
            Run::Running(f) => f.figures,
            Run::Decoding { figures, .. } => *figures,
        }
    }

    /// The run in flight with number `gen`, if it is the one.
    pub(super) fn running(&mut self, gen: u64) -> Option<&mut InFlight> {
        match self {
            Run::Running(f) if f.gen == gen => Some(f),
            _ => None,
        }
    }

    /// Takes the run in flight with number `gen`, leaving `Idle`.
    pub(super) fn take_running(&mut self, gen: u64) -> Option<InFlight> {
        self.running(gen)?;
        match std::mem::replace(self, Run::Idle) {
            Run::Running(f) => Some(*f),
            _ => None,
        }
    }
}
