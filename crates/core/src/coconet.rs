//! CoCoNet's model-parallel inference (Jangda et al. 2021, arXiv
//! 2105.05720) on the `coconet-inference` preset, step by step: the
//! simulator's own account of how much of the gain each of CoCoNet's moves
//! gives. The paper reports its speedup for the moves together ("reported
//! jointly with slicing and fusion"), so only the last row has a published
//! figure beside it.

use crate::input::parse::ScenarioInput;
use crate::input::presets;
use crate::model::scenario::Scenario;

/// The preset the breakdown runs.
pub const PRESET: &str = "coconet-inference";

/// CoCoNet's published speedup for GPT-2 8.3B model-parallel inference in
/// Megatron-LM, its moves together (the issue text citing Jangda et al.
/// 2021, arXiv 2105.05720).
pub const PUBLISHED_SPEEDUP: f64 = 1.48;

/// One setting of the breakdown: what it switches on, cumulatively.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    /// Its name in the table.
    pub name: &'static str,
    /// What it adds to the setting before it.
    pub adds: &'static str,
    /// Sets the preset's overlap fields to this setting.
    pub apply: fn(&mut ScenarioInput),
}

fn sequential(i: &mut ScenarioInput) {
    i.overlap.tp = Some(false);
    i.overlap.pp = Some(false);
    i.overlap.pp_chunks = Some(1);
    i.overlap.fuse = Some(false);
}

fn overlapped(i: &mut ScenarioInput) {
    sequential(i);
    i.overlap.tp = Some(true);
    i.overlap.pp = Some(true);
}

fn sliced(i: &mut ScenarioInput) {
    overlapped(i);
    i.overlap.pp_chunks = Some(8);
}

fn fused(i: &mut ScenarioInput) {
    sliced(i);
    i.overlap.fuse = Some(true);
}

/// The four settings, each adding one move to the one before.
pub const SETTINGS: [Setting; 4] = [
    Setting {
        name: "sequential",
        adds: "Megatron-LM: GEMM then AllReduce, blocking sends, scatter/gather at the boundary",
        apply: sequential,
    },
    Setting {
        name: "overlapped",
        adds: "GEMM in 4 chunks under the AllReduce; asynchronous sends",
        apply: overlapped,
    },
    Setting {
        name: "sliced",
        adds: "boundary as ReduceScatter, slice sends, AllGather in 8 pipelined pieces",
        apply: sliced,
    },
    Setting {
        name: "fused",
        adds: "AllReduce fused with bias, dropout and residual add",
        apply: fused,
    },
];

/// The preset's scenario in one setting.
pub fn scenario(setting: &Setting) -> Scenario {
    let mut input = presets::find(PRESET)
        .expect("the CoCoNet preset exists")
        .input();
    (setting.apply)(&mut input);
    input
        .resolve()
        .expect("every CoCoNet setting is valid (tested)")
}

/// One setting's figures.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// The setting.
    pub setting: Setting,
    /// Its simulated step time, ms.
    pub step_time_ms: f64,
    /// Sequential step time over its own.
    pub speedup: f64,
    /// The step time of the setting before it over its own.
    pub gain: f64,
}

/// The four settings simulated.
pub fn breakdown() -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::with_capacity(SETTINGS.len());
    for setting in SETTINGS {
        let ms = crate::simulate(&scenario(&setting)).report.step_time_ms;
        let first = rows.first().map_or(ms, |r| r.step_time_ms);
        let before = rows.last().map_or(ms, |r| r.step_time_ms);
        rows.push(Row {
            setting,
            step_time_ms: ms,
            speedup: first / ms,
            gain: before / ms,
        });
    }
    rows
}

/// The breakdown as a Markdown table, the published figure beside the
/// last row.
pub fn table() -> String {
    let mut out = String::from(
        "| setting | adds | step ms | speedup over sequential | gain over the row before | published |\n\
         |---|---|---|---|---|---|\n",
    );
    let rows = breakdown();
    let last = rows.len() - 1;
    for (i, r) in rows.iter().enumerate() {
        let published = if i == last {
            format!("{PUBLISHED_SPEEDUP:.2}x, all moves together")
        } else {
            "-".to_string()
        };
        out += &format!(
            "| {} | {} | {:.2} | {:.3}x | {:.3}x | {published} |\n",
            r.setting.name, r.setting.adds, r.step_time_ms, r.speedup, r.gain
        );
    }
    out
}
