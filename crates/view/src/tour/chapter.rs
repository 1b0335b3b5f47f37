//! One chapter of the tour: its scenario, change, prediction and text, and
//! how the right answer and the words are computed from its two runs.

use overlap_core::output::metric::Metric;
use overlap_core::presets;
use overlap_core::{Report, ScenarioInput};

use super::focus::Focus;
use super::template;

/// A figure the reveal shows before and after: the chapter's word for it,
/// and the metric (its getter, `data-metric` name and number format).
pub type Watch = (&'static str, Metric);

/// The two runs a chapter compares: its scenario before and after the change.
#[derive(Clone, Copy, Debug)]
pub struct Outcome<'a> {
    /// The chapter's scenario as set up, before the change.
    pub before: &'a Report,
    /// The same scenario after the chapter's change.
    pub after: &'a Report,
}

/// One chapter of the tour.
pub struct Chapter {
    /// Its heading.
    pub title: &'static str,
    /// The preset it starts from (an id of `overlap_core::presets`).
    pub preset: &'static str,
    /// Changes to the preset before the question.
    pub setup: fn(&mut ScenarioInput),
    /// What the reader sees before predicting; its placeholders read the
    /// `before` run only, whether written `{before:…}` or not ([`template`]).
    pub intro: &'static str,
    /// The prediction asked for.
    pub question: &'static str,
    /// Three answers; none may give itself away.
    pub choices: [&'static str; 3],
    /// The one change the chapter is about.
    pub action: fn(&mut ScenarioInput),
    /// Which figures the reveal reads.
    pub watch: &'static [Watch],
    /// What the reveal explains; placeholders may read both runs.
    pub explain: &'static str,
    /// The controls the chapter is about (field names), outlined on the page.
    pub controls: &'static [&'static str],
    /// Which of `choices` the two runs make right; `None` gives no verdict.
    pub answer: Option<fn(&Outcome) -> usize>,
    /// Why, from the figures: a template shown after "Right:" or after the
    /// right answer.
    pub verdict: &'static str,
    /// Where on the timeline the chapter's effect is.
    pub focus: Focus,
}

impl Chapter {
    /// The fields a chapter without an answer, verdict or focus gets: a new
    /// chapter written with the first fields only ends `..Chapter::BASE`.
    pub const BASE: Chapter = Chapter {
        title: "",
        preset: presets::DEFAULT_ID,
        setup: |_| {},
        intro: "",
        question: "",
        choices: ["", "", ""],
        action: |_| {},
        watch: &[],
        explain: "",
        controls: &[],
        answer: None,
        verdict: "",
        focus: Focus::Whole,
    };

    /// The chapter's scenario before its change: the preset with the setup
    /// applied (`None` for an unknown preset id).
    pub fn before_input(&self) -> Option<ScenarioInput> {
        let mut input = presets::find(self.preset)?.input();
        (self.setup)(&mut input);
        Some(input)
    }

    /// The chapter's scenario after its change.
    pub fn after_input(&self) -> Option<ScenarioInput> {
        let mut input = self.before_input()?;
        (self.action)(&mut input);
        Some(input)
    }

    /// The intro with its figures filled from the `before` run.
    pub fn intro_text(&self, before: &Report) -> String {
        template::fill(self.intro, before, Some(before))
    }

    /// The explanation with its figures filled from both runs.
    pub fn explain_text(&self, outcome: &Outcome) -> String {
        template::fill(self.explain, outcome.after, Some(outcome.before))
    }

    /// The step's change in its parts (compute, each axis's exposed time,
    /// the bubble), one sentence in one unit computed from both runs as the
    /// page's "what changed" sentence is ([`crate::why::sentence`]): every
    /// part that moved by a twentieth of the step's change or a hundredth of
    /// the step is named, so that the reveal accounts for the change.
    /// `None` when the step did not move.
    pub fn parts_text(&self, outcome: &Outcome) -> Option<String> {
        crate::why::sentence(outcome.before, outcome.after, Some("The step in parts"))
    }

    /// The verdict on a prediction (`None`: the reader skipped it): whether
    /// it was right, which answer the figures give, and why.
    pub fn verdict_text(&self, picked: Option<usize>, outcome: &Outcome) -> Option<String> {
        let right = (self.answer?)(outcome).min(self.choices.len() - 1);
        let why = template::fill(self.verdict, outcome.after, Some(outcome.before));
        Some(match picked {
            Some(k) if k == right => format!("Right: {why}"),
            Some(_) => format!(
                "Not this time: the figures say “{}”. {why}",
                self.choices[right]
            ),
            None => format!("The figures say “{}”. {why}", self.choices[right]),
        })
    }
}

/// Sorts a share of something gone (0..1; negative when it grew) into three
/// answers: more than half (0), some but at most half (1), none or it grew
/// (2). "None" allows 2% for rounding.
pub fn share_gone_choice(gone: f64) -> usize {
    if gone > 0.5 {
        0
    } else if gone > 0.02 {
        1
    } else {
        2
    }
}

/// Sorts a change of a figure into three answers by its relative size:
/// about the same, within `tolerance` (0), larger (1), smaller (2).
pub fn change_choice(before: f64, after: f64, tolerance: f64) -> usize {
    let rel = (after - before) / before.abs().max(1e-12);
    if rel.abs() <= tolerance {
        0
    } else if rel > 0.0 {
        1
    } else {
        2
    }
}
