//! `overlap-lab`: the Overlap Lab simulator on the command line
//! (../shared/interface.md). A thin shell over `overlap_core`.

mod cli;
mod import;
mod search;
mod usage;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

use clap::CommandFactory;

use cli::{BusbwArgs, Cli, Command, Source, SweepArgs};
use overlap_core::scenario::{clip_echoes, MAX_INPUT_BYTES, MAX_INPUT_MIB};
use overlap_core::{
    presets, simulate_report, Axis, Report, Scenario, ScenarioInput, Simulation, Simulator,
};
use overlap_trace::Classifier;

/// mimalloc in place of the system allocator. A large step's runs touch
/// tens of megabytes of fresh memory each (`overlap_core`'s short runs), and
/// the system allocator maps it in 4 KiB pages, each a fault the kernel
/// zeroes on first touch: 31 000 faults for 1T with every overlap on.
/// mimalloc backs its arenas with transparent huge pages where the system
/// allows them (`madvise`, as here): about 4 000 faults. Measured on this
/// project's 2-core machine, the 1T CLI run went from 110 to 87 ms with
/// overlap off and from 247 to 192 ms with every overlap on (medians), its
/// peak from 49 to 71 MB and from 95 to 124 MB. Version 2 of mimalloc, not
/// the crate's default 3: the same speed, 17 MB less at the peak.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Arguments need not be UTF-8: a FILE, PATH or DIR is opened by its
    // name as given.
    let raw: Vec<OsString> = std::env::args_os().skip(1).collect();
    let result = match usage::parse(&raw) {
        usage::Parsed::Run(cli) => run(cli.command),
        usage::Parsed::Print(text) => Ok(text),
        usage::Parsed::Refuse(line) => Err(line),
    };
    match result {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(out.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Ok(()) => ExitCode::SUCCESS,
                // A reader that stops early (`| head`) is not an error.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("overlap-lab: cannot write standard output: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(message) => {
            // One line, whatever a message quotes.
            eprintln!("overlap-lab: {}", message.replace('\n', " "));
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<String, String> {
    match command {
        Command::Simulate(a) => {
            let scenario = load(&a.scenario.file)?
                .resolve()
                .map_err(|e| e.to_string())?;
            // Figures only: the timeline is for `trace` and the page. A step
            // too large for a timeline still has its figures.
            let sim = simulate_report(&scenario).map_err(|e| e.to_string())?;
            if a.json {
                Ok(serde_json::to_string_pretty(&sim.report).expect("reports serialise") + "\n")
            } else {
                Ok(summary(&scenario, &sim.report))
            }
        }
        Command::Link(a) => {
            let input = load(&a.scenario.file)?;
            input.resolve().map_err(|e| e.to_string())?;
            let link = match &a.preset {
                Some(id) => {
                    presets::find(id).ok_or_else(|| unknown_preset(id))?;
                    overlap_core::share_link::encode(&input, Some(id))
                }
                None => overlap_core::share_link::encode_shortest(&input),
            };
            Ok(link + "\n")
        }
        Command::Trace(a) => match &a.kineto {
            Some(dir) => trace_kineto(dir, &a.scenario.file),
            None => {
                let scenario = load(&a.scenario.file)?
                    .resolve()
                    .map_err(|e| e.to_string())?;
                refuse_trace_early(&scenario, |x| {
                    overlap_core::trace::chrome_trace_bytes(&overlap_core::simulate(x).timeline)
                })?;
                let sim = timeline(&scenario)?;
                trace_chrome(&scenario, &sim)
            }
        },
        Command::Import(a) => {
            let simulated = match &a.scenario {
                Some(file) => {
                    let scenario = load(file)?.resolve().map_err(|e| e.to_string())?;
                    Some(simulate_report(&scenario).map_err(|e| e.to_string())?.report)
                }
                None => None,
            };
            let mut rules = a.classify;
            if let Some(f) = &a.classify_file {
                let text = std::fs::read_to_string(f)
                    .map_err(|e| format!("--classify-file {}: cannot read it: {e}", f.display()))?;
                rules.extend(
                    overlap_trace::rules::parse_rules(&text, &f.display().to_string())
                        .map_err(|e| format!("--classify-file {e}"))?,
                );
            }
            let classifier = Classifier::new(rules);
            if a.propose {
                return import::propose(a.paths, classifier);
            }
            import::run(a.paths, a.json, simulated, classifier)
        }
        Command::Presets => Ok(presets::PRESETS
            .iter()
            .map(|p| format!("{:<26} {}\n", p.id, p.title))
            .collect()),
        Command::Fields => Ok(overlap_core::input::fields::table()),
        Command::Busbw(a) => bus_bandwidth(&a),
        Command::Sweep(a) => sweep(&a),
        Command::Search(a) => search::run(&a, &load(&a.scenario.file)?),
        Command::Published => Ok(format!(
            "{}\nOverlap: the interference model against public measurements\n\n{}\nZero-bubble pipelines (throughput relative to 1F1B; memory of the fullest GPU):\n\n{}\nCoCoNet model-parallel inference (preset {}), one move at a time:\n\n{}",
            overlap_core::published::table(),
            overlap_core::calibration::table(),
            overlap_core::zero_bubble::table(),
            overlap_core::coconet::PRESET,
            overlap_core::coconet::table()
        )),
        Command::Completions(a) => {
            let mut script = Vec::new();
            clap_complete::generate(a.shell, &mut Cli::command(), "overlap-lab", &mut script);
            Ok(String::from_utf8(script).expect("completion scripts are UTF-8"))
        }
    }
}

/// Why a trace of `bytes` (`what` says whose) is not written: over the file
/// size `trace` writes, naming the value of `workload.global_batch` that
/// fits at the bytes per bar this trace measured (else the fields that
/// shorten the step).
fn trace_too_large(scenario: &Scenario, bars: usize, what: &str, bytes: u64) -> String {
    use overlap_core::trace::MAX_TRACE_FILE_BYTES;
    let per_bar = bytes as f64 / bars.max(1) as f64;
    if let Some(e) = overlap_core::input::trace_size::trace_refusal(scenario, per_bar, 0.0) {
        return format!("{e}; overlap-lab simulate gives this step's figures without a trace");
    }
    format!(
        "{what} {:.2} GB, more than the {:.0} GB overlap-lab trace writes: shorten the step \
         (fewer micro-batches through workload.global_batch, or fewer workload.layers); \
         overlap-lab simulate gives this step's figures without a trace",
        bytes as f64 / 1e9,
        MAX_TRACE_FILE_BYTES as f64 / 1e9,
    )
}

/// `trace FILE`: the Chrome trace, its size counted first (in memory that
/// does not grow with it) and then written to standard output as the
/// timeline is walked, so that a large trace is never held whole.
fn trace_chrome(scenario: &Scenario, sim: &Simulation) -> Result<String, String> {
    let bytes = overlap_core::trace::chrome_trace_bytes(&sim.timeline);
    if bytes > overlap_core::trace::MAX_TRACE_FILE_BYTES {
        let bars = sim.timeline.interval_count();
        return Err(trace_too_large(
            scenario,
            bars,
            "this trace would be",
            bytes,
        ));
    }
    let stdout = std::io::stdout().lock();
    let mut w = std::io::BufWriter::with_capacity(1 << 20, stdout);
    let written = overlap_core::trace::write_chrome_trace(&sim.timeline, &mut w)
        .and_then(|()| w.write_all(b"\n"))
        .and_then(|()| w.flush());
    match written {
        // A reader that stops early (`| head`) is not an error.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(format!("cannot write standard output: {e}"))
        }
        _ => Ok(String::new()),
    }
}

/// `trace --kineto DIR FILE`: one Kineto-style trace per simulated GPU
/// into DIR, which HolisticTraceAnalysis reads as a job's trace directory.
fn trace_kineto(dir: &Path, file: &Source) -> Result<String, String> {
    let scenario = load(file)?.resolve().map_err(|e| e.to_string())?;
    refuse_trace_early(&scenario, |x| {
        let sim = overlap_core::simulate(x);
        overlap_core::kineto::each_rank_trace(x, &sim.timeline)
            .map(|t| t.json.len() as u64)
            .sum()
    })?;
    let sim = timeline(&scenario)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // HTA reads every .json and .gz file in the directory as a rank's trace:
    // files of another run would be read as ranks of this one.
    let ours: Vec<String> = sim
        .timeline
        .gpus
        .iter()
        .map(|g| overlap_core::kineto::file_name(g.rank))
        .collect();
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if (name.ends_with(".json") || name.ends_with(".gz")) && !ours.contains(&name) {
            return Err(format!(
                "{} already holds {name}, which HolisticTraceAnalysis would read as a rank's trace: \
                 use an empty directory or one holding only rank<N>.json files of this scenario",
                dir.display()
            ));
        }
    }
    // One rank's JSON in memory at a time; past the size `trace` writes,
    // the files already written are removed and the step refused.
    let mut out = String::new();
    let mut written: Vec<std::path::PathBuf> = Vec::new();
    let mut bytes = 0u64;
    for t in overlap_core::kineto::each_rank_trace(&scenario, &sim.timeline) {
        bytes += t.json.len() as u64;
        if bytes > overlap_core::trace::MAX_TRACE_FILE_BYTES {
            for path in &written {
                let _ = std::fs::remove_file(path);
            }
            let bars = sim.timeline.interval_count();
            return Err(trace_too_large(
                &scenario,
                bars,
                "these traces would be over",
                bytes,
            ));
        }
        let path = dir.join(&t.file_name);
        std::fs::write(&path, &t.json)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        out += &format!("{}\n", path.display());
        written.push(path);
    }
    Ok(out)
}

/// Refuses, before the step is simulated, a step whose trace would be
/// clearly over the size `trace` writes, estimated from its predicted bars
/// at the bytes per bar `trace_bytes` measures on a run of one unit of
/// micro-batches, naming the value of `workload.global_batch` that fits: a
/// step over it was refused only after its timeline was built (tens of
/// seconds, and gigabytes).
fn refuse_trace_early(
    scenario: &Scenario,
    trace_bytes: impl Fn(&Scenario) -> u64,
) -> Result<(), String> {
    use overlap_core::input::trace_size::{
        small_run_bytes_per_bar, trace_refusal, TRACE_ESTIMATE_MARGIN,
    };
    let Some(per_bar) = small_run_bytes_per_bar(scenario, trace_bytes) else {
        return Ok(());
    };
    match trace_refusal(scenario, per_bar, TRACE_ESTIMATE_MARGIN) {
        None => Ok(()),
        Some(e) => Err(format!(
            "{e}; overlap-lab simulate gives this step's figures without a trace"
        )),
    }
}

/// The step with its timeline, or why a trace of it is not written: a
/// timeline over `MAX_TIMELINE_OPS`, with the control and value that would
/// bring it within (its figures are still `simulate`'s).
fn timeline(scenario: &Scenario) -> Result<Simulation, String> {
    Simulator::default().try_simulate(scenario).map_err(|e| {
        format!("{e}; overlap-lab simulate gives this step's figures without its timeline")
    })
}

/// `busbw`: nccl-tests' table for one collective over every GPU of the
/// hardware, sizes 8 B to 4 GiB in powers of two, each size simulated as a
/// `workload.kind: "collective"` scenario.
fn bus_bandwidth(a: &BusbwArgs) -> Result<String, String> {
    use serde_json::json;
    let deepep = a.dispatcher == Some(cli::Dispatcher::Deepep);
    if a.dispatcher.is_some() && a.collective != cli::Collective::AllToAll {
        return Err(format!(
            "--dispatcher runs an all-to-all, not --collective {}: valid with --collective all_to_all",
            a.collective.name()
        ));
    }
    if !deepep {
        for (given, flag) in [
            (a.tokens, "--tokens"),
            (a.hidden, "--hidden"),
            (a.top_k, "--top-k"),
        ] {
            if given.is_some() {
                return Err(format!(
                    "{flag} sets DeepEP's benchmark shape: valid with --collective all_to_all --dispatcher deepep"
                ));
            }
        }
    }
    if deepep {
        return deepep_bottleneck(a);
    }
    let (hardware, nodes, collective) = (a.hardware.name(), a.nodes, a.collective.name());
    let mut out = format!(
        "# {collective} over {nodes} x {hardware}: NCCL {} tuning model, simulated
# {:>12} {:>12} {:>10} {:>10} {:>9} {:>8}
",
        overlap_core::collective_cost::NCCL_VERSION,
        "size (B)",
        "time (us)",
        "algbw",
        "busbw",
        "algorithm",
        "protocol"
    );
    let hardware = ScenarioInput::from_json(
        &json!({ "hardware": { "preset": hardware, "nodes": nodes } }).to_string(),
    )
    .map_err(|e| e.to_string())?
    .hardware;
    for p in overlap_core::sweep::bus_curve(&hardware, a.collective.into())? {
        out += &format!(
            "  {:>12} {:>12.2} {:>10.2} {:>10.2} {:>9} {:>8}
",
            p.bytes, p.time_us, p.alg_gbps, p.bus_gbps, p.algorithm, p.protocol
        );
    }
    Ok(out)
}

/// `busbw --collective all_to_all --dispatcher deepep`: DeepEP's normal
/// kernels in its benchmark's shape at EP 8, 16, 32 and 64 (or over
/// `--nodes`), their bottleneck bandwidth as DeepEP's tests print it
/// (`workload::cost::deepep_bench`). The DGX H100 runs as the H800 DeepEP's
/// table was measured on: NVLink 200 GB/s per direction.
fn deepep_bottleneck(a: &BusbwArgs) -> Result<String, String> {
    use overlap_core::workload::cost::deepep_bench::{bottleneck, DeepEpBench};
    let mut hw = a.hardware.hardware();
    let h800 = a.hardware == overlap_core::HardwarePreset::DgxH100;
    if h800 {
        // The H800's NVLink: 400 GB/s both ways (DeepSeek-V3 section 3.2:
        // about 160 GB/s achievable), where the H100's is 900.
        hw.nvlink_gbps = 200.0;
    }
    let published = DeepEpBench::published(hw.gpus_per_node);
    let shape = DeepEpBench {
        tokens: a.tokens.unwrap_or(published.tokens),
        hidden: a.hidden.unwrap_or(published.hidden),
        top_k: a.top_k.unwrap_or(published.top_k),
        ..published
    };
    let nodes: Vec<u32> = if a.nodes > 1 {
        vec![a.nodes]
    } else {
        vec![1, 2, 4, 8]
    };
    let name = if h800 {
        "H800 (dgx-h100 with NVLink 200 GB/s per direction)".to_string()
    } else {
        a.hardware.name().to_string()
    };
    let mut out = format!(
        "# DeepEP normal kernels on {name}, simulated: {} tokens, hidden {}, top-{} of {} experts, top-{} node groups,
# FP8 dispatch, BF16 combine, {} SMs; GB/s as DeepEP's tests count them (RDMA: tokens x nodes reached, own node included;
# NVL: tokens received, own GPU included); the bottleneck is RDMA across nodes, NVL inside one
# {:>5} {:>5} {:>7} {:>13} {:>13} {:>13} {:>13} {:>13} {:>13}
",
        shape.tokens,
        shape.hidden,
        shape.top_k,
        shape.experts,
        shape.max_nodes_per_token,
        shape.sms,
        "EP",
        "nodes",
        "path",
        "dispatch us",
        "dispatch GB/s",
        "(RDMA / NVL)",
        "combine us",
        "combine GB/s",
        "(RDMA / NVL)"
    );
    for n in nodes {
        hw.nodes = n;
        let b = bottleneck(
            &hw,
            &DeepEpBench {
                ep: n * hw.gpus_per_node,
                ..shape
            },
        )
        .map_err(|e| format!("--nodes {n}: {e}"))?;
        // Inside one node the tests time NVLink alone (test_intranode.py).
        let counted = |rdma: f64, nvl: f64| {
            if b.internode() {
                format!("{rdma:.1} / {nvl:.1}")
            } else {
                format!("- / {nvl:.1}")
            }
        };
        out += &format!(
            "  {:>5} {:>5} {:>7} {:>13.1} {:>13.1} {:>13} {:>13.1} {:>13.1} {:>13}
",
            b.ep,
            b.nodes,
            b.path(),
            b.dispatch_us,
            b.dispatch_gbps(),
            counted(b.dispatch_rdma_gbps, b.dispatch_nvl_gbps),
            b.combine_us,
            b.combine_gbps(),
            counted(b.combine_rdma_gbps, b.combine_nvl_gbps),
        );
    }
    Ok(out)
}

/// `sweep`: one field set to each value in turn, one row per value
/// (interface.md); a refused value is a row with its message.
fn sweep(a: &SweepArgs) -> Result<String, String> {
    use overlap_core::sweep;
    let field = sweep::field(&a.field)?;
    // clap takes exactly one of the two (the group `points`).
    let values = match (&a.values, &a.range) {
        (Some(list), _) => sweep::values_from_list(field, list)?,
        (None, Some(range)) => sweep::values_from_range(field, range)?,
        (None, None) => return Err("sweep needs --values or --range".into()),
    };
    let input = load(&a.scenario.file)?;
    let rows = sweep::Sweep::new(input, field).rows(&values);
    if a.format.json {
        let table = sweep::Table {
            field: field.path,
            rows: &rows,
        };
        return Ok(serde_json::to_string_pretty(&table).expect("sweeps serialise") + "\n");
    }
    if a.format.csv {
        return Ok(sweep::csv(&rows));
    }
    let mut out = format!(
        "# {}: {}\n# {:>10} {:>10} {:>10} {:>8} {:>10}",
        field.path, field.label, "value", "step ms", "baseline", "speedup", "compute"
    );
    // The axes some value has (EP with experts, CP with cp > 1).
    let axes: Vec<Axis> = Axis::ALL
        .into_iter()
        .filter(|a| {
            rows.iter()
                .filter_map(sweep::Row::point)
                .any(|p| p.exposed_ms.contains_key(a.name()))
        })
        .collect();
    for a in &axes {
        out += &format!(" {:>9}", format!("{} exp", a.label()));
    }
    out += &format!(" {:>7} {:>9} {:>5}\n", "bubble", "memory GB", "fits");
    for row in &rows {
        let value = overlap_core::input::fields::Field::text(row.value());
        match row {
            sweep::Row::Point(p) => {
                out += &format!(
                    "  {value:>10} {:>10.3} {:>10.3} {:>8.3} {:>10.3}",
                    p.step_time_ms, p.baseline_ms, p.speedup, p.compute_ms
                );
                for &a in &axes {
                    out += &format!(" {:>9.3}", p.exposed(a));
                }
                out += &format!(
                    " {:>6.1}% {:>9.1} {:>5}\n",
                    p.bubble_fraction * 100.0,
                    p.memory_gb_total,
                    if p.fits { "yes" } else { "no" }
                );
            }
            sweep::Row::Refused { error, .. } => {
                out += &format!("  {value:>10} refused: {error}\n")
            }
        }
    }
    Ok(out)
}

fn unknown_preset(id: &str) -> String {
    clip_echoes(&format!(
        "unknown preset {id:?}: valid are {}",
        presets::listed_ids()
    ))
}

fn load(file: &Source) -> Result<ScenarioInput, String> {
    let text = match file {
        Source::Preset(id) => {
            return presets::find(id)
                .map(|p| p.input())
                .ok_or_else(|| unknown_preset(id))
        }
        Source::Stdin => read_capped(std::io::stdin().lock(), "standard input")?,
        Source::Path(path) => {
            let name = clip_echoes(&path.to_string_lossy());
            let opened =
                std::fs::File::open(path).map_err(|e| format!("cannot read {name}: {e}"))?;
            read_capped(opened, &name)?
        }
    };
    ScenarioInput::from_json(&text).map_err(|e| e.to_string())
}

/// Reads at most one byte more than a scenario may hold, so that an endless
/// stream (/dev/zero, a pipe that never closes its data) is refused after
/// [`MAX_INPUT_BYTES`] rather than read until memory runs out.
fn read_capped(source: impl Read, name: &str) -> Result<String, String> {
    let mut bytes = Vec::new();
    source
        .take(MAX_INPUT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(format!(
            "{name} holds more than {MAX_INPUT_BYTES} bytes: a scenario is at most {MAX_INPUT_MIB} MiB; reading stopped there"
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "{name} is not UTF-8 text (byte {} is not): a scenario is JSON text",
            e.utf8_error().valid_up_to()
        )
    })?;
    // Some editors begin a UTF-8 file with a byte-order mark; it is not JSON.
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

fn summary(s: &Scenario, r: &Report) -> String {
    let hw = &s.hardware;
    // CP appears where the scenario has it, as in the report.
    let cp = if s.parallel.cp > 1 {
        format!(" x cp {} ({})", s.parallel.cp, s.parallel.cp_mode.name())
    } else {
        String::new()
    };
    let mut out = format!(
        "{} x {} GPUs ({}), tp {}{cp} x pp {} x dp {}\n\
         step time      {:10.3} ms   (all overlap off: {:.3} ms, speedup {:.3}x)\n\
         compute        {:10.3} ms   bubble {:.1}%\n\
         model TFLOP/s  {:10.1} per GPU (MFU {:.1}% of the {} peak, attention unmasked), executed {:.1} per GPU\n\
         causal TFLOP/s {:10.1} per GPU (causal MFU {:.1}%, attention counted causal)\n\n\
         axis   comm ms  exposed ms  hidden  window ms  contention ms  under compute ms  under idle ms\n",
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
        r.precision.name(),
        r.hardware_tflops_per_gpu,
        r.causal_tflops_per_gpu,
        r.causal_mfu * 100.0,
    );
    // The expert axis only for a model with experts, as the report has it.
    for axis in Axis::ALL.into_iter().filter(|&a| s.has_axis(a)) {
        let a = r.axes.get(axis);
        // An axis that moves nothing has no share hidden; the page shows a dash too.
        let hidden = a
            .hidden_share()
            .map_or_else(|| "-".to_string(), |h| format!("{:.1}%", h * 100.0));
        // A part that is a rounding residual (under idle is what is left of
        // comm after the other two) prints as 0.000, never as -0.000.
        let ms = |x: f64| if x.abs() < 5e-4 { 0.0 } else { x };
        out += &format!(
            "{:<4} {:9.3} {:11.3} {:>7} {:10.3} {:14.3} {:17.3} {:14.3}\n",
            axis.name(),
            ms(a.comm_ms),
            ms(a.exposed_ms),
            hidden,
            ms(a.window_ms),
            ms(a.contention_ms),
            ms(a.under_compute_ms),
            ms(a.under_idle_ms)
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
    let m = &r.memory_gb;
    out += &format!(
        "memory  {:.1} of {:.0} GB on the fullest GPU ({}): weights {:.1}, gradients {:.1}, optimizer {:.1}, activations {:.1}\n",
        m.total,
        m.capacity,
        if m.fits { "fits" } else { "does not fit" },
        m.weights,
        m.gradients,
        m.optimizer,
        m.activations
    );
    out
}
