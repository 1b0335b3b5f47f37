//! One test per row of ../shared/validation/published.md. Each prints the
//! simulated and the published figure; all use the same global efficiencies.

use overlap_core::published::{compare, Comparison, TOLERANCE};
use overlap_core::{presets, simulate};

fn check(id: &str) -> Comparison {
    let c = compare(presets::find(id).expect("preset exists")).expect("preset has a figure");
    println!(
        "{id}: {} published {:.3}, simulated {:.3} ({:+.1}%, {})",
        c.metric,
        c.published,
        c.simulated,
        c.relative_error() * 100.0,
        c.note
    );
    assert!(
        c.within_tolerance(),
        "{id}: simulated {:.3} is not within {:.0}% of published {:.3}",
        c.simulated,
        TOLERANCE * 100.0,
        c.published
    );
    c
}

/// CoCoNet's MatMul + AllReduce at its best chunking. The chunks' AllReduces
/// pay NCCL's latency and protocol by their size (collective_cost), so
/// chunking is no longer free and the best speedup falls into the range.
#[test]
fn coconet_matmul_allreduce_speedup_at_the_best_chunking() {
    let c = check("coconet");
    // published.md: speedup in [1.25, 1.45] at the best tp_chunks.
    assert!((1.25..=1.45).contains(&c.simulated), "{}", c.simulated);
}

#[test]
fn coconet_overlap_hides_more_than_80_percent_of_the_matmul() {
    let mut s = presets::scenario("coconet").unwrap();
    s.sm_tax = 0.0;
    let mut sequential = s.clone();
    sequential.overlap.tp = false;
    let matmul_ms = simulate(&sequential).report.compute_ms;
    let best = overlap_core::published::CHUNK_CHOICES
        .iter()
        .map(|&chunks| {
            let mut o = s.clone();
            o.overlap.tp_chunks = chunks;
            let r = simulate(&o).report;
            (r.baseline_ms - r.step_time_ms) / matmul_ms
        })
        .fold(0.0, f64::max);
    println!("coconet: hidden fraction of the matmul {best:.3} (published: more than 0.8)");
    assert!(best > 0.8, "{best}");
}

#[test]
fn megatron_1_7b_tflops_per_gpu() {
    check("megatron-1.7b");
}

#[test]
fn megatron_18_4b_tflops_per_gpu() {
    check("megatron-18.4b");
}

#[test]
fn megatron_145_6b_tflops_per_gpu() {
    check("megatron-145.6b");
}

#[test]
fn megatron_1t_tflops_per_gpu() {
    check("megatron-1t");
}

/// Both of Korthikanti et al.'s columns for one model, and their ratio.
fn check_full_against_seqsel(model: &str) {
    let full = check(&format!("korthikanti-{model}-full"));
    let seqsel = check(&format!("korthikanti-{model}-seqsel"));
    let (sim, publ) = (
        full.simulated / seqsel.simulated,
        full.published / seqsel.published,
    );
    println!("{model} full / seq+sel: published {publ:.3}, simulated {sim:.3}");
    assert!(((sim - publ) / publ).abs() <= TOLERANCE);
}

#[test]
fn korthikanti_22b_iteration_times_and_their_ratio() {
    check_full_against_seqsel("22b");
}

#[test]
fn korthikanti_175b_iteration_times_and_their_ratio() {
    check_full_against_seqsel("175b");
}

#[test]
fn default_sm_tax_sits_in_the_measured_range() {
    // published.md section 4: 10-20% on average.
    let s = presets::scenario("didactic").unwrap();
    assert!((0.10..=0.20).contains(&s.sm_tax));
}

#[test]
fn docs_table_is_current() {
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/validation.md"
    ))
    .expect("docs/validation.md exists");
    let table = overlap_core::published::table();
    assert!(
        docs.contains(&table),
        "docs/validation.md is stale: replace its table with the output of `overlap-lab published`:\n{table}"
    );
}
