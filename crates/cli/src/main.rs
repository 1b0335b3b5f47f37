//! `overlap-lab`: the Overlap Lab simulator on the command line
//! (../shared/interface.md). A thin shell over `overlap_core`.

use std::io::Read;
use std::process::ExitCode;

use overlap_core::{presets, simulate, Axis, Report, Scenario, ScenarioInput};

const USAGE: &str = "usage: overlap-lab simulate [--json] FILE | link [--preset ID] FILE | trace [--kineto DIR] FILE | presets | published
  FILE is scenario JSON (interface.md); - reads standard input; preset:NAME uses a preset.
  link writes the fields that differ from the closest preset, or from --preset ID.
  trace --kineto DIR writes one PyTorch-profiler trace per simulated GPU, DIR/rank<N>.json.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("overlap-lab: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<String, String> {
    let (command, rest) = args.split_first().ok_or(USAGE)?;
    let json = rest.iter().any(|a| a == "--json");
    let preset = rest
        .iter()
        .position(|a| a == "--preset")
        .map(|i| rest.get(i + 1).ok_or("--preset needs a preset name"))
        .transpose()?;
    let files: Vec<&String> = rest
        .iter()
        .filter(|a| *a != "--json" && *a != "--preset" && Some(*a) != preset)
        .collect();
    let file = || -> Result<&String, String> {
        match files.as_slice() {
            [f] => Ok(f),
            _ => Err(USAGE.to_string()),
        }
    };
    match command.as_str() {
        "simulate" => {
            let scenario = load(file()?)?.resolve().map_err(|e| e.to_string())?;
            let sim = simulate(&scenario);
            if json {
                Ok(serde_json::to_string_pretty(&sim.report).expect("reports serialise") + "\n")
            } else {
                Ok(summary(&scenario, &sim.report))
            }
        }
        "link" => {
            let input = load(file()?)?;
            input.resolve().map_err(|e| e.to_string())?;
            let link = match preset {
                Some(id) => {
                    presets::find(id).ok_or_else(|| format!("unknown preset \"{id}\""))?;
                    overlap_core::share_link::encode(&input, Some(id))
                }
                None => overlap_core::share_link::encode_shortest(&input),
            };
            Ok(link + "\n")
        }
        "trace" if rest.iter().any(|a| a == "--kineto") => trace_kineto(rest),
        "trace" => {
            let scenario = load(file()?)?.resolve().map_err(|e| e.to_string())?;
            let sim = simulate(&scenario);
            Ok(overlap_core::trace::chrome_trace(&sim.timeline) + "\n")
        }
        "presets" => Ok(presets::PRESETS
            .iter()
            .map(|p| format!("{:<26} {}\n", p.id, p.title))
            .collect()),
        "published" => Ok(overlap_core::published::table()),
        "--help" | "-h" | "help" => Ok(format!("{USAGE}\n")),
        other => Err(format!("unknown command \"{other}\"\n{USAGE}")),
    }
}

/// `trace --kineto DIR FILE`: one Kineto-style trace per simulated GPU
/// into DIR, which HolisticTraceAnalysis reads as a job's trace directory.
fn trace_kineto(rest: &[String]) -> Result<String, String> {
    let at = rest.iter().position(|a| a == "--kineto").unwrap_or(0);
    let dir = rest
        .get(at + 1)
        .filter(|d| !d.starts_with("--"))
        .ok_or("--kineto needs a directory: trace --kineto DIR FILE")?;
    let files: Vec<&String> = rest
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != at && i != at + 1)
        .map(|(_, a)| a)
        .collect();
    let [file] = files.as_slice() else {
        return Err(USAGE.to_string());
    };
    let scenario = load(file)?.resolve().map_err(|e| e.to_string())?;
    let sim = simulate(&scenario);
    let traces = overlap_core::kineto::rank_traces(&scenario, &sim.timeline);
    let dir = std::path::Path::new(dir);
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // HTA reads every .json and .gz file in the directory as a rank's trace:
    // files of another run would be read as ranks of this one.
    let ours: Vec<&str> = traces.iter().map(|t| t.file_name.as_str()).collect();
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if (name.ends_with(".json") || name.ends_with(".gz")) && !ours.contains(&name.as_str()) {
            return Err(format!(
                "{} already holds {name}, which HolisticTraceAnalysis would read as a rank's trace: \
                 use an empty directory or one holding only rank<N>.json files of this scenario",
                dir.display()
            ));
        }
    }
    let mut out = String::new();
    for t in &traces {
        let path = dir.join(&t.file_name);
        std::fs::write(&path, &t.json)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        out += &format!("{}\n", path.display());
    }
    Ok(out)
}

fn load(path: &str) -> Result<ScenarioInput, String> {
    if let Some(id) = path.strip_prefix("preset:") {
        return presets::find(id).map(|p| p.input()).ok_or_else(|| {
            let names: Vec<&str> = presets::PRESETS.iter().map(|p| p.id).collect();
            format!("unknown preset \"{id}\": valid are {}", names.join(", "))
        });
    }
    let mut text = String::new();
    if path == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
    } else {
        text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    }
    ScenarioInput::from_json(&text).map_err(|e| e.to_string())
}

fn summary(s: &Scenario, r: &Report) -> String {
    let hw = &s.hardware;
    let mut out = format!(
        "{} x {} GPUs ({}), tp {} x pp {} x dp {}\n\
         step time      {:10.3} ms   (all overlap off: {:.3} ms, speedup {:.3}x)\n\
         compute        {:10.3} ms   bubble {:.1}%\n\
         model TFLOP/s  {:10.1} per GPU (MFU {:.1}%), executed {:.1} per GPU\n\n\
         axis   comm ms  exposed ms  hidden  window ms  contention ms\n",
        hw.nodes,
        hw.gpus_per_node,
        s.hardware_preset.name(),
        s.parallel.tp,
        s.parallel.pp,
        s.parallel.dp,
        r.step_time_ms,
        r.baseline_ms,
        r.speedup,
        r.compute_ms,
        r.bubble_fraction * 100.0,
        r.model_tflops_per_gpu,
        r.mfu * 100.0,
        r.hardware_tflops_per_gpu,
    );
    for axis in Axis::ALL {
        let a = r.axes.get(axis);
        out += &format!(
            "{:<4} {:9.3} {:11.3} {:6.1}% {:10.3} {:14.3}\n",
            axis.name(),
            a.comm_ms,
            a.exposed_ms,
            a.hidden * 100.0,
            a.window_ms,
            a.contention_ms
        );
    }
    out += &format!(
        "\nHTA overlap    {:10.1}%   (communication kernel time under compute; per GPU: {})\n",
        r.hta_overlap * 100.0,
        r.hta_overlap_per_gpu
            .iter()
            .map(|x| format!("{:.1}%", x * 100.0))
            .collect::<Vec<_>>()
            .join(" ")
    );
    out += &format!(
        "\nlinks   NVLink busy {:.1}% (shared by axes {:.1}%), network busy {:.1}% (shared {:.1}%)\n",
        r.links.nvlink.busy * 100.0,
        r.links.nvlink.shared * 100.0,
        r.links.network.busy * 100.0,
        r.links.network.shared * 100.0
    );
    out
}
