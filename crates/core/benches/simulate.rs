//! Criterion benchmarks of a whole simulated step, each counting the scenario
//! and its all-off baseline (what the page and the CLI run). Besides
//! criterion's timings it prints simulated events per second and the
//! process's peak memory. Figures, never assertions.

use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use overlap_core::{presets, simulate};

/// Peak resident memory of this process so far (Linux), in MB.
fn peak_memory_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn report(id: &str) {
    let scenario = presets::scenario(id).expect("preset resolves");
    let runs: u32 = if id == "megatron-1t" { 3 } else { 200 };
    let started = Instant::now();
    let mut events = 0;
    for _ in 0..runs {
        events += simulate(&scenario).events;
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{id}: {:.3} ms per simulate (scenario + baseline), {:.1} M events/s, {} events, peak memory {}",
        seconds / f64::from(runs) * 1e3,
        events as f64 / seconds / 1e6,
        events / u64::from(runs),
        peak_memory_mb().map_or("unknown".to_string(), |m| format!("{m:.0} MB"))
    );
}

fn benches(c: &mut Criterion) {
    let default = presets::scenario(presets::DEFAULT_ID).unwrap();
    c.bench_function("simulate default (with baseline)", |b| {
        b.iter(|| simulate(std::hint::black_box(&default)))
    });
    report(presets::DEFAULT_ID);

    let one_t = presets::scenario("megatron-1t").unwrap();
    let mut group = c.benchmark_group("large");
    group.sample_size(10);
    group.bench_function("simulate megatron-1t (with baseline)", |b| {
        b.iter(|| simulate(std::hint::black_box(&one_t)))
    });
    group.finish();
    report("megatron-1t");
}

criterion_group!(simulate_step, benches);
criterion_main!(simulate_step);
