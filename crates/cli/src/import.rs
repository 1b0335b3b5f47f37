//! `overlap-lab import [--json] [--scenario FILE] PATH...`: a measured job's
//! figures from its PyTorch profiler traces, and with `--scenario` the
//! simulated figures beside them.

use std::fmt::Write;
use std::path::PathBuf;

use overlap_core::Report;
use overlap_trace::compare::{compare, Unit};
use overlap_trace::{import_paths, AxisFigures, Imported};
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
    let mut out = String::from("\n                      measured   simulated\n");
    let shown = |v: Option<f64>, unit: Unit| match (v, unit) {
        (None, _) => "-".to_string(),
        (Some(v), Unit::Ms) => format!("{v:.3}"),
        (Some(v), Unit::Share) => format!("{:.1}%", v * 100.0),
    };
    for c in compare(m, r) {
        let _ = writeln!(
            out,
            "{:<20} {:>10} {:>11}",
            c.label,
            shown(c.measured, c.unit),
            shown(c.simulated, c.unit)
        );
    }
    out
}
