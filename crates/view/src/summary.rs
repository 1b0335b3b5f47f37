//! The step in one sentence, from the report's own figures: what overlap
//! saves against the all-off step, and what communication is still exposed,
//! per axis. A reader who switches an axis reads the change here without
//! having to compare bars. And, above the timeline, which GPUs it draws.

use overlap_core::timeline::Timeline;
use overlap_core::{Axis, Report};

use crate::format;

/// Below this an axis counts as having no exposed communication, ms.
const NEGLIGIBLE_MS: f64 = 0.0005;

/// "Overlap saves 7.9 ms of 108.7 ms; 2.3 ms of communication is still
/// exposed: DP 0.9 ms, TP 1.2 ms, PP 0.2 ms." Axes are listed largest
/// first; an axis with nothing exposed is left out. Every figure is in the
/// unit of the largest, the all-off step (issue 58: "3460.8 ms of 18.51
/// s"); one too small to show in it reads "under 0.01 s".
pub fn sentence(r: &Report) -> String {
    let reference = r.baseline_ms.abs().max(r.step_time_ms.abs());
    let ms = |v: f64| {
        let text = format::ms_like(v, reference);
        if v != 0.0 && !text.chars().any(|c| c.is_ascii_digit() && c != '0') {
            // The figure's last digit, one unit of it: "0.01 s", "0.1 ms".
            let last = text.trim_end_matches(|c: char| !c.is_ascii_digit());
            let one = format!("{}1{}", &last[..last.len() - 1], &text[last.len()..]);
            format!("under {one}")
        } else {
            text
        }
    };
    let saved = r.baseline_ms - r.step_time_ms;
    let mut exposed: Vec<(Axis, f64)> = Axis::ALL
        .iter()
        .map(|&a| (a, r.axes.get(a).exposed_ms))
        .filter(|(_, ms)| *ms > NEGLIGIBLE_MS)
        .collect();
    exposed.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total: f64 = exposed.iter().map(|(_, ms)| ms).sum();
    let first = if saved.abs() < NEGLIGIBLE_MS {
        format!(
            "Overlap saves nothing against the all-off step of {}",
            ms(r.baseline_ms)
        )
    } else if saved > 0.0 {
        format!("Overlap saves {} of {}", ms(saved), ms(r.baseline_ms))
    } else {
        format!(
            "Overlap costs {} over the all-off step of {}",
            ms(-saved),
            ms(r.baseline_ms)
        )
    };
    if exposed.is_empty() {
        return format!("{first}; no communication is exposed.");
    }
    let parts: Vec<String> = exposed
        .iter()
        .map(|(a, v)| format!("{} {}", a.label(), ms(*v)))
        .collect();
    format!(
        "{first}; {} of communication is still exposed: {}.",
        ms(total),
        parts.join(", ")
    )
}

/// Which GPUs the timeline draws, of the cluster's `cluster_gpus`: "2
/// simulated GPUs stand for all 16 GPUs: each lane group is one GPU
/// standing for 8 (...)", or that every GPU is drawn.
pub fn drawn_gpus(t: &Timeline, cluster_gpus: u64) -> String {
    let simulated = t.gpus.len();
    let represents = t.gpus.first().map_or(1, |g| g.represents);
    let why = "its TP group and DP replicas behave identically, so they are simulated once";
    if t.reduced && represents > 1 {
        if simulated == 1 {
            format!("1 simulated GPU stands for all {cluster_gpus} GPUs ({why}).")
        } else {
            format!(
                "{simulated} simulated GPUs stand for all {cluster_gpus} GPUs: each lane group \
                 is one GPU standing for {represents} ({why})."
            )
        }
    } else if simulated == 1 {
        "The one GPU is simulated and drawn.".to_string()
    } else {
        format!("Every one of the {simulated} GPUs is simulated and drawn.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn didactic() -> Report {
        let s = overlap_core::presets::default_preset()
            .input()
            .resolve()
            .expect("the default preset resolves");
        overlap_core::simulate(&s).report
    }

    #[test]
    fn sentence_adds_up_the_report() {
        let r = didactic();
        let text = sentence(&r);
        // Every figure in the all-off step's unit.
        let ms = |v: f64| format::ms_like(v, r.baseline_ms);
        let saved = ms(r.baseline_ms - r.step_time_ms);
        assert!(
            text.starts_with(&format!("Overlap saves {saved} of {}", ms(r.baseline_ms))),
            "{text}"
        );
        let total: f64 = Axis::ALL.iter().map(|&a| r.axes.get(a).exposed_ms).sum();
        assert!(text.contains(&format!("{} of communication", ms(total))));
        // Largest first: on didactic DP (5.41, most of it the tied
        // embedding's all-reduce across InfiniBand) before TP (1.57) before
        // PP (1.03).
        let at = |a: Axis| text.find(&format!("{} ", a.label())).expect("axis named");
        assert!(
            at(Axis::Dp) < at(Axis::Tp) && at(Axis::Tp) < at(Axis::Pp),
            "{text}"
        );
    }

    #[test]
    fn sentence_says_when_overlap_costs_or_nothing_is_exposed() {
        let mut r = didactic();
        r.step_time_ms = r.baseline_ms + 2.0;
        assert!(
            sentence(&r).starts_with("Overlap costs 2.0 ms over"),
            "{}",
            sentence(&r)
        );
        for a in Axis::ALL {
            r.axes.get_mut(a).exposed_ms = 0.0;
        }
        assert!(sentence(&r).ends_with("; no communication is exposed."));
    }

    #[test]
    fn sentence_writes_one_unit() {
        let mut r = didactic();
        r.baseline_ms = 18_510.0;
        r.step_time_ms = 15_049.2;
        r.axes.get_mut(Axis::Tp).exposed_ms = 0.967;
        let text = sentence(&r);
        assert!(
            text.starts_with("Overlap saves 3.46 s of 18.51 s"),
            "{text}"
        );
        assert!(text.contains("TP under 0.01 s"), "{text}");
        assert!(!text.contains(" ms") && !text.contains(" µs"), "{text}");
    }

    fn timeline_of(json: &str) -> (Timeline, u64) {
        let s = overlap_core::ScenarioInput::from_json(json)
            .expect("valid")
            .resolve()
            .expect("resolves");
        let gpus = s.hardware.gpus();
        (overlap_core::simulate(&s).timeline, gpus)
    }

    #[test]
    fn drawn_gpus_agrees_in_number_with_the_gpus_simulated() {
        // TP 8 on one node: one GPU simulated for the eight.
        let (t, gpus) = timeline_of(
            r#"{"hardware":{"preset":"dgx-a100","nodes":1},"parallel":{"tp":8,"pp":1,"dp":1}}"#,
        );
        assert_eq!((t.gpus.len(), gpus), (1, 8));
        assert_eq!(
            drawn_gpus(&t, gpus),
            "1 simulated GPU stands for all 8 GPUs (its TP group and DP replicas behave \
             identically, so they are simulated once)."
        );
        // The default preset: two stages, each standing for its TP group.
        let (t, gpus) = timeline_of(overlap_core::presets::default_preset().json);
        let text = drawn_gpus(&t, gpus);
        assert!(
            text.starts_with(&format!(
                "{} simulated GPUs stand for all {gpus} GPUs: each lane group is one GPU standing for {}",
                t.gpus.len(),
                t.gpus[0].represents
            )),
            "{text}"
        );
    }

    #[test]
    fn drawn_gpus_says_when_every_gpu_is_drawn() {
        let (t, gpus) = timeline_of(
            r#"{"hardware":{"preset":"dgx-a100","nodes":1},"parallel":{"tp":1,"pp":8,"dp":1}}"#,
        );
        assert_eq!(t.gpus.len(), 8);
        assert_eq!(
            drawn_gpus(&t, gpus),
            "Every one of the 8 GPUs is simulated and drawn."
        );
        let (t, gpus) = timeline_of(
            r#"{"hardware":{"preset":"dgx-a100","nodes":1,"gpus_per_node":1},"parallel":{"tp":1,"pp":1,"dp":1}}"#,
        );
        assert_eq!(drawn_gpus(&t, gpus), "The one GPU is simulated and drawn.");
    }
}
