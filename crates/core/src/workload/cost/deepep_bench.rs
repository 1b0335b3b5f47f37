//! DeepEP's own benchmark (deepseek-ai/DeepEP tests/legacy/test_intranode.py
//! and test_internode.py) as this model runs it: one dispatch and one
//! combine of normal kernels over an EP group, each alone on idle links,
//! reported as DeepEP's tests print them: the "bottleneck bandwidth", bytes
//! as the tests count them over the kernel's time (what `overlap-lab busbw
//! --collective all_to_all --dispatcher deepep` prints).
//!
//! The bytes moved per link class are `moe::all_to_all_traffic`'s and the
//! rates DeepEP's (`collective::deepep`), as an EP all-to-all of a step
//! gets them (`transformer::moe_layer`): the NVLink and NIC parts run side
//! by side, each after its link's latency, and the call ends with the later.

use crate::collective::deepep::DeepEp;
use crate::collective::{CallShape, Collective, CollectiveLibrary, Fabric};
use crate::model::hardware::Hardware;
use crate::model::recompute_modules::RecomputeModules;
use crate::model::scenario::{Dispatcher, Moe};
use crate::workload::cost::moe::{
    nodes_per_token, traffic_of_hidden, EpPlacement, FP8_BYTES_PER_VALUE, TOKEN_BYTES,
};

/// One run of DeepEP's benchmark.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeepEpBench {
    /// Tokens per rank (`--num-tokens`, 4096).
    pub tokens: u32,
    /// Hidden size (`--hidden`, 7168).
    pub hidden: u32,
    /// Experts per token (`--num-topk`, 8).
    pub top_k: u32,
    /// Experts (`--num-experts`, 256).
    pub experts: u32,
    /// Node groups each token's experts are drawn from
    /// (`--num-topk-groups`, min(nodes, 4)).
    pub max_nodes_per_token: u32,
    /// Ranks of the EP group.
    pub ep: u32,
    /// SMs the kernels run on (the tests' `num_sms`, 24).
    pub sms: u32,
}

impl DeepEpBench {
    /// The shape of DeepEP's published normal-kernel table (docs/legacy.md:
    /// "4096 tokens per batch, 7168 hidden, top-4 groups, top-8 experts",
    /// 256 experts as the tests' default, 24 SMs) at `ep` ranks.
    pub fn published(ep: u32) -> Self {
        Self {
            tokens: 4096,
            hidden: 7168,
            top_k: 8,
            experts: 256,
            max_nodes_per_token: 4,
            ep,
            sms: 24,
        }
    }
}

/// What DeepEP's test prints for one dispatch and one combine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bottleneck {
    /// Ranks of the EP group.
    pub ep: u32,
    /// Nodes it spans.
    pub nodes: u32,
    /// The dispatch's time, us.
    pub dispatch_us: f64,
    /// The combine's time, us.
    pub combine_us: f64,
    /// The dispatch's "RDMA" bandwidth as the test counts it (every token
    /// and node it reaches, its own node included), GB/s.
    pub dispatch_rdma_gbps: f64,
    /// The dispatch's "NVL" bandwidth (every token a rank receives), GB/s.
    pub dispatch_nvl_gbps: f64,
    /// The combine's, likewise.
    pub combine_rdma_gbps: f64,
    /// The combine's, likewise.
    pub combine_nvl_gbps: f64,
}

impl Bottleneck {
    /// Whether the group spans nodes: the tests' internode kernels, whose
    /// table reports the RDMA figure; inside one node, the NVL figure.
    pub fn internode(&self) -> bool {
        self.nodes > 1
    }

    /// The path whose bandwidth the table reports.
    pub fn path(&self) -> &'static str {
        if self.internode() {
            "RDMA"
        } else {
            "NVLink"
        }
    }

    /// The dispatch's bottleneck bandwidth as the table reports it, GB/s.
    pub fn dispatch_gbps(&self) -> f64 {
        if self.internode() {
            self.dispatch_rdma_gbps
        } else {
            self.dispatch_nvl_gbps
        }
    }

    /// The combine's, GB/s.
    pub fn combine_gbps(&self) -> f64 {
        if self.internode() {
            self.combine_rdma_gbps
        } else {
            self.combine_nvl_gbps
        }
    }
}

/// DeepEP's benchmark `b` on `hw` (its NVLink SHARP plays no part in an
/// all-to-all); a shape DeepEP's tests cannot run is refused, saying why.
pub fn bottleneck(hw: &Hardware, b: &DeepEpBench) -> Result<Bottleneck, String> {
    let gpn = hw.gpus_per_node;
    if b.ep == 0 || !(gpn.is_multiple_of(b.ep) || b.ep.is_multiple_of(gpn)) {
        return Err(format!(
            "EP {} neither divides nor fills whole nodes of {gpn} GPUs: valid are divisors or multiples of {gpn}",
            b.ep
        ));
    }
    if b.experts == 0 || !b.experts.is_multiple_of(b.ep) {
        return Err(format!(
            "{} experts cannot be spread evenly over EP {}: valid are multiples of {}",
            b.experts, b.ep, b.ep
        ));
    }
    if b.top_k == 0 || b.top_k > b.experts || b.tokens == 0 || b.hidden == 0 {
        return Err(format!(
            "tokens {}, hidden {} and top-k {} must be 1 or more, top-k at most the {} experts",
            b.tokens, b.hidden, b.top_k, b.experts
        ));
    }
    let m = Moe {
        experts: b.experts,
        top_k: b.top_k,
        expert_ffn_hidden: 1,
        shared_experts: 0,
        dense_layers: 0,
        dispatcher: Dispatcher::Deepep,
        max_nodes_per_token: b.max_nodes_per_token,
        imbalance: 1.0,
        deepep_sms: b.sms,
        recompute: RecomputeModules::default(),
        fp8_dispatch_cache: false,
        fp8_swiglu_cache: false,
        fp8_dispatch: false,
    };
    let place = EpPlacement::of(b.ep, gpn);
    let tokens = f64::from(b.tokens);
    let traffic = traffic_of_hidden(b.hidden, &m, b.ep, place, 1, tokens);
    let fabric = Fabric::of(hw, false);
    let shape = CallShape {
        kind: Collective::AllToAll,
        ranks: b.ep,
        per_node: place.per_node,
        size_bytes: traffic.nic_bytes() + traffic.nvlink_bytes(),
    };
    let rates = DeepEp { sms: b.sms }.all_to_all_rates(&fabric, &shape);
    // The bytes DeepEP's tests count, at 2 bytes per value
    // (test_internode.py:59-63 and 224-227): a (token, node) pair for each
    // node a token reaches, and every token a rank receives, its own
    // included: the carried bytes with the own node's and own GPU's share
    // put back.
    let token_bytes = f64::from(b.hidden) * TOKEN_BYTES;
    let rdma_counted = tokens * nodes_per_token(&m, place) * token_bytes;
    let local = f64::from(place.per_node);
    let nvl_counted = if local > 1.0 {
        traffic.nvlink_bytes() * local / (local - 1.0)
    } else {
        tokens * token_bytes
    };
    // One call of values of `bytes` each: the parts side by side.
    let time_s = |bytes: f64| {
        let scale = bytes / TOKEN_BYTES;
        let nvlink = match traffic.nvlink_bytes() {
            0.0 => 0.0,
            carried => fabric.nvlink_latency_s + carried * scale / rates.nvlink_bps,
        };
        let nic = match traffic.nic_bytes() {
            0.0 => 0.0,
            carried => fabric.network_latency_s + carried * scale / rates.nic_bps,
        };
        nvlink.max(nic)
    };
    // FP8 dispatch (values with their scales, the tests' `fp8_factor`),
    // BF16 combine.
    let (dispatch_s, combine_s) = (time_s(FP8_BYTES_PER_VALUE), time_s(TOKEN_BYTES));
    let fp8 = FP8_BYTES_PER_VALUE / TOKEN_BYTES;
    let gbps = |bytes: f64, s: f64| bytes / s / 1e9;
    Ok(Bottleneck {
        ep: b.ep,
        nodes: place.nodes,
        dispatch_us: dispatch_s * 1e6,
        combine_us: combine_s * 1e6,
        dispatch_rdma_gbps: gbps(rdma_counted * fp8, dispatch_s),
        dispatch_nvl_gbps: gbps(nvl_counted * fp8, dispatch_s),
        combine_rdma_gbps: gbps(rdma_counted, combine_s),
        combine_nvl_gbps: gbps(nvl_counted, combine_s),
    })
}
