//! What a pane file implements ([`PlotPane`]) and what it reads
//! ([`Frame`]): the page's state and the panes' jobs.

use std::rc::Rc;

use leptos::prelude::*;
use overlap_core::{Scenario, ScenarioInput};
use overlap_view::panes::{Pane, DEFAULT_SWEEP_FIELD};
use overlap_view::plot::Plot;

use super::curves::Curves;
use super::searcher::Searcher;
use crate::state::AppState;

/// The plots' height, CSS px (the width is the column's).
pub const PLOT_HEIGHT_PX: f64 = 380.0;

/// What every pane reads: the page's state and the panes' jobs.
#[derive(Clone, Copy)]
pub struct Frame {
    pub state: AppState,
    curves: StoredValue<Rc<Curves>, LocalStorage>,
    searcher: StoredValue<Rc<Searcher>, LocalStorage>,
}

impl Frame {
    /// The frame of the page's panes, over their jobs.
    pub fn new(state: AppState, curves: Rc<Curves>, searcher: Rc<Searcher>) -> Self {
        Self {
            state,
            curves: StoredValue::new_local(curves),
            searcher: StoredValue::new_local(searcher),
        }
    }

    /// The search pane's job.
    pub fn searcher(&self) -> Rc<Searcher> {
        self.searcher.get_value()
    }

    /// The sweep and bus-bandwidth panes' job.
    pub fn curves(&self) -> Rc<Curves> {
        self.curves.get_value()
    }
}

/// A pane with a picture of its own, as the frame mounts it.
pub trait PlotPane: Sync {
    /// Asks its job for what `pane` (this pane, as the link or the picker
    /// opened it) shows of the page's `input`.
    fn update(&self, frame: Frame, pane: &Pane, input: &ScenarioInput);
    /// Every pane closed: its job's worker goes.
    fn close(&self, frame: Frame);
    /// Subscribes the caller to what redraws the picture: its job's replies.
    fn track(&self, frame: Frame);
    /// What stopped its job, if anything did (reactive).
    fn problem(&self, frame: Frame) -> Option<String>;
    /// What it shows above its picture: its controls and status.
    fn above(&self, frame: Frame) -> AnyView;
    /// What it shows below its picture's exports: its points as a list.
    fn below(&self, frame: Frame) -> AnyView;
    /// Its picture at `width` CSS px, `scenario` marked in it, once there
    /// is something to draw.
    fn picture(&self, frame: Frame, scenario: Option<&Scenario>, width: f64) -> Option<Plot>;
    /// Its points as CSV.
    fn csv(&self, frame: Frame) -> String;
    /// The reader clicked the picture at mark `index`.
    fn clicked(&self, _frame: Frame, _index: usize) {}
}

/// The [`PlotPane`] methods of a pane whose job is the curves' worker
/// (`curves`): the sweep and bus-bandwidth panes share it, and so what
/// closing, tracking and a problem mean.
macro_rules! curves_job {
    () => {
        fn close(&self, frame: Frame) {
            frame.curves().close();
        }

        fn track(&self, frame: Frame) {
            frame.curves().version.track();
        }

        fn problem(&self, frame: Frame) -> Option<String> {
            frame.curves().problem.get()
        }
    };
}
pub(crate) use curves_job;

/// The field the sweep pane opens on: the one swept now, else the default.
pub fn sweep_field(state: AppState) -> String {
    match state.pane.get() {
        Pane::Sweep { field, .. } => field,
        _ => DEFAULT_SWEEP_FIELD.to_string(),
    }
}
