//! Causal attention (model.md 4, issue 55): FlashAttention runs the causal
//! half of its tiles at its kernel family's own sustained fraction per GPU
//! generation; with context parallelism the rank's own block (the
//! diagonal) runs its lower triangle and every other block half, as
//! Transformer Engine's load-balanced chunks make them. Read from the
//! timeline. The report gives FLOPs both ways: Megatron's unmasked count
//! (`mfu`) and the causal one (`causal_mfu`). Llama 3 405B's long-context
//! stage against its 8K stage on the causal convention
//! (published.md section 12).

use overlap_core::scenario::{Scenario, Workload};
use overlap_core::timeline::{OpKind, Phase};
use overlap_core::{presets, simulate, simulate_report, ScenarioInput};

/// A Llama-3-8B-shaped layer pair at `seq` tokens on `hardware`, TP `tp`,
/// CP `cp` (`mode`), no interference, one micro-batch, `recompute`.
fn scenario(hardware: &str, seq: u32, tp: u32, cp: u32, mode: &str, recompute: &str) -> Scenario {
    let gpus = tp * cp;
    let nodes = gpus.div_ceil(8);
    ScenarioInput::from_json(&format!(
        r#"{{"hardware":{{"preset":"{hardware}","nodes":{nodes}}},
        "workload":{{"layers":2,"hidden":4096,"heads":32,"kv_heads":8,"ffn_hidden":14336,"mlp":"swiglu",
          "seq":{seq},"micro_batch":1,"global_batch":1,"vocab":128256,"attention":"flash",
          "tied_embeddings":false,"recompute":"{recompute}"}},
        "parallel":{{"tp":{tp},"cp":{cp},"pp":1,"dp":1,"cp_mode":"{mode}"}},
        "overlap":{{"tp":true,"dp":true,"cp":true}},"interference":"off"}}"#
    ))
    .unwrap()
    .resolve()
    .unwrap()
}

/// The attention core's kernels of layer 0, micro-batch 0 on GPU 0 in
/// `phase`, in start order: (chunk, seconds). In backward the last ones:
/// the projection's GEMMs run first in the same op.
fn attention_blocks(s: &Scenario, phase: Phase) -> Vec<(u32, f64)> {
    let sim = simulate(s);
    let op = match phase {
        Phase::Forward => OpKind::Attention,
        _ => OpKind::AttentionBackward,
    };
    let mut blocks: Vec<_> = sim.timeline.gpus[0]
        .compute
        .iter()
        .filter(|c| c.op == op && c.phase == phase && c.layer == 0 && c.micro_batch == 0)
        .map(|c| (c.start_s, c.chunk, c.end_s - c.start_s))
        .collect();
    blocks.sort_by(|a, b| a.0.total_cmp(&b.0));
    blocks.into_iter().map(|(_, chunk, s)| (chunk, s)).collect()
}

/// FLOPs of the unmasked attention core forward of one layer on one TP
/// rank of one CP rank: 4 x (seq / cp) x seq x heads x 128 / tp.
fn unmasked_forward_flops(seq: u32, tp: u32, cp: u32) -> f64 {
    let (seq, tp, cp) = (f64::from(seq), f64::from(tp), f64::from(cp));
    4.0 * (seq / cp) * seq * 32.0 * 128.0 / tp
}

#[test]
fn the_ring_runs_the_diagonal_block_lower_triangle_and_every_other_block_half() {
    // TE: step 0 the diagonal (causal), steps i <= rank the lower
    // triangle (every query, half the keys), later steps the upper (half
    // the queries, every key). 65,536 tokens over CP 8: 8,192 local, n =
    // 64 tiles of 128, the diagonal runs 65 / 128 of its block.
    let s = scenario("dgx-h100", 65536, 1, 8, "ring", "none");
    let blocks = attention_blocks(&s, Phase::Forward);
    assert_eq!(blocks.len(), 8, "{blocks:?}");
    let off = blocks[1].1;
    for b in &blocks[1..] {
        assert!((b.1 - off).abs() < 1e-9 * off, "{blocks:?}");
    }
    let diagonal = blocks[0].1;
    let ratio = diagonal / off;
    assert!((ratio - 65.0 / 64.0).abs() < 1e-9, "{ratio}");
    // A half block runs half the unmasked block's FLOPs at FlashAttention-3's
    // forward fraction (616 of 989 TFLOP/s, its paper's Figure 5), scaled by
    // the size curve (FLASH_HALF_EFFICIENCY_FLOPS: 0.5 GFLOP per head).
    let per_head = 2.0 * 8192.0 * 8192.0 * 128.0;
    let efficiency = 616.0 / 989.0 * per_head / (per_head + 0.5e9);
    // One block: the rank's queries against one rank's keys, 1/cp of them.
    let want = 0.5 * unmasked_forward_flops(65536, 1, 8) / 8.0 / (989e12 * efficiency);
    assert!((off - want).abs() < 1e-6 * want, "{off} vs {want}");
}

#[test]
fn the_ring_backward_runs_the_diagonal_last_as_transformer_engine_does() {
    // TE's backward reverses the steps: the diagonal at i == cp - 1
    // (context_parallel.py line 2581).
    let s = scenario("dgx-h100", 65536, 1, 8, "ring", "none");
    let all = attention_blocks(&s, Phase::Backward);
    let blocks = &all[all.len() - 8..];
    let (first, last) = (blocks[0].1, blocks[7].1);
    assert!(last > first, "{blocks:?}");
    assert!((last / first - 65.0 / 64.0).abs() < 1e-9, "{blocks:?}");
    // The backward is five GEMMs against the forward's two, at
    // FlashAttention-3's backward fraction (561 of 989, its Figure 6).
    let forward = attention_blocks(&s, Phase::Forward)[1].1;
    let ratio = first / forward;
    assert!((ratio - 2.5 * 616.0 / 561.0).abs() < 1e-9, "{ratio}");
}

#[test]
fn without_cp_the_kernel_runs_the_lower_triangle_of_its_tiles() {
    // One block of 8,192 tokens: 64 tiles a side, 64 x 65 / 2 of 64^2 run.
    let s = scenario("dgx-h100", 8192, 8, 1, "ring", "none");
    let blocks = attention_blocks(&s, Phase::Forward);
    assert_eq!(blocks.len(), 1);
    let per_head = 2.0 * 8192.0 * 8192.0 * 128.0;
    let efficiency = 616.0 / 989.0 * per_head / (per_head + 0.5e9);
    let want = 65.0 / 128.0 * unmasked_forward_flops(8192, 8, 1) / (989e12 * efficiency);
    assert!(
        (blocks[0].1 - want).abs() < 1e-6 * want,
        "{blocks:?} vs {want}"
    );
}

#[test]
fn a100_runs_flashattention_2_at_its_own_fraction() {
    // FlashAttention-2 (Dao 2023): 0.66 of A100's 312 TFLOP/s both ways.
    let s = scenario("dgx-a100", 8192, 8, 1, "ring", "none");
    let blocks = attention_blocks(&s, Phase::Forward);
    let per_head = 2.0 * 8192.0 * 8192.0 * 128.0;
    let efficiency = 0.66 * per_head / (per_head + 0.5e9);
    let want = 65.0 / 128.0 * unmasked_forward_flops(8192, 8, 1) / (312e12 * efficiency);
    assert!(
        (blocks[0].1 - want).abs() < 1e-6 * want,
        "{blocks:?} vs {want}"
    );
}

#[test]
fn the_gathered_form_runs_the_diagonal_and_the_halves_after_the_gather() {
    // Transformer Engine's all-gather form runs both load-balanced query
    // chunks after the gather (context_parallel.py lines 3215 and 3339):
    // one op, the ring's diagonal and its cp - 1 half blocks together.
    let s = scenario("dgx-h100", 65536, 1, 8, "allgather", "none");
    let blocks = attention_blocks(&s, Phase::Forward);
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    let ring = attention_blocks(
        &scenario("dgx-h100", 65536, 1, 8, "ring", "none"),
        Phase::Forward,
    );
    let want: f64 = ring.iter().map(|b| b.1).sum();
    assert!(
        (blocks[0].1 - want).abs() < 1e-9 * want,
        "{blocks:?} vs {ring:?}"
    );
}

#[test]
fn causal_flops_leave_out_half_of_the_unmasked_attention() {
    // Megatron's count (mfu) keeps the unmasked attention; the causal count
    // leaves out half of it: 3 x 4 seq^2 x width per layer and sequence,
    // halved, over the GPUs and the step.
    let s = scenario("dgx-h100", 65536, 1, 8, "ring", "none");
    let r = simulate_report(&s).unwrap().report;
    let step_s = r.step_time_ms / 1e3;
    let masked = 0.5 * 3.0 * 4.0 * 65536f64.powi(2) * 4096.0 * 2.0;
    let want = r.model_tflops_per_gpu - masked / 8.0 / step_s / 1e12;
    assert!(
        (r.causal_tflops_per_gpu - want).abs() < 1e-9 * want,
        "{r:?}"
    );
    assert!((r.causal_mfu - r.causal_tflops_per_gpu / 989.0).abs() < 1e-12);
    assert!((r.mfu - r.model_tflops_per_gpu / 989.0).abs() < 1e-12);
}

/// Llama 3 405B's 8K stage (arXiv 2407.21783, Table 4): the long-context
/// preset's model and layout at 8,192 tokens, CP 1, DP 128, 2,048
/// sequences per step (16M tokens, 16 per DP group as at 128K).
fn llama3_405b_8k() -> Scenario {
    let mut s = presets::scenario("llama3-405b-128k").unwrap();
    if let Workload::Transformer(t) = &mut s.workload {
        t.seq = 8192;
        t.global_batch = 2048;
    }
    s.parallel.cp = 1;
    s.parallel.dp = 128;
    s
}

#[test]
fn llama3_405b_long_context_keeps_its_causal_mfu_near_the_8k_stage() {
    // Llama 3, Table 4: 380 TFLOP/s (38%) at 131,072 tokens against 400
    // (41%) at 8,192: the paper counts attention causal; 380 / 400 = 0.95.
    // Goal: within 10%.
    let long = simulate_report(&presets::scenario("llama3-405b-128k").unwrap())
        .unwrap()
        .report;
    let short = simulate_report(&llama3_405b_8k()).unwrap().report;
    let ratio = long.causal_mfu / short.causal_mfu;
    println!(
        "causal MFU {:.3} at 128K, {:.3} at 8K: {ratio:.3} (published 0.95); Megatron's count {:.3} / {:.3}",
        long.causal_mfu, short.causal_mfu, long.mfu, short.mfu
    );
    // The goal, within 10% of 0.95, held at 0.875 until the all-gather
    // form ran as Transformer Engine's code runs it (issue 55: the K/V
    // gather exposed, and gathered again in the backward): 0.848, -10.7%,
    // a known gap in docs/validation.md. Pinned here so a change that
    // moves it says so.
    assert!((ratio - 0.848).abs() <= 0.005, "{ratio}");
    // With the recomputation the preset states, it fits 80 GB.
    assert!(long.memory_gb.fits, "{:?}", long.memory_gb);
}
