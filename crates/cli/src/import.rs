//! `overlap-lab import [--json] [--scenario FILE] PATH...`: a measured job's
//! figures from its PyTorch profiler traces, and with `--scenario` the
//! simulated figures beside them.

use std::fmt::Write;
use std::path::PathBuf;

use overlap_core::trace_import::{import_paths, AxisFigures, Imported};
use overlap_core::{Axis, Report};
use serde::Serialize;

#[derive(Serialize)]
struct Out<'a> {
    #[serde(flatten)]
    measured: &'a Imported,
    #[serde(skip_serializing_if = "Option::is_none")]
    simulated: Option<&'a Report>,
}

/// The command's output: JSON or a readable summary.
pub fn run(paths: Vec<PathBuf>, json: bool, simulated: Option<Report>) -> Result<String, String> {
    let measured = import_paths(&paths).map_err(|e| e.to_string())?;
    if json {
        let out = Out {
            measured: &measured,
            simulated: simulated.as_ref(),
        };
        return Ok(serde_json::to_string_pretty(&out).expect("figures serialise") + "\n");
    }
    Ok(summary(&measured, simulated.as_ref()))
}

fn percent(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |h| format!("{:.1}%", h * 100.0))
}

fn gpu_label(rank: Option<u64>, device: i64) -> String {
    match rank {
        Some(r) => format!("rank {r} gpu {device}"),
        None => format!("gpu {device}"),
    }
}

fn axis_line(name: &str, a: &AxisFigures) -> String {
    format!(
        "{name} {:.3} ms (under compute {:.3}, exposed {:.3}, under idle {:.3}; hidden {})",
        a.comm_ms,
        a.under_compute_ms,
        a.exposed_ms,
        a.under_idle_ms,
        percent(a.hidden)
    )
}

fn summary(m: &Imported, sim: Option<&Report>) -> String {
    let mut out = String::new();
    let world = m
        .world_size
        .map_or_else(String::new, |w| format!(", world size {w}"));
    let _ = writeln!(
        out,
        "{} GPUs from {} trace files{world}; times are ms per profiler step\n",
        m.gpus.len(),
        m.files.len()
    );
    let _ = writeln!(
        out,
        "GPU                 steps   step ms  compute ms   comm ms  exposed ms  hidden  overlap"
    );
    for g in &m.gpus {
        let _ = writeln!(
            out,
            "{:<19} {:>5} {:9.3} {:11.3} {:9.3} {:11.3} {:>7} {:>7.1}%",
            gpu_label(g.rank, g.device),
            g.steps,
            g.step_ms,
            g.compute_ms,
            g.comm_ms,
            g.exposed_ms,
            percent(g.hidden),
            g.overlap * 100.0
        );
    }
    let _ = writeln!(out, "\ncommunication by kind and axis:");
    for g in &m.gpus {
        let kinds: Vec<String> = g
            .comm_by_kind_ms
            .iter()
            .map(|(k, ms)| format!("{k} {ms:.3}"))
            .collect();
        let kinds = if kinds.is_empty() {
            "none recognised".to_string()
        } else {
            kinds.join(", ")
        };
        let _ = writeln!(out, "  {}: {kinds}", gpu_label(g.rank, g.device));
        for (name, a) in &g.axes {
            let _ = writeln!(out, "    {}", axis_line(name, a));
        }
    }
    let o = &m.over_ranks;
    let slow = &m.gpus[o.slowest];
    let _ = writeln!(
        out,
        "\nover ranks: slowest {} (step {:.3} ms); HTA overlap {:.1}% mean, {:.1}% to {:.1}%",
        gpu_label(slow.rank, slow.device),
        o.step_ms,
        o.overlap * 100.0,
        o.overlap_min * 100.0,
        o.overlap_max * 100.0
    );
    if let Some(r) = sim {
        out += &beside(m, r);
    }
    out
}

/// The measured slowest GPU and the simulated report, side by side.
fn beside(m: &Imported, r: &Report) -> String {
    let o = &m.over_ranks;
    let sim_comm: f64 = Axis::ALL.iter().map(|&a| r.axes.get(a).comm_ms).sum();
    let sim_exposed: f64 = Axis::ALL.iter().map(|&a| r.axes.get(a).exposed_ms).sum();
    let sim_hidden = (sim_comm > 0.0).then(|| 1.0 - sim_exposed / sim_comm);
    let mut out = String::from("\n                      measured   simulated\n");
    let mut row = |label: &str, measured: String, simulated: String| {
        let _ = writeln!(out, "{label:<20} {measured:>10} {simulated:>11}");
    };
    row(
        "step ms",
        format!("{:.3}", o.step_ms),
        format!("{:.3}", r.step_time_ms),
    );
    row(
        "compute ms",
        format!("{:.3}", o.compute_ms),
        format!("{:.3}", r.compute_ms),
    );
    row(
        "comm ms",
        format!("{:.3}", o.comm_ms),
        format!("{sim_comm:.3}"),
    );
    row(
        "exposed ms",
        format!("{:.3}", o.exposed_ms),
        format!("{sim_exposed:.3}"),
    );
    row("hidden", percent(o.hidden), percent(sim_hidden));
    row(
        "HTA overlap",
        format!("{:.1}%", o.overlap * 100.0),
        format!("{:.1}%", r.hta_overlap * 100.0),
    );
    let none = AxisFigures::default();
    // The expert axis when the simulated report has it.
    let present = |a: &Axis| *a != Axis::Ep || r.axes.ep.is_some();
    for axis in Axis::ALL.into_iter().filter(present) {
        let measured = o.axes.get(axis.name()).unwrap_or(&none);
        let simulated = r.axes.get(axis);
        row(
            &format!("{} exposed ms", axis.label()),
            format!("{:.3}", measured.exposed_ms),
            format!("{:.3}", simulated.exposed_ms),
        );
    }
    let unknown = o.axes.get("unknown").map_or(0.0, |a| a.exposed_ms);
    if unknown > 0.0 {
        row(
            "unknown-axis exposed",
            format!("{unknown:.3}"),
            "-".to_string(),
        );
    }
    out
}
