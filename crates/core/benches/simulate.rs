//! Criterion benchmarks of a whole simulated step, each counting the scenario
//! and its all-off baseline (what the page and the CLI run). Besides
//! criterion's timings it prints, per scenario, the time per simulate, the
//! events processed and planned, and the peak memory that scenario alone
//! reached (the peak is reset before each), both report-only
//! (`simulate_report`, what the CLI's `simulate` and sweeps need) and with
//! the timeline (what the page asks for). The time per simulate is the
//! median of the simulates after the first (the fastest beside it), and the
//! first is printed apart: it touches memory the allocator has not handed
//! out yet. Report-only is timed twice: with
//! its independent runs spread over the machine's threads (`parallel`, its
//! time), and on one thread (its cost). For a step made of several runs
//! (the steady state's short runs, the baseline's), each run's time, events
//! and time per event follow: what a thread of the CLI or a worker of the
//! page does, and where a faster engine would show; then what those runs
//! take spread over one, two and as many threads as runs: a run is never
//! split, so the thread given the most runs bounds the step however fast
//! the others finish. Figures, never assertions.

use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use overlap_core::workload::build::run_cost::cost;
use overlap_core::{parallel, presets, simulate, Scenario, Simulator};

/// The CLI's allocator (see its `main.rs`), so that these figures are what
/// `overlap-lab simulate` ships.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::{peak_memory_mb, reset_peak_memory};

/// 1T with all three overlaps on at four TP chunks.
fn one_t_on() -> Scenario {
    let mut s = presets::scenario("megatron-1t").unwrap();
    s.overlap.tp = true;
    s.overlap.pp = true;
    s.overlap.dp = true;
    s.overlap.tp_chunks = 4;
    s
}

/// The DeepSeek-V3-shaped preset on its 1024 H800 with every overlap on
/// (issue 41's goal: under 100 ms natively, scenario and baseline).
fn deepseek_all_on() -> Scenario {
    let mut s = presets::scenario("deepseek-v3").unwrap();
    s.overlap.tp = true;
    s.overlap.pp = true;
    s.overlap.dp = true;
    s.overlap.ep = true.into();
    s.overlap.param_gather = true;
    s
}

fn cases() -> Vec<(&'static str, Scenario, u32)> {
    let p = |id| presets::scenario(id).unwrap();
    vec![
        ("default", p(presets::DEFAULT_ID), 300),
        ("contention", p("contention"), 300),
        ("megatron-145.6b", p("megatron-145.6b"), 10),
        ("megatron-1t (overlap off)", p("megatron-1t"), 3),
        ("megatron-1t (all overlaps, tp_chunks 4)", one_t_on(), 3),
        // Issue 54's goal: the preset as shipped (DualPipeV, 120
        // micro-batches) under 200 ms, scenario and baseline.
        ("deepseek-v3 (as shipped)", p("deepseek-v3"), 3),
        (
            "deepseek-v3 1024 GPUs (every overlap)",
            deepseek_all_on(),
            3,
        ),
        // Issue 42's goal: under 100 ms, scenario and baseline.
        (
            "llama3-405b-128k (every overlap on)",
            p("llama3-405b-128k"),
            3,
        ),
    ]
}

/// Report-only simulates timed per scenario and path, at the least.
const REPORT_RUNS: u32 = 15;

/// How a step is simulated: report-only on so many threads, or with its timeline.
#[derive(Clone, Copy)]
enum Path {
    Report {
        threads: usize,
    },
    Timeline,
    /// The timeline the page draws: one short run's period repeated
    /// where the step allows (`Simulator::simulate_periodic`).
    Periodic,
}

fn report(name: &str, scenario: &Scenario, runs: u32) {
    let predicted = cost(scenario);
    let threads = parallel::available_threads();
    // Smallest peak first: memory a run freed may stay resident in the
    // allocator, and would show as the next one's peak. One thread holds
    // one run at a time, several hold several, the timeline the whole step.
    let mut paths = vec![Path::Report { threads: 1 }];
    if threads > 1 {
        paths.push(Path::Report { threads });
    }
    paths.push(Path::Timeline);
    paths.push(Path::Periodic);
    for path in paths {
        reset_peak_memory();
        let base = peak_memory_mb();
        // The first simulate of a path is timed apart: it touches memory the
        // allocator has not handed out before (page faults, huge pages
        // zeroed), which the later ones reuse, and its time varies most.
        let mut first_s = 0.0;
        let mut later_s = Vec::new();
        let (mut events, mut planned) = (0, 0);
        // Report-only runs are cheap: enough of them that the median shows
        // the code, not a moment of the machine (a shared VM's times vary by
        // a third from one minute to the next).
        let runs = match path {
            Path::Report { .. } => runs.max(REPORT_RUNS),
            Path::Timeline | Path::Periodic => runs,
        };
        for run in 0..runs {
            let started = Instant::now();
            let (e, p) = match path {
                Path::Timeline => {
                    let sim = simulate(scenario);
                    (sim.events, sim.planned_events)
                }
                Path::Periodic => {
                    let sim = Simulator::default()
                        .with_threads(1)
                        .simulate_periodic(scenario);
                    (sim.events, sim.planned_events)
                }
                Path::Report { threads } => {
                    let figures = Simulator::default()
                        .with_threads(threads)
                        .simulate_report(scenario)
                        .expect("the presets are within the budget");
                    (figures.events, figures.planned_events)
                }
            };
            let seconds = started.elapsed().as_secs_f64();
            if run == 0 {
                first_s = seconds;
            } else {
                later_s.push(seconds);
            }
            events += e;
            planned += p;
        }
        later_s.sort_by(f64::total_cmp);
        let later = later_s
            .get(later_s.len() / 2)
            .map(|median| (median * 1e3, later_s[0] * 1e3));
        println!(
            "{name}{}: {:.3} ms per simulate (scenario + baseline){}, {} ops, {} events ({} planned, bound {}), peak memory {}",
            match path {
                Path::Timeline => String::new(),
                Path::Periodic => " [timeline from a short run where periodic, 1 thread]".to_string(),
                Path::Report { threads: 1 } => " [report only, 1 thread]".to_string(),
                Path::Report { threads } => format!(" [report only, {threads} threads]"),
            },
            later.map_or(first_s * 1e3, |(median_ms, _)| median_ms),
            match later {
                Some((_, fastest_ms)) => format!(
                    ", the median of {} after a first of {:.3} ms (fastest {fastest_ms:.3} ms)",
                    later_s.len(),
                    first_s * 1e3
                ),
                None => String::new(),
            },
            predicted.ops,
            events / u64::from(runs),
            planned / u64::from(runs),
            predicted.planned_events,
            match (peak_memory_mb(), base) {
                (Some(peak), Some(base)) => format!("{peak:.0} MB ({:.0} MB above the process's start)", peak - base),
                _ => "unknown".to_string(),
            }
        );
    }
}

/// Each independent run of a report-only simulate, timed alone on this
/// thread (the best of `runs`), with its events and its time per event.
fn parts(name: &str, scenario: &Scenario, runs: u32) {
    let sim = Simulator::default();
    let parts = sim.report_parts(scenario);
    if parts.len() < 2 {
        return;
    }
    let mut best_ms = Vec::with_capacity(parts.len());
    for part in parts {
        let (mut best_s, mut events) = (f64::INFINITY, 0);
        for _ in 0..runs {
            let started = Instant::now();
            let ran = sim.run_part(scenario, part);
            best_s = best_s.min(started.elapsed().as_secs_f64());
            events = ran.events();
        }
        println!(
            "{name} [one run: {}{}]: {:.3} ms, {events} events, {:.0} ns per event",
            if part.baseline {
                "baseline"
            } else {
                "scenario"
            },
            part.micro_batches
                .map_or(String::new(), |m| format!(" at {m} micro-batches")),
            best_s * 1e3,
            best_s * 1e9 / events.max(1) as f64,
        );
        best_ms.push(best_s * 1e3);
    }
    // What spreading these runs gives as `parallel::map` takes them: a run
    // is not split, so one thread's runs bound the step's time.
    let mut threads = vec![1, 2, best_ms.len()];
    threads.dedup();
    let spread: Vec<String> = threads
        .into_iter()
        .map(|n| format!("{:.1} ms on {n}", spread_ms(&best_ms, n)))
        .collect();
    println!(
        "{name} [its runs spread as `parallel::map` takes them, from the times above]: {} threads (before the memory cap of `parallel::runs_at_once`)",
        spread.join(", "),
    );
}

/// The time of runs lasting `ms` (in their list's order) on `threads`
/// threads, each thread taking the next run as soon as it is free.
fn spread_ms(ms: &[f64], threads: usize) -> f64 {
    let mut free_at = vec![0.0f64; threads.max(1)];
    for &run in ms {
        let first_free = free_at
            .iter_mut()
            .min_by(|a, b| a.total_cmp(b))
            .expect("at least one thread");
        *first_free += run;
    }
    free_at.into_iter().fold(0.0, f64::max)
}

fn benches(c: &mut Criterion) {
    for (name, scenario, runs) in cases() {
        report(name, &scenario, runs);
        parts(name, &scenario, runs.min(5));
    }
    let mut group = c.benchmark_group("simulate (with baseline)");
    for (name, scenario, runs) in cases() {
        if runs < 300 {
            group.sample_size(10);
        }
        group.bench_function(name, |b| {
            b.iter(|| simulate(std::hint::black_box(&scenario)))
        });
    }
    group.finish();
}

criterion_group!(simulate_step, benches);
criterion_main!(simulate_step);
