//! `overlap-lab import [--json] [--scenario FILE] [--classify RULE]...
//! [--classify-file F] [--propose] PATH...`: a measured job's figures from
//! its PyTorch profiler traces, with `--scenario` the simulated figures
//! beside them, with `--propose` the scenario the traces imply.

use std::fmt::Write;
use std::path::PathBuf;

use overlap_core::Report;
use overlap_trace::compare::{compare, step_mismatch, Unit};
use overlap_trace::{gpu_label, import_paths_with, AxisFigures, Classifier, Imported};
use serde::Serialize;

#[derive(Serialize)]
struct Out<'a> {
    #[serde(flatten)]
    measured: &'a Imported,
    #[serde(skip_serializing_if = "Option::is_none")]
    simulated: Option<&'a Report>,
}

/// The command's output: JSON or a readable summary.
pub fn run(
    paths: Vec<PathBuf>,
    json: bool,
    simulated: Option<Report>,
    classifier: Classifier,
) -> Result<String, String> {
    let mut measured = import_paths_with(&paths, &classifier).map_err(|e| e.to_string())?;
    if let Some(warning) = simulated.as_ref().and_then(|r| step_mismatch(&measured, r)) {
        measured.messages.push(warning);
    }
    if json {
        let out = Out {
            measured: &measured,
            simulated: simulated.as_ref(),
        };
        return Ok(serde_json::to_string_pretty(&out).expect("figures serialise") + "\n");
    }
    Ok(summary(&measured, simulated.as_ref()))
}

/// `--propose`: the scenario the traces imply, as JSON to edit; its notes
/// on standard error, each a line starting `note:`.
pub fn propose(paths: Vec<PathBuf>, classifier: Classifier) -> Result<String, String> {
    let measured = import_paths_with(&paths, &classifier).map_err(|e| e.to_string())?;
    let proposed = measured.proposed.ok_or("the traces imply no scenario")?;
    for note in &proposed.notes {
        eprintln!("note: {note}");
    }
    Ok(serde_json::to_string_pretty(&proposed.scenario).expect("JSON serialises") + "\n")
}

fn percent(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |h| format!("{:.1}%", h * 100.0))
}

fn ms(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}

fn axis_line(name: &str, a: &AxisFigures) -> String {
    let transfer = match (a.transfer.transfer_ms, a.transfer.wait_ms) {
        (Some(t), Some(w)) => format!(
            "; transfer {t:.3}, wait {w:.3}, transfer exposed {}",
            ms(a.transfer.transfer_exposed_ms)
        ),
        _ => String::new(),
    };
    format!(
        "{name} {:.3} ms (under compute {:.3}, exposed {:.3}, under idle {:.3}; hidden {}{transfer})",
        a.comm_ms,
        a.under_compute_ms,
        a.exposed_ms,
        a.under_idle_ms,
        percent(a.hidden)
    )
}

/// A name cut for a line of the summary.
fn cut(name: &str, chars: usize) -> String {
    if name.chars().count() <= chars {
        name.to_string()
    } else {
        name.chars().take(chars).collect::<String>() + "…"
    }
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
    let matched = m.gpus.iter().any(|g| g.transfer.transfer_ms.is_some());
    let _ = write!(
        out,
        "GPU                 steps   step ms  compute ms   comm ms  exposed ms  hidden  overlap"
    );
    let _ = writeln!(
        out,
        "{}",
        if matched {
            "  transfer ms   wait ms"
        } else {
            ""
        }
    );
    for g in &m.gpus {
        let _ = write!(
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
        if matched {
            let _ = write!(
                out,
                " {:>12} {:>9}",
                ms(g.transfer.transfer_ms),
                ms(g.transfer.wait_ms)
            );
        }
        out.push('\n');
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
    candidates(&mut out, m);
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
    late_ranks(&mut out, m);
    for note in &m.messages {
        let _ = writeln!(out, "note: {note}");
    }
    if m.proposed.is_some() {
        let _ = writeln!(
            out,
            "a scenario these traces imply, to edit and simulate: overlap-lab import --propose PATH... > scenario.json"
        );
    }
    if let Some(r) = sim {
        out += &beside(m, r);
    }
    out
}

/// The longest kernels off the compute stream of the first GPU whose
/// communication nothing recognises (the others' are in the JSON).
fn candidates(out: &mut String, m: &Imported) {
    let silent: Vec<_> = m
        .gpus
        .iter()
        .filter(|g| !g.comm_candidates.is_empty())
        .collect();
    let Some(g) = silent.first() else { return };
    let others = match silent.len() {
        1 => String::new(),
        n => format!(" (and {} other GPUs: see --json)", n - 1),
    };
    let _ = writeln!(
        out,
        "\nno communication recognised on {}{others}; its longest kernels off its compute stream, which may be communication:",
        gpu_label(g.rank, g.device)
    );
    for c in &g.comm_candidates {
        let _ = writeln!(
            out,
            "  {:>9.3} ms  {:>5} kernels  stream {:<4} {}",
            c.ms,
            c.kernels,
            c.stream,
            cut(&c.function, 100)
        );
    }
    let _ = writeln!(
        out,
        "  name communication with --classify PATTERN=KIND[:AXIS], e.g. --classify '{}=all_to_all:ep'",
        g.comm_candidates[0]
            .function
            .rsplit("::")
            .next()
            .unwrap_or("name")
    );
}

/// The GPUs that arrived last most often.
fn late_ranks(out: &mut String, m: &Imported) {
    let late = &m.over_ranks.late_ranks;
    if late.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "late ranks (arrived last at a collective while others waited; most often first):"
    );
    for l in late.iter().take(8) {
        let _ = writeln!(
            out,
            "  {:<19} last at {} of {} collectives; the others waited {:.3} ms per step on it",
            gpu_label(l.rank, l.device),
            l.last,
            l.collectives,
            l.idle_caused_ms
        );
    }
    if late.len() > 8 {
        let _ = writeln!(out, "  ... {} more GPUs in --json", late.len() - 8);
    }
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
