//! A collective library is one implementation of `CollectiveLibrary`: this
//! file's own, which runs DP's all-reduces at a cost and under kernel
//! names of its own, put before the registry's by `Simulator::with_library`
//! (a library in the product adds one registry line instead), is used end
//! to end: the step's DP collectives take its cost, and the Kineto export
//! names their kernels and stream by it.

use std::sync::Arc;

use overlap_core::collective::{
    nccl, CallShape, Collective, CollectiveCall, CollectiveLibrary, Fabric, KernelSite, Libraries,
    REGISTRY,
};
use overlap_core::kineto::each_rank_trace_with;
use overlap_core::{presets, Axis, Simulator};

/// Its fixed start-up cost, s: far above NCCL's few microseconds, so that
/// the test sees which library ran a call.
const TEST_LATENCY_S: f64 = 2e-3;

/// A library of DP all-reduces that start up slowly and move the ring's
/// bytes like NCCL's Simple ring.
#[derive(Debug)]
struct SlowStart;

impl CollectiveLibrary for SlowStart {
    fn name(&self) -> &'static str {
        "SlowStart"
    }

    fn runs(&self, axis: Axis, kind: Collective) -> bool {
        axis == Axis::Dp && kind == Collective::AllReduce
    }

    fn call(&self, fabric: &Fabric, shape: &CallShape) -> CollectiveCall {
        let nccl = nccl::Nccl.call(fabric, shape);
        CollectiveCall {
            latency_s: TEST_LATENCY_S,
            time_s: nccl.time_s - nccl.latency_s + TEST_LATENCY_S,
            channels: 4,
            shows_kernel: false,
            ..nccl
        }
    }

    fn kernel_name(&self, site: &KernelSite) -> String {
        format!("slowstart::all_reduce<{}>", site.dtype)
    }

    fn stream_name(&self, axis: Axis) -> String {
        format!("{} SlowStart", axis.label())
    }
}

#[test]
fn a_library_of_ones_own_runs_its_calls_at_its_cost_under_its_names() {
    // The didactic default: TP 4 x PP 2 x DP 2 on two nodes, DP overlap off.
    let s = presets::scenario(presets::DEFAULT_ID).unwrap();
    let nccl_run = Simulator::default().simulate_periodic(&s);
    let mut sim = Simulator::default().with_library(Arc::new(SlowStart));
    let run = sim.simulate_periodic(&s);

    let dp = |t: &overlap_core::Timeline| -> Vec<(f64, f64)> {
        t.gpus
            .iter()
            .flat_map(|g| g.comm[Axis::Dp.index()].iter())
            .filter(|iv| iv.op == overlap_core::timeline::OpKind::AllReduce)
            .map(|iv| (iv.end_s - iv.start_s, iv.bytes))
            .collect()
    };
    let (ours, theirs) = (dp(&run.timeline), dp(&nccl_run.timeline));
    assert!(!ours.is_empty() && ours.len() == theirs.len());
    for ((ours_s, ours_bytes), (theirs_s, theirs_bytes)) in ours.iter().zip(&theirs) {
        assert_eq!(ours_bytes, theirs_bytes, "the same buffers reduce");
        assert!(
            *ours_s >= TEST_LATENCY_S,
            "each call pays its start-up: {ours_s}"
        );
        assert!(ours_s > theirs_s, "{ours_s} against NCCL's {theirs_s}");
    }
    assert!(
        run.report.axes[Axis::Dp].comm_ms > nccl_run.report.axes[Axis::Dp].comm_ms,
        "DP's communication grows by the start-ups"
    );
    // Its calls carry no NCCL kernel; the other axes' keep NCCL's.
    let kernels = |axis: Axis| {
        run.timeline
            .gpus
            .iter()
            .flat_map(move |g| g.comm[axis.index()].iter())
            .map(|iv| iv.kernel.is_some())
    };
    assert!(kernels(Axis::Dp).all(|k| !k));
    assert!(kernels(Axis::Tp).all(|k| k));

    let traces: Vec<String> = each_rank_trace_with(&s, &run.timeline, sim.libraries(&s))
        .map(|t| t.json)
        .collect();
    let all = traces.concat();
    assert!(
        all.contains("slowstart::all_reduce<bf16>"),
        "kernels named by it"
    );
    assert!(all.contains("(DP SlowStart)"), "its stream named by it");
    assert!(
        all.contains("ncclDevKernel_AllReduce_Sum_bf16"),
        "TP's still NCCL's"
    );
}

#[test]
fn each_scenario_selects_its_libraries_from_the_fields_it_has() {
    let name = |id: &str, axis, kind| {
        let s = presets::scenario(id).unwrap();
        Libraries::of(&s).for_call(axis, kind).name()
    };
    assert_eq!(name("didactic", Axis::Dp, Collective::AllReduce), "NCCL");
    // moe-didactic dispatches with DeepEP (its `workload.moe.dispatcher`).
    let moe = presets::scenario("moe-didactic").unwrap();
    let ep = Libraries::of(&moe)
        .for_call(Axis::Ep, Collective::AllToAll)
        .name();
    let dispatcher = moe.moe().unwrap().dispatcher;
    assert_eq!(
        ep,
        if dispatcher == overlap_core::scenario::Dispatcher::Deepep {
            "DeepEP"
        } else {
            "NCCL"
        }
    );
    // Every registered library has rows for the importer, NCCL last.
    assert!(REGISTRY.iter().all(|r| !r.name_rules.is_empty()));
}
