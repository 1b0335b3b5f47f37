//! The all-to-all as the busiest rank sees it (model.md 4c): routing
//! imbalance loads its traffic as well as its GEMMs, and each library's
//! fitted rates set the bytes its flows hold the links for; each against a
//! hand count.

use overlap_core::scenario::Dispatcher;
use overlap_core::timeline::{Axis, Interval, OpKind, Phase};
use overlap_core::workload::cost::moe::{AllToAllTraffic, EpPlacement};
use overlap_core::{presets, simulate, ScenarioInput};

const MIB: f64 = 1024.0 * 1024.0;

#[test]
fn nccl_brings_the_busiest_rank_imbalance_times_the_mean_over_every_pair() {
    // moe-didactic (NCCL, EP 16 on two nodes): 4 MiB per pair balanced
    // (tests/moe.rs); at imbalance 1.5 the busiest rank receives, and
    // sends back, 6 MiB per pair.
    let mut input = presets::find("moe-didactic").unwrap().input();
    input.workload.moe.imbalance = Some(1.5);
    let s = input.resolve().unwrap();
    let sim = simulate(&s);
    let ep: &[Interval] = &sim.timeline.gpus[0].comm[Axis::Ep.index()];
    assert!(!ep.is_empty());
    assert!(
        ep.iter().all(|iv| (iv.bytes - 6.0 * MIB).abs() < 1.0),
        "{:?}",
        ep.first().map(|iv| iv.bytes)
    );
}

#[test]
fn deepep_brings_the_extra_over_nvlink_and_spreads_it_over_the_nodes_nics() {
    let balanced = AllToAllTraffic {
        nvlink_peers: 7,
        nvlink_pair_bytes: 1000.0,
        nic_peers: 7,
        nic_pair_bytes: 800.0,
    };
    let place = EpPlacement::of(64, 8);
    let busiest = balanced.at_busiest(1.5, Dispatcher::Deepep, place.per_node);
    assert_eq!(busiest.nvlink_pair_bytes, 1500.0);
    // The node's 8 NICs share the busiest GPU's extra half: 1/16 more each.
    assert_eq!(busiest.nic_pair_bytes, 800.0 * (1.0 + 0.5 / 8.0));
    let nccl = balanced.at_busiest(1.5, Dispatcher::Alltoall, place.per_node);
    assert_eq!(
        (nccl.nvlink_pair_bytes, nccl.nic_pair_bytes),
        (1500.0, 1200.0)
    );
    assert_eq!(balanced.at_busiest(1.0, Dispatcher::Deepep, 8), balanced);
}

#[test]
fn deepseek_v3s_all_to_all_holds_the_links_at_deepeps_fitted_rates() {
    // deepseek-v3 (DeepEP over 8 nodes of H800-like GPUs, NVLink 200 and
    // NIC 50 GB/s per direction): the NIC part is carried at 43.7 of 50
    // GB/s where the links run NCCL's 0.94 x 50, so its bytes on the
    // timeline are 0.94 x 50 / 43.7 of the traffic's.
    let s = presets::scenario("deepseek-v3").unwrap();
    let overlap_core::scenario::Workload::Transformer(t) = &s.workload else {
        panic!()
    };
    let m = t.moe.as_ref().unwrap();
    let place = EpPlacement::of(64, 8);
    let traffic = overlap_core::workload::cost::moe::all_to_all_traffic(t, m, 64, place, 4096.0);
    let nic_on_links = traffic.nic_pair_bytes * 0.94 * 50.0 / 43.7;
    // NVLink: 200 x NCCL's 20.6/25 per link against DeepEP's 124.8.
    let nvlink_on_links = traffic.nvlink_pair_bytes * 200.0 * (20.6 / 25.0) / 124.8;
    // Its shape and links on 8 nodes without a pipeline, four layers.
    let mut v = serde_json::to_value(presets::find("deepseek-v3").unwrap().input()).unwrap();
    v["hardware"]["nodes"] = 8.into();
    v["workload"]["layers"] = 4.into();
    v["workload"]["global_batch"] = 64.into();
    v["parallel"] =
        serde_json::json!({"tp": 1, "pp": 1, "dp": 64, "ep": 64, "dp_sharding": "optimizer"});
    let small = ScenarioInput::from_json(&v.to_string())
        .unwrap()
        .resolve()
        .unwrap();
    let sim = simulate(&small);
    // The preset dispatches in FP8 (DeepSeek-V3 section 3.3.2): what goes
    // towards the experts (the forward dispatch, the backward's mirror of
    // the combine) carries 1 + 4/128 bytes a value, the rest 2.
    let fp8 = (1.0 + 4.0 / 128.0) / 2.0;
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b;
    let mut seen = [[false; 2]; 2];
    for iv in sim
        .timeline
        .gpus
        .iter()
        .flat_map(|g| &g.comm[Axis::Ep.index()])
    {
        let towards_experts = matches!(
            (iv.op, iv.phase),
            (OpKind::Dispatch, Phase::Forward) | (OpKind::Combine, Phase::Backward)
        );
        let scale = if towards_experts { fp8 } else { 1.0 };
        let across = near(iv.bytes, nic_on_links * scale);
        assert!(
            across || near(iv.bytes, nvlink_on_links * scale),
            "{:?} {:?}: {} bytes, not NIC {} or NVLink {}",
            iv.op,
            iv.phase,
            iv.bytes,
            nic_on_links * scale,
            nvlink_on_links * scale
        );
        seen[usize::from(towards_experts)][usize::from(across)] = true;
    }
    assert_eq!(seen, [[true; 2]; 2], "every direction on both link classes");
}

#[test]
fn fp8_dispatch_shrinks_what_goes_to_the_experts_and_only_with_deepep() {
    // deepseek-v3 shrunk to one stage: its EP time with and without FP8
    // dispatch, and the same with NCCL's all-to-all, where the field is
    // inert (Megatron's all-to-all dispatcher sends BF16).
    let run = |fp8: bool, dispatcher: &str| {
        let mut v = serde_json::to_value(presets::find("deepseek-v3").unwrap().input()).unwrap();
        v["hardware"]["nodes"] = 8.into();
        v["workload"]["layers"] = 4.into();
        v["workload"]["global_batch"] = 64.into();
        v["workload"]["moe"]["fp8_dispatch"] = fp8.into();
        v["workload"]["moe"]["dispatcher"] = dispatcher.into();
        v["parallel"] =
            serde_json::json!({"tp": 1, "pp": 1, "dp": 64, "ep": 64, "dp_sharding": "optimizer"});
        let s = ScenarioInput::from_json(&v.to_string())
            .unwrap()
            .resolve()
            .unwrap();
        let bytes = |op: OpKind, phase: Phase| -> f64 {
            simulate(&s).timeline.gpus[0].comm[Axis::Ep.index()]
                .iter()
                .filter(|iv| iv.op == op && iv.phase == phase)
                .map(|iv| iv.bytes)
                .sum()
        };
        [
            bytes(OpKind::Dispatch, Phase::Forward),
            bytes(OpKind::Combine, Phase::Forward),
            bytes(OpKind::Combine, Phase::Backward),
            bytes(OpKind::Dispatch, Phase::Backward),
        ]
    };
    let (bf16, fp8) = (run(false, "deepep"), run(true, "deepep"));
    let ratio: Vec<f64> = fp8.iter().zip(&bf16).map(|(a, b)| a / b).collect();
    let want = [
        (1.0 + 4.0 / 128.0) / 2.0,
        1.0,
        (1.0 + 4.0 / 128.0) / 2.0,
        1.0,
    ];
    for (r, w) in ratio.iter().zip(want) {
        assert!((r - w).abs() < 1e-9, "{ratio:?} against {want:?}");
    }
    assert!(bf16.iter().all(|&b| b > 0.0));
    assert_eq!(run(true, "alltoall"), run(false, "alltoall"));
}

/// A MoE field that old links do not name: such a link (`old`) opens
/// without it and writes back without it; set (`new`), it travels and
/// comes back the same scenario. `read` reads it from the experts.
fn old_links_open_without(
    key: &str,
    old: &str,
    new: &str,
    read: fn(&overlap_core::scenario::Moe) -> bool,
) {
    use overlap_core::share_link;
    let field = |input: &ScenarioInput| {
        let s = input.resolve().unwrap();
        let overlap_core::scenario::Workload::Transformer(t) = &s.workload else {
            panic!("a transformer")
        };
        read(t.moe.as_ref().expect("experts"))
    };
    let old = share_link::decode(old, &[]);
    assert!(old.errors.is_empty(), "{:?}", old.errors);
    assert!(!field(&old.input), "{key}");
    let link = share_link::encode(&old.input, Some(old.preset));
    assert!(!link.contains(key), "{link}");
    let new = share_link::decode(new, &[]);
    assert!(new.errors.is_empty(), "{:?}", new.errors);
    assert!(field(&new.input), "{key}");
    let again = share_link::encode(&new.input, Some(new.preset));
    assert!(again.contains(&format!("{key}=1")), "{again}");
    assert_eq!(
        share_link::decode(&again, &[]).input.resolve().unwrap(),
        new.input.resolve().unwrap()
    );
}

#[test]
fn old_moe_links_open_without_fp8_dispatch_and_the_field_travels_in_links() {
    // BF16 on the wire, as before the field existed.
    old_links_open_without(
        "fp8_dispatch",
        "v=1&preset=moe-didactic&dispatcher=deepep",
        "v=1&preset=moe-didactic&dispatcher=deepep&fp8_dispatch=1",
        |m| m.fp8_dispatch,
    );
}

#[test]
fn old_moe_links_open_without_the_swiglu_cache_and_the_field_travels_in_links() {
    old_links_open_without(
        "fp8_swiglu_cache",
        "v=1&preset=moe-didactic&fp8_dispatch_cache=1",
        "v=1&preset=moe-didactic&fp8_swiglu_cache=1",
        |m| m.fp8_swiglu_cache,
    );
}
