//! What a run's replies change on the page: the figures, the timeline, the
//! statements in their place, the alert and the busy marks (signals, the
//! scene and the body's `data-*` attributes the tests and the page
//! benchmark read). The run session decides when; this says how.

use leptos::prelude::*;
use overlap_core::{FieldError, Report, Scenario};
use overlap_view::prepared::Prepared;

use crate::dom;
use crate::state::{AppState, RunAlert};
use crate::timeline::frame;

/// A run's figures and what came with them, on their way to the screen.
pub struct Shown {
    pub scenario: Scenario,
    pub report: Report,
    pub sim_ms: f64,
    pub received_ms: f64,
    /// Whether its figures came first, and then whether the timeline keeps
    /// the one before it for comparison.
    pub figures: Option<overlap_session::machine::FiguresShown>,
    /// Where its timeline's time went, for the page benchmark.
    pub path: TimelinePath,
}

/// Where a run's timeline spent its time between the core and the screen
/// (ms), written as `data-timeline-path` for the page benchmark.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimelinePath {
    /// The core, simulating the step with its timeline, in the worker.
    pub core_ms: f64,
    /// The worker sorting, encoding and copying it into typed arrays.
    pub encode_ms: f64,
    /// From the worker's post to the page's receipt.
    pub to_page_ms: f64,
    /// On the page: from receipt to the first slice.
    pub wait_ms: f64,
    /// The decoder's slices, their own time summed.
    pub decode_ms: f64,
    /// Measuring for drawing (`Preparing`), its slices' time summed.
    pub prepare_ms: f64,
    /// Slices taken, both stages.
    pub slices: u32,
    /// From receipt to ready to show, slices and the gaps between them.
    pub wall_ms: f64,
}

/// Busy while anything is requested, running or being decoded; `ahead`
/// while the figures shown are the newest run's and its timeline is coming.
pub fn busy(state: AppState, busy: bool, ahead: bool) {
    if state.busy.get_untracked() != busy {
        state.busy.set(busy);
    }
    if state.figures_ahead.get_untracked() != ahead {
        state.figures_ahead.set(ahead);
    }
    dom::set_body_data("simulating", if busy { "1" } else { "0" });
    dom::set_body_data("figures-ahead", if ahead { "1" } else { "0" });
}

pub fn alert(state: AppState, cause: String, report_link: Option<String>) {
    state.run_alert.set(Some(RunAlert { cause, report_link }));
    dom::set_body_data("run-alert", "1");
}

/// For the page benchmark: how long a run waited between its input's change
/// (`made_at`) and the worker taking it up (`taken_up_at`): coalescing, a
/// worker starting, a run before it.
pub fn wait(made_at: f64, taken_up_at: f64) {
    dom::set_body_data("wait-ms", &format!("{:.1}", taken_up_at - made_at));
}

/// Shows a run's figures and counts it as shown (`data-run-seq`).
pub fn figures(state: AppState, report: Report, scenario: Scenario) {
    let before = state.resolved.get_untracked();
    state.replace_ghost(state.report.get_untracked());
    let why = state.ghost.with_untracked(|ghost| {
        let ghost = ghost.as_ref()?;
        let change = before
            .as_ref()
            .and_then(|b| overlap_view::why::change_label(b, &scenario));
        overlap_view::why::sentence(ghost, &report, change.as_deref())
    });
    state.why.set(why);
    state.report.set(Some(report));
    state.resolved.set(Some(scenario));
    if state.run_alert.with_untracked(Option::is_some) {
        state.run_alert.set(None);
        dom::set_body_data("run-alert", "0");
    }
    state.run_seq.update(|n| *n += 1);
    // Tests wait on this to know the figures belong to the latest input.
    dom::set_body_data("run-seq", &state.run_seq.get_untracked().to_string());
}

/// When a large run's figures went on their way to the screen, as epoch
/// times and durations (ms), for the page benchmark.
pub struct FiguresPath {
    pub made_at: f64,
    pub taken_up_at: f64,
    pub resolve_ms: f64,
    pub core_ms: f64,
    pub posted_at: f64,
    pub received_at: f64,
}

/// A large run's figures, ahead of its timeline; the previous timeline
/// stays, dimmed.
pub fn figures_ahead(state: AppState, report: Report, scenario: Scenario, path: FiguresPath) {
    let t0 = dom::now_ms();
    figures(state, report, scenario);
    let FiguresPath {
        made_at,
        taken_up_at,
        resolve_ms,
        core_ms,
        posted_at,
        received_at,
    } = path;
    dom::set_body_data("figures-ms", &format!("{core_ms:.1}"));
    dom::set_body_data("figures-apply-ms", &format!("{:.1}", dom::now_ms() - t0));
    dom::set_body_data(
        "figures-path",
        &format!(
            r#"{{"made_at":{made_at:.1},"taken_up_at":{taken_up_at:.1},"resolve_ms":{resolve_ms:.1},"core_ms":{core_ms:.1},"posted_at":{posted_at:.1},"received_at":{received_at:.1}}}"#,
        ),
    );
}

/// Shows a finished run: figures (unless they came first), timeline, notes.
pub fn run(state: AppState, run: Shown, timeline: Prepared) {
    let Shown {
        scenario,
        report,
        sim_ms,
        received_ms,
        figures: ahead,
        path,
    } = run;
    let t0 = dom::now_ms();
    let TimelinePath {
        core_ms,
        encode_ms,
        to_page_ms,
        wait_ms,
        decode_ms,
        prepare_ms,
        slices,
        wall_ms,
    } = path;
    dom::set_body_data(
        "timeline-path",
        &format!(
            r#"{{"core_ms":{core_ms:.1},"encode_ms":{encode_ms:.1},"to_page_ms":{to_page_ms:.1},"wait_ms":{wait_ms:.1},"decode_ms":{decode_ms:.1},"prepare_ms":{prepare_ms:.1},"slices":{slices},"wall_ms":{wall_ms:.1},"shown_at":{:.1}}}"#,
            dom::epoch_ms()
        ),
    );
    // For the page benchmark: how much of a change is the core's, and how
    // long the page spent decoding.
    dom::set_body_data("sim-ms", &format!("{sim_ms:.1}"));
    dom::set_body_data("decode-ms", &format!("{:.1}", t0 - received_ms));
    let names: Vec<String> = timeline
        .timeline
        .gpus
        .iter()
        .map(|g| format!("GPU {} (stage {})", g.rank, g.stage))
        .collect();
    let note = overlap_view::summary::drawn_gpus(&timeline.timeline, scenario.hardware.gpus());
    let keep_before = match ahead {
        Some(f) => f.keep_before,
        None => state.same_preset_as_shown(),
    };
    match ahead {
        // The same report as the figures shown: replaced only should it differ.
        Some(_) => {
            if state.report.with_untracked(|r| r.as_ref() != Some(&report)) {
                state.report.set(Some(report));
            }
        }
        None => {
            dom::set_body_data("figures-ms", "");
            figures(state, report, scenario)
        }
    }
    if state.no_timeline_untracked() {
        state.timeline_refused.set(None);
        dom::set_body_data("timeline-refused", "0");
    }
    {
        let scene = state.scene();
        let mut scene = scene.borrow_mut();
        scene.keep_before = keep_before;
        scene.set_prepared(timeline, !dom::reduced_motion(), dom::now_ms());
        // The canvas marks a paint with the run it shows: this run's
        // number, even when the timelines of runs before were dropped.
        scene.seq = state.run_seq.get_untracked();
        if dom::reduced_motion() {
            scene.playing = false;
            scene.playhead_s = f64::INFINITY;
        }
    }
    state.timeline_seq.set(state.run_seq.get_untracked());
    state.represents_note.set(note);
    state.gpu_names.set(names);
    // The pickers show what the scene kept: it lets go of a GPU or a
    // group this step does not have (`Scene::set_prepared`).
    let (link_gpu, shown_gpus) = {
        let scene = state.scene();
        let s = scene.borrow();
        (s.link_gpu, s.shown_gpus)
    };
    if state.link_gpu.get_untracked() != link_gpu {
        state.link_gpu.set(link_gpu);
    }
    if state.shown_gpus.get_untracked() != shown_gpus {
        state.shown_gpus.set(shown_gpus);
    }
    // Painted a frame later, in a task of its own: the next frame lays
    // out the figures just shown, and painting the canvas never adds
    // up with it (or with showing them) to one long task.
    frame::request_after_layout();
    dom::set_body_data("apply-ms", &format!("{:.1}", dom::now_ms() - t0));
}

/// The figures shown are this run's, and its timeline is over the core's
/// limit: the statement takes the timeline's place.
pub fn timeline_refused(state: AppState, field: &str, message: &str) {
    let refusal = FieldError::new(field, message);
    state
        .timeline_refused
        .set(Some(super::no_timeline::statement(&refusal)));
    // Nothing to play any more, and Play is disabled: a sweep in progress
    // stops rather than run on unseen.
    if state.playing.get_untracked() {
        state.pause();
    }
    dom::set_body_data("timeline-refused", "1");
}

/// A refusal naming a field (decided at run time): beside that control,
/// as the page's own refusals are.
pub fn field_refused(state: AppState, field: String, message: &str) {
    state.culprits.set(vec![field.clone()]);
    state.errors.set(vec![FieldError::new(&field, message)]);
    dom::set_body_data("errors", "1");
}
