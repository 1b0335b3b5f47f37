//! FP8 over bf16 against torchtitan's Async TP benchmark
//! (pytorch/torchtitan benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md,
//! `../shared/validation/published.md` section 12): tokens per second in
//! float8 tensorwise over bf16, each TP form against its own rows. The
//! presets `llama3-8b-fsdp` and `llama3-70b-fsdp` in fp8 with FSDP's fp8
//! gathers, as shipped (Async TP) and with TP blocking (vanilla TP). No
//! constant is fitted to these ratios. Each is pinned in a narrow band
//! around its simulated value, so that a change that moves it says so
//! (docs/validation.md, FP8); the goal of issue 55 is 7%.

use overlap_core::scenario::{Precision, Scenario, Workload};
use overlap_core::{presets, simulate};

/// The preset in `precision`, with TP overlapped (Async TP) or not.
fn run(id: &str, precision: Precision, async_tp: bool) -> f64 {
    let mut s: Scenario = presets::scenario(id).unwrap();
    if let Workload::Transformer(t) = &mut s.workload {
        t.precision = precision;
    }
    s.overlap.fp8_all_gather = precision == Precision::Fp8;
    s.overlap.tp = async_tp;
    simulate(&s).report.step_time_ms
}

fn ratio(id: &str, async_tp: bool) -> f64 {
    run(id, Precision::Bf16, async_tp) / run(id, Precision::Fp8, async_tp)
}

#[test]
fn fp8_over_bf16_stays_where_it_is_against_torchtitans_table() {
    // (preset, Async TP, published tokens/s ratio, simulated, within 7%)
    let rows = [
        // 8B: 5570.1 / 4809.4 and 5078.1 / 4378.
        ("llama3-8b-fsdp", true, 1.158, 1.225, true),
        ("llama3-8b-fsdp", false, 1.160, 1.203, true),
        // 70B: 942.4 / 652.4 and 809.8 / 597.3. Async TP hides almost
        // none of the 70B's TP traffic in this model (its Async TP speedup
        // 1.01 in bf16 against 1.09 published): a known gap.
        ("llama3-70b-fsdp", true, 1.444, 1.308, false),
        ("llama3-70b-fsdp", false, 1.356, 1.292, true),
    ];
    for (id, async_tp, published, pinned, within_goal) in rows {
        let r = ratio(id, async_tp);
        assert!(
            (r - pinned).abs() < 0.005,
            "{id}, async TP {async_tp}: fp8/bf16 {r:.4}, pinned {pinned}"
        );
        let off = r / published - 1.0;
        assert_eq!(
            off.abs() <= 0.07,
            within_goal,
            "{id}, async TP {async_tp}: {off:+.3} from {published}"
        );
    }
}
