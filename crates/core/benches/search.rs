//! Criterion benchmarks of the layout search (issue 59), with the figures
//! the issue asks for printed beside criterion's timings: the size of the
//! space, how many candidates were refused, pruned and simulated, the best
//! layout with its step and memory, the time taken and the peak memory.
//!
//! - `megatron-22B` on 64 A100 80 GB with a maximum batch of 512, the
//!   problem `scripts/calculon-search.sh` gives Calculon's
//!   `llm-optimal-execution` beside it (Korthikanti et al.'s 22B: 48
//!   layers, hidden 6144, 64 heads, sequence 2048);
//! - GPT-3 175B on 1,024 A100 (global batch 1,536, sequence 2,048), run
//!   once, not sampled (`SEARCH_BENCH_175B=1`: it takes minutes on a
//!   2-core machine).
//!
//! Figures, never assertions.

use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use overlap_core::search::{search, Options};
use overlap_core::ScenarioInput;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::{peak_memory_mb, reset_peak_memory};

const MEGATRON_22B: &str = r#"{"hardware":{"preset":"dgx-a100","nodes":8,"hbm_gb":80},
  "workload":{"layers":48,"hidden":6144,"heads":64,"seq":2048,"vocab":51200,
              "micro_batch":1,"global_batch":512}}"#;

const GPT3_175B: &str = r#"{"hardware":{"preset":"dgx-a100","nodes":128},
  "workload":{"layers":96,"hidden":12288,"heads":96,"seq":2048,"vocab":51200,
              "micro_batch":1,"global_batch":1536}}"#;

/// Runs one search and prints its figures.
fn report(name: &str, json: &str, options: &Options) {
    let input = ScenarioInput::from_json(json).expect("a valid scenario");
    reset_peak_memory();
    let start = Instant::now();
    let o = search(&input, options, |_| {}).expect("the search runs");
    let took = start.elapsed().as_secs_f64();
    let best = o.best.first();
    println!(
        "{name}: {took:.1} s, peak {} MB; space {}, refused {} (memory {}, divide {}, limit {}), pruned {}, simulated {}",
        peak_memory_mb().map_or_else(|| "?".to_string(), |mb| format!("{mb:.0}")),
        o.space,
        o.refused,
        o.refusals.memory,
        o.refusals.divide,
        o.refusals.limit,
        o.pruned,
        o.simulated
    );
    if let Some(b) = best {
        println!(
            "  best: {} — {:.1} ms per step ({:.3} ms per sample), {:.1} GB",
            b.description, b.figures.step_time_ms, b.time_per_sample_ms, b.figures.memory_gb
        );
    }
}

fn bench(c: &mut Criterion) {
    let max_batch = Options {
        max_batch: Some(512),
        ..Options::default()
    };
    report(
        "megatron-22B on 64 A100, max batch 512",
        MEGATRON_22B,
        &max_batch,
    );
    if std::env::var_os("SEARCH_BENCH_175B").is_some() {
        report("GPT-3 175B on 1024 A100", GPT3_175B, &Options::default());
    }
    let input = ScenarioInput::from_json(MEGATRON_22B).unwrap();
    let mut g = c.benchmark_group("search");
    g.sample_size(10);
    g.bench_function("megatron-22B/64, max batch 512", |b| {
        b.iter(|| search(&input, &max_batch, |_| {}).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
