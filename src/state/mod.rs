//! The page's state in one place. The scenario is a `ScenarioInput` plus the
//! preset it started from; the view (zoom, playhead, tour chapter) sits in the
//! scene and the tour. Share links serialise exactly these.
//!
//! Signals carry what the page shows as text; the timeline itself lives in
//! the non-reactive `Scene` and is painted on a canvas.

use std::cell::RefCell;
use std::rc::Rc;

use leptos::prelude::*;
use overlap_core::presets::{self, Preset};
use overlap_core::{FieldError, Report, Scenario, ScenarioError, ScenarioInput};

pub mod fields;
use overlap_view::scene::Scene;
use overlap_view::shown_gpus::ShownGpus;
pub use overlap_view::tip::Tip;

pub type SceneRef = Rc<RefCell<Scene>>;

/// How many recent inputs [`resolve`] remembers: the edited input, its
/// preset's own, and a couple the tour or a link switch back to.
const RESOLVED_KEPT: usize = 8;

thread_local! {
    /// Inputs resolved lately on the main thread, newest last.
    static RESOLVED: RefCell<Vec<(ScenarioInput, Result<Scenario, ScenarioError>)>> =
        const { RefCell::new(Vec::new()) };
}

/// `input.resolve_unbudgeted()`, remembered: one change asks for the same
/// scenario several times (the run request, the "modified" mark for the
/// input and its preset, the address). The step's cost is not checked here
/// but in the worker, before it runs the step
/// (`crate::serve::scope::resolve`): the check builds slices of the step
/// and of its baseline, on the largest presets a long main-thread task. A
/// step over the budget is refused from there, beside the control the
/// budget names (`Action::FieldRefused`).
pub fn resolve(input: &ScenarioInput) -> Result<Scenario, ScenarioError> {
    if let Some(hit) = resolved_already(input) {
        return hit;
    }
    let result = input.resolve_unbudgeted();
    RESOLVED.with_borrow_mut(|kept| {
        if kept.len() == RESOLVED_KEPT {
            drop(kept.remove(0));
        }
        kept.push((input.clone(), result.clone()));
    });
    result
}

/// `resolve(input)` if it is remembered; never resolves.
fn resolved_already(input: &ScenarioInput) -> Option<Result<Scenario, ScenarioError>> {
    RESOLVED.with_borrow(|kept| {
        kept.iter()
            .rev()
            .find(|(i, _)| i == input)
            .map(|(_, r)| r.clone())
    })
}

#[derive(Clone, Copy)]
pub struct AppState {
    /// The preset the scenario started from.
    pub preset_id: RwSignal<String>,
    /// The scenario as the user set it: the single source of truth.
    pub input: RwSignal<ScenarioInput>,
    /// The last scenario that resolved; controls show its values for fields
    /// the input leaves to defaults.
    pub resolved: RwSignal<Option<Scenario>>,
    /// The core's refusals of the current input, each naming its field.
    pub errors: RwSignal<Vec<FieldError>>,
    pub report: RwSignal<Option<Report>>,
    /// The run before the current one, drawn as a ghost; only ever a run of
    /// the same preset, since the scenario last started over from it.
    pub ghost: RwSignal<Option<Report>>,
    /// Why the step moved from the ghost to the report, in one sentence
    /// (`overlap_view::why`); `None` without a ghost or when it did not move.
    pub why: RwSignal<Option<String>>,
    /// The preset the shown report's scenario started from; empty right
    /// after a preset is (re)loaded, so that the next run has no ghost.
    pub shown_preset: StoredValue<String>,
    /// Counts simulations shown (their figures), so that views depending on
    /// them refresh.
    pub run_seq: RwSignal<u64>,
    /// The simulation whose timeline the canvas shows (its `run_seq`): a
    /// large step's figures come first, and what is built from the timeline
    /// (the table, a link's view) follows this one.
    pub timeline_seq: RwSignal<u64>,
    pub playing: RwSignal<bool>,
    pub speed: RwSignal<f64>,
    /// Playhead as a fraction of the step, for the scrub slider.
    pub playhead: RwSignal<f64>,
    pub tip: RwSignal<Option<Tip>>,
    /// "Each simulated GPU stands for ..." and level-of-detail notes.
    pub represents_note: RwSignal<String>,
    pub lod_note: RwSignal<bool>,
    /// Which simulated GPU the link lanes belong to.
    pub link_gpu: RwSignal<usize>,
    /// Which simulated GPUs the lanes are drawn for.
    pub shown_gpus: RwSignal<ShownGpus>,
    /// Names of the simulated GPUs, for the link-lane picker.
    pub gpu_names: RwSignal<Vec<String>>,
    /// The guided tour's open chapter (0-based), for share links; `None` when closed.
    pub tour_chapter: RwSignal<Option<usize>>,
    pub scene: StoredValue<SceneRef, LocalStorage>,
    /// True while a simulation is requested, running or being decoded.
    pub busy: RwSignal<bool>,
    /// True while the figures shown are the newest run's and its timeline
    /// is still being simulated or decoded (a large run's figures come first).
    pub figures_ahead: RwSignal<bool>,
    /// Why the last requested run did not show (over budget, stopped, an
    /// internal error); cleared by the next run that shows.
    pub run_alert: RwSignal<Option<RunAlert>>,
    /// Fields whose change made the scenario invalid, for the controls to mark.
    pub culprits: RwSignal<Vec<String>>,
    /// Why the shown figures have no timeline (over the core's limit for
    /// one), shown in the timeline's place; `None` once a timeline shows.
    pub timeline_refused: RwSignal<Option<String>>,
    /// Counts the inputs the runner resolved: views that compare resolved
    /// scenarios (the "modified" mark) look again when it moves.
    pub resolve_seq: RwSignal<u64>,
    /// The sweep or bus-bandwidth picture open beside the timeline (`view=`).
    pub pane: RwSignal<overlap_view::panes::Pane>,
    /// The measured view's classification rules, as the link keeps them
    /// (`classify=`, checked by `classify_link::classify_rules`).
    pub classify: RwSignal<Option<String>>,
}

/// Why the last run did not show, in the page's alert.
#[derive(Clone, Debug, PartialEq)]
pub struct RunAlert {
    /// One sentence naming the cause and what the page shows instead.
    pub cause: String,
    /// The share link to report, for an internal error.
    pub report_link: Option<String>,
}

impl AppState {
    /// Whether the figures and the legend show `axis`: as the report has it
    /// (EP with experts, CP with cp > 1); TP, PP and DP before any scenario.
    pub fn shows_axis(&self, axis: overlap_core::Axis) -> bool {
        self.resolved.with(|s| {
            s.as_ref().map_or(
                !matches!(axis, overlap_core::Axis::Ep | overlap_core::Axis::Cp),
                |s| s.has_axis(axis),
            )
        })
    }

    /// Whether the figures give `axis` a card: an axis whose degree is 1
    /// moves nothing between GPUs, so its card would read 0 ms throughout
    /// (issue 58); one that still carries communication keeps its card.
    pub fn shows_axis_card(&self, axis: overlap_core::Axis) -> bool {
        let comm = self.report.with(|r| {
            r.as_ref()
                .is_some_and(|r| r.axes.has(axis) && r.axes.get(axis).comm_ms > 0.0)
        });
        self.shows_axis(axis)
            && (comm
                || self
                    .resolved
                    .with(|s| s.as_ref().is_none_or(|s| s.axis_degree(axis) > 1)))
    }

    pub fn new() -> Self {
        let preset = presets::default_preset();
        let input = preset.input();
        let resolved = resolve(&input).ok();
        Self {
            preset_id: RwSignal::new(preset.id.to_string()),
            input: RwSignal::new(input),
            resolved: RwSignal::new(resolved),
            errors: RwSignal::new(Vec::new()),
            report: RwSignal::new(None),
            ghost: RwSignal::new(None),
            why: RwSignal::new(None),
            shown_preset: StoredValue::new(String::new()),
            run_seq: RwSignal::new(0),
            timeline_seq: RwSignal::new(0),
            playing: RwSignal::new(false),
            speed: RwSignal::new(1.0),
            playhead: RwSignal::new(1.0),
            tip: RwSignal::new(None),
            represents_note: RwSignal::new(String::new()),
            lod_note: RwSignal::new(false),
            link_gpu: RwSignal::new(0),
            shown_gpus: RwSignal::new(ShownGpus::All),
            gpu_names: RwSignal::new(Vec::new()),
            tour_chapter: RwSignal::new(None),
            scene: StoredValue::new_local(Rc::new(RefCell::new(Scene::new()))),
            busy: RwSignal::new(false),
            figures_ahead: RwSignal::new(false),
            run_alert: RwSignal::new(None),
            culprits: RwSignal::new(Vec::new()),
            timeline_refused: RwSignal::new(None),
            resolve_seq: RwSignal::new(0),
            pane: RwSignal::new(overlap_view::panes::Pane::Timeline),
            classify: RwSignal::new(None),
        }
    }

    pub fn scene(&self) -> SceneRef {
        self.scene.get_value()
    }

    /// Stops playback where it is.
    pub fn pause(&self) {
        self.scene().borrow_mut().playing = false;
        self.playing.set(false);
    }

    /// Replaces the scenario by a preset's, and shows its whole step.
    pub fn load_preset(&self, preset: &Preset) {
        self.load(preset, preset.input());
    }

    /// A preset picker's choice, by id; an unknown id changes nothing.
    pub fn load_preset_id(&self, id: &str) {
        if let Some(p) = presets::find(id) {
            self.load_preset(p);
        }
    }

    /// Starts over from a preset with an edited input (the tour's chapters).
    pub fn load(&self, preset: &Preset, input: ScenarioInput) {
        self.reset_view();
        // A fresh start: the next run is compared with nothing before it.
        self.shown_preset.set_value(String::new());
        self.ghost.set(None);
        self.why.set(None);
        self.preset_id.set(preset.id.to_string());
        self.input.set(input);
    }

    /// Back to the current preset as it is defined: the picker's "Reset to
    /// preset".
    pub fn reset_to_preset(&self) {
        self.load_preset_id(&self.preset_id.get_untracked());
    }

    /// Whether the step shown has figures but no timeline (over the limit
    /// for one): the timeline's controls then have nothing to act on.
    pub fn no_timeline(&self) -> bool {
        self.timeline_refused.with(Option::is_some)
    }

    /// [`Self::no_timeline`], read from an event handler (not tracked).
    pub fn no_timeline_untracked(&self) -> bool {
        self.timeline_refused.with_untracked(Option::is_some)
    }

    /// Whether the scenario differs from its preset: by its fields, or, when
    /// fields were written out, by the scenario they resolve to.
    ///
    /// Never resolves: the runner resolves each new input in a task of its
    /// own (a long one on the large presets) and then moves `resolve_seq`.
    /// Until then an input whose fields differ counts as modified, which it
    /// is unless its fields only write out the preset's own values.
    pub fn modified(&self) -> bool {
        self.resolve_seq.track();
        let Some(preset) = presets::find(&self.preset_id.get()) else {
            return false;
        };
        let own = preset.input();
        self.input.with(|input| {
            *input != own
                && match (resolved_already(input), resolved_already(&own)) {
                    (Some(Ok(a)), Some(Ok(b))) => a != b,
                    _ => true,
                }
        })
    }

    /// Whether the run about to be shown starts from the same preset as the
    /// one shown: only then is the shown one kept for comparison.
    pub fn same_preset_as_shown(&self) -> bool {
        let now = self.preset_id.get_untracked();
        self.shown_preset.with_value(|p| *p == now)
    }

    /// Called with each run as it is shown: the run it replaces becomes the
    /// ghost when both started from the same preset; otherwise there is no
    /// ghost, so a "was" figure never compares two presets.
    pub fn replace_ghost(&self, previous: Option<Report>) {
        let same = self.same_preset_as_shown();
        self.shown_preset.set_value(self.preset_id.get_untracked());
        if !same {
            self.ghost.set(None);
        } else if previous.is_some() {
            self.ghost.set(previous);
        }
    }

    /// Whole step in view, playhead at the end, paused: a new scenario is
    /// read as a whole, not from where the last one was left.
    pub fn reset_view(&self) {
        {
            let scene = self.scene();
            let mut s = scene.borrow_mut();
            s.fit();
            s.playing = false;
            s.playhead_s = f64::INFINITY;
        }
        self.playing.set(false);
    }

    /// Applies one edit to the scenario input; the simulation effect re-runs.
    pub fn edit(&self, f: impl FnOnce(&mut ScenarioInput)) {
        self.input.update(f);
    }

    /// Empties a field whose absence has a meaning (`sm_tax`).
    pub fn clear_field(&self, field: &'static fields::NumField) {
        self.input.update(|input| {
            // Emptying a field cannot fail: `None` is always its own value.
            let _ = (field.row.set)(input, None);
        });
    }

    /// Sets a numeric field. Changing the cluster shape, TP or PP re-derives DP
    /// when the GPU count allows it, so that tp x pp x dp stays consistent.
    pub fn set_number(&self, field: &'static fields::NumField, value: f64) {
        let resolved = self.resolved.get_untracked();
        self.input.update(|input| {
            (field.set)(input, value);
            if matches!(
                field.field,
                "hardware.nodes" | "hardware.gpus_per_node" | "parallel.tp" | "parallel.pp"
            ) {
                rebalance_dp(input, resolved.as_ref());
            }
        });
    }
}

/// (id, title) of every preset, for the preset pickers.
pub fn preset_options() -> Vec<(String, String)> {
    presets::PRESETS
        .iter()
        .map(|p| (p.id.to_string(), p.title.to_string()))
        .collect()
}

impl Default for AppState {
    fn default() -> Self {
        Self::new()
    }
}

/// dp = GPUs / (tp x pp) when that divides; otherwise the core explains.
pub fn rebalance_dp(input: &mut ScenarioInput, resolved: Option<&Scenario>) {
    let get = |f: &fields::NumField| f.shown(input, resolved).unwrap_or(0.0) as u64;
    let gpus = get(&fields::NODES) * get(&fields::GPUS_PER_NODE);
    let tp_pp = get(&fields::TP) * get(&fields::PP);
    if tp_pp > 0 && gpus % tp_pp == 0 && gpus / tp_pp >= 1 {
        if let Ok(dp) = u32::try_from(gpus / tp_pp) {
            input.parallel.dp = Some(dp);
        }
    }
}

/// A new hardware preset brings its datasheet back: the figures that came
/// from the previous preset are dropped, the cluster size is kept.
pub fn set_hardware_preset(
    input: &mut ScenarioInput,
    preset: overlap_core::HardwarePreset,
    resolved: Option<&Scenario>,
) {
    let h = &mut input.hardware;
    h.preset = Some(preset);
    // Explicit, so that DP can be re-derived before the next resolve.
    h.gpus_per_node = Some(preset.hardware().gpus_per_node);
    h.peak_tflops = None;
    h.hbm_gbps = None;
    h.hbm_gb = None;
    h.nvlink_gbps = None;
    h.nic_gbps = None;
    h.nvlink_latency_us = None;
    h.network_latency_us = None;
    rebalance_dp(input, resolved);
}
