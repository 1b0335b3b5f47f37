//! A lower bound of a candidate's simulated step time, from the durations
//! the simulator itself gives its ops, without simulating the step.
//!
//! # Why it holds
//!
//! Every compute op of a GPU runs on its one compute stream, one after the
//! other, and never faster than its duration alone (`work`: collectives
//! only take SMs and HBM from it, `workload::graph::interference`). A collective
//! never moves its bytes faster than alone on its links
//! (`Graph::alone_rate_bps`: sharing and HBM only slow it) and pays its
//! latency first. Every micro-batch runs through the same ops
//! (`workload::build::run_cost`), and a pass (the forward, the recomputation, or the
//! backward, or a zero-bubble schedule's B, of one micro-batch on one
//! virtual stage) runs as one block on its stream. So, per virtual stage
//! `vs`, for one micro-batch:
//!
//! - `F(vs)`, `R(vs)`, `B(vs)`, `W(vs)`: each pass's ops summed, plus,
//!   between two consecutive ops of a pass, the longest chain of
//!   collectives the second waits for and that wait for the first, each
//!   alone on its links, or all of those collectives' bytes through the
//!   busiest of the GPU's links at its capacity, whichever is longer: the
//!   stream runs nothing else there. TP, CP and EP
//!   collectives count; DP ones only where they belong to every
//!   micro-batch alike (FSDP's layer gathers and reduce-scatters of the
//!   layers between the first and the last, reduce-scatters on every
//!   micro-batch); PP sends never (they cross passes). Nothing counts
//!   between a W's ops, which a zero-bubble schedule runs interleaved with
//!   other micro-batches' W (`schedule::hold_last_weight_grads`). A full
//!   recomputation runs layer by layer inside the backward, so between a
//!   recomputed op and a backward op of one micro-batch counts as inside
//!   one pass;
//! - `chain(vs)`: the backward pass up to and including its last op that is
//!   not a weight gradient (what the gradient sent to `vs - 1` waits for);
//! - `G(vs)`, `S(vs)`: FSDP's layer gathers and reduce-scatters of those
//!   layers alone on their links. Each family runs one after another
//!   (`workload::build::sharding`), so each sums to a floor of the step;
//! - `Bf(vs)`, `Bb(vs)`: FSDP's gathers before the forward's and the
//!   backward's first layer when DP overlap is off: nothing prefetches
//!   them, so each waits for the GPU's previous op and holds its next
//!   (`workload::build::sharding`), and runs between two of the GPU's ops
//!   wherever the pass starts;
//! - `L_i(vs)`: the counted collectives' bytes through each of the GPU's
//!   four links (NVLink and network, out and in) at its capacity: the
//!   network shares a link's capacity among its flows and never exceeds
//!   it (`sim::network`), so a link takes at least this long to carry them.
//!
//! For GPU `k`, holding virtual stages `V_k` (lowest `lo`), over `m`
//! micro-batches, with `C_k = m x sum over V_k of (F + R + B + W + Bf + Bb)`:
//!
//! 1. nothing on GPU `k` starts before the forward of some micro-batch has
//!    run through every virtual stage below `lo`, one after the other:
//!    `head_k = sum_{vs < lo} F(vs)`; its first gather may run meanwhile,
//!    so with `f_k` the largest `Bf` of `V_k`, the step is at least
//!    `max(head_k, f_k) - f_k + C_k`;
//! 2. after GPU `k`'s last input-gradient op (at some `u >= lo`), the
//!    backward of that micro-batch still runs through every virtual stage
//!    below `lo`: `tail_k = sum_{vs < lo} chain(vs)`. Before that op ran
//!    every forward, recomputation and input-gradient op of GPU `k` and,
//!    when the backward is not split, every weight gradient but those of
//!    its own pass, and every pass's gathers (`pre_k`): the step is at
//!    least `max(head_k, f_k) - f_k + pre_k + tail_k`;
//! 3. the step is at least `m x sum over V_k` of `G`, of `S`, and of each
//!    `L_i`; and on each link, of those collectives only FSDP's first two
//!    gathers can cross it before `head_k` (every other one waits for an op
//!    of GPU `k`): with `e_ki` twice the most one layer of `V_k` puts on
//!    link `i`, at least `max(head_k, e_ki) - e_ki + m x sum L_i`. With the
//!    backward whole, after GPU `k`'s last input-gradient op only the rest
//!    of its layer crosses it (at most `e_ki` again) and `tail_k` follows:
//!    at least `head_k + m x sum L_i - 2 e_ki + tail_k`.
//!
//! The bound is the largest of these over the GPUs: the step's compute at
//! its ops' own durations, the pipeline's fill and drain (for 1F1B exactly
//! `(p - 1)(F + B) + m(F + B)` on the last stage), the collectives the
//! compute stream must wait for, and FSDP's traffic. Ops not tied to a
//! micro-batch (the optimizer) are left out: leaving work out keeps it a
//! lower bound. DualPipeV runs its backwards whole in its steady state (B
//! and W interleaved) and split at its ends: nothing counts between its
//! backward ops. With the experts' merged
//! passes (EP overlap) no proxy stands for the candidate and the bound is
//! zero: it is never pruned. `tests/search.rs` checks the bound against the
//! simulated step of every candidate of several exhaustive searches.
//!
//! # The proxy
//!
//! The figures are read from the task graph (with its timeline metadata)
//! of a proxy: the candidate with one pipeline stage, one virtual stage,
//! one micro-batch, 1F1B where its schedule runs the backward whole and
//! ZB-1p where it splits it, its own hardware (so that no link is faster
//! than the candidate's). A dense model keeps its first, one middle and its
//! last layer: every layer between the first and the last has the middle
//! one's ops. A layer's figures then add up to a virtual stage's, less the
//! collectives a pass waits for at the stage's boundary, where in the
//! candidate a send arrives instead. Fields that move only collectives
//! that never count are set to one value in the proxy, so that candidates
//! that differ only in them share it: the PP overlap and the parameter
//! gather always; DP overlap, DP degree and sharding unless the model has
//! experts (whose groups the DP degree shapes) or FSDP shards it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::op_gaps::{alone_s, gap_s, link_index};
use crate::collective::Libraries;
use crate::model::axis::Axis;
use crate::model::fidelity::Fidelity;
use crate::model::op::{OpKind, Phase, NONE};
use crate::model::scenario::{
    DpSharding, GradSync, Mode, Precision, Scenario, Schedule, Transformer, Workload,
};
use crate::workload::cost::stage_layers;
use crate::workload::graph::task::{TaskId, COMPUTE};

/// Per virtual stage, one micro-batch's figures, seconds (see the module's doc).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageFigures {
    /// The forward pass.
    pub forward_s: f64,
    /// The recomputed forward.
    pub recompute_s: f64,
    /// The backward: the whole of it, or a split schedule's B.
    pub backward_s: f64,
    /// A split schedule's W.
    pub weight_s: f64,
    /// The backward up to its last input-gradient op.
    pub chain_s: f64,
    /// FSDP's layer gathers counted.
    pub gathers_s: f64,
    /// FSDP's layer reduce-scatters counted.
    pub reduce_scatters_s: f64,
    /// Seconds each of the GPU's four links (NVLink out and in, network out
    /// and in) is busy with the counted collectives, at its capacity.
    pub links_s: [f64; 4],
    /// Per link, the most one of its layers' collectives take of it, at
    /// its capacity.
    pub layer_links_s: [f64; 4],
    /// FSDP's gather before the forward's first layer when nothing
    /// prefetches it (DP overlap off): it waits for the GPU's previous op
    /// and holds its next, so it runs between them wherever the pass starts.
    pub boundary_forward_s: f64,
    /// The same before the backward's first layer (its recomputation's,
    /// when it recomputes).
    pub boundary_backward_s: f64,
}

/// One layer of the proxy, for one micro-batch, seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct LayerFigures {
    forward_s: f64,
    recompute_s: f64,
    backward_s: f64,
    weight_s: f64,
    /// The part of the layer's backward after its last input-gradient op.
    suffix_s: f64,
    /// The collectives between the previous layer's op and this layer's
    /// first op of each pass (included in the sums above).
    lead_forward_s: f64,
    lead_recompute_s: f64,
    lead_backward_s: f64,
    /// Of each lead, FSDP's gather alone when it is serial with the
    /// stream (DP overlap off).
    serial_gather_forward_s: f64,
    serial_gather_recompute_s: f64,
    serial_gather_backward_s: f64,
    gathers_s: f64,
    reduce_scatters_s: f64,
    links_s: [f64; 4],
}

/// The proxy's figures: per proxy layer, and the output layer's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelFigures {
    layers: Vec<LayerFigures>,
    /// The logits' forward and backward (the last virtual stage's).
    logits_forward_s: f64,
    logits_backward_s: f64,
}

/// Whether FSDP's layer collectives of one micro-batch are every
/// micro-batch's: reduce-scatters on every micro-batch.
fn fsdp_per_micro_batch(s: &Scenario) -> bool {
    s.parallel.dp_sharding == DpSharding::Full && s.overlap.grad_sync == GradSync::EveryMicroBatch
}

/// The proxy of `s` (see the module's doc), or `None` when none stands for
/// it: passes merged across micro-batches, or not a transformer.
pub fn proxy(s: &Scenario) -> Option<Scenario> {
    let Workload::Transformer(t) = &s.workload else {
        return None;
    };
    if crate::workload::build::schedule::merged_passes::merges_passes(s) {
        return None;
    }
    let mut x = s.clone();
    let p = &mut x.parallel;
    p.pp = 1;
    p.virtual_stages = 1;
    p.schedule = if s.parallel.schedule.splits_backward() {
        Schedule::ZeroBubble1p
    } else {
        Schedule::OneFOneB
    };
    x.overlap.pp = false;
    x.overlap.pp_chunks = 1;
    x.overlap.param_gather = false;
    let fsdp = s.parallel.dp_sharding == DpSharding::Full;
    let fp8_gathers = t.precision == Precision::Fp8 && fsdp;
    if t.moe.is_none() && !fsdp && !fp8_gathers {
        x.parallel.dp = 1;
        x.parallel.dp_sharding = DpSharding::None;
        x.overlap.dp = false;
        x.overlap.grad_sync = GradSync::EveryMicroBatch;
    }
    let layers = if t.moe.is_none() {
        t.layers.min(3)
    } else {
        t.layers
    };
    let one = Transformer {
        global_batch: t.micro_batch * x.parallel.dp,
        layers,
        ..t.clone()
    };
    x.workload = Workload::Transformer(one);
    Some(x)
}

/// The proxy layer that stands for layer `layer` of `layers`.
fn proxy_layer(layer: u32, layers: u32, proxy_layers: u32) -> usize {
    if proxy_layers == layers {
        layer as usize
    } else if layer == 0 {
        0
    } else if layer + 1 == layers {
        proxy_layers as usize - 1
    } else {
        1
    }
}

/// Which pass an op is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    Forward,
    Recompute,
    Backward,
    Weight,
}

/// Where collectives between two ops of a pass count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Gaps {
    /// In forward and recomputation passes.
    pub forward: bool,
    /// In backward passes (a split schedule's B).
    pub backward: bool,
}

/// Where collectives between two ops of a pass count for `s`: everywhere,
/// except in DualPipeV's backwards, which are whole in its steady state
/// (their B and W interleaved, not the proxy's split B) and split at its
/// ends.
pub fn gaps_of(s: &Scenario) -> Gaps {
    Gaps {
        forward: true,
        backward: s.parallel.schedule != Schedule::DualPipeV,
    }
}

/// The figures of `proxy`'s layers, counting collectives between a pass's
/// ops where `gaps` says.
pub fn model_figures(proxy: &Scenario, gaps: Gaps) -> ModelFigures {
    let Workload::Transformer(t) = &proxy.workload else {
        return ModelFigures::default();
    };
    let graph = crate::workload::build(proxy, Fidelity::Reduced, 0, &Libraries::of(proxy));
    let n = t.layers as usize;
    let interior = |layer: u32| layer != NONE && layer > 0 && (layer as usize) + 1 < n;
    let per_mb_fsdp = fsdp_per_micro_batch(proxy);
    // Without DP overlap each FSDP gather waits for the GPU's last op and
    // holds its next (`workload::build::sharding`, `before_layer`).
    let serial_fsdp = per_mb_fsdp && !proxy.overlap.dp;
    let split = proxy.parallel.schedule.splits_backward();
    let mut out = ModelFigures {
        layers: vec![LayerFigures::default(); n],
        ..ModelFigures::default()
    };
    // The proxy has one stage; the reduced simulation one GPU of it.
    if let Some(order) = graph.compute_order.first() {
        let mut previous: Option<(TaskId, Pass, u32, u32)> = None;
        // Per layer: the backward's sum so far, at its last input-gradient op.
        let mut backward_at_input_grad = vec![0.0; n];
        for &t in order {
            let meta = &graph.meta[t as usize];
            if meta.micro_batch == NONE || meta.phase == Phase::Step {
                previous = None;
                continue;
            }
            let weight = meta.op.is_weight_gradient();
            let pass = match meta.phase {
                Phase::Forward => Pass::Forward,
                Phase::Recompute => Pass::Recompute,
                Phase::Backward if split && weight => Pass::Weight,
                _ => Pass::Backward,
            };
            let layer = meta.layer;
            let mut gap = 0.0;
            let mut serial_gather = 0.0;
            let counted_here = match pass {
                Pass::Forward | Pass::Recompute => gaps.forward,
                Pass::Backward => gaps.backward,
                Pass::Weight => false,
            };
            // A full recomputation runs layer by layer inside the backward
            // (`workload::build::transformer`, `Builder::step`: each layer's recomputed forward just
            // before its backward), so a recomputed op and a backward op of
            // one micro-batch are one block on the stream, as a pass's own
            // ops are: what runs between them counts, unless the backward's
            // gaps do not (DualPipeV's whole backwards, where W ops of other
            // micro-batches may fill them).
            let one_block = |p: Pass| {
                p == pass
                    || (gaps.backward
                        && matches!(
                            (p, pass),
                            (Pass::Recompute, Pass::Backward) | (Pass::Backward, Pass::Recompute)
                        ))
            };
            if let Some((a, p, mb, _)) = previous {
                if counted_here && one_block(p) && mb == meta.micro_batch {
                    let dp = per_mb_fsdp && interior(layer);
                    let (g, gather) = gap_s(&graph, a, t, dp);
                    gap = g;
                    if serial_fsdp {
                        serial_gather = gather;
                    }
                }
            }
            let lead = previous.is_some_and(|(_, _, _, l)| l != layer);
            previous = Some((t, pass, meta.micro_batch, layer));
            let add = graph.tasks[t as usize].work + gap;
            if layer == NONE || layer as usize >= n {
                match meta.op {
                    OpKind::Logits => out.logits_forward_s += add,
                    OpKind::LogitsBackward => out.logits_backward_s += add,
                    // Any other op outside the layers is left out.
                    _ => {}
                }
                continue;
            }
            let l = &mut out.layers[layer as usize];
            match pass {
                Pass::Forward => {
                    l.forward_s += add;
                    if lead {
                        l.lead_forward_s += gap;
                        l.serial_gather_forward_s += serial_gather;
                    }
                }
                Pass::Recompute => {
                    l.recompute_s += add;
                    if lead {
                        l.lead_recompute_s += gap;
                        l.serial_gather_recompute_s += serial_gather;
                    }
                }
                Pass::Weight => l.weight_s += add,
                Pass::Backward => {
                    l.backward_s += add;
                    if lead {
                        l.lead_backward_s += gap;
                        l.serial_gather_backward_s += serial_gather;
                    }
                    if !weight {
                        backward_at_input_grad[layer as usize] = l.backward_s;
                    }
                }
            }
        }
        for (l, at) in out.layers.iter_mut().zip(backward_at_input_grad) {
            l.suffix_s = l.backward_s - at;
        }
    }
    // Each micro-batch's collectives of a layer: their bytes through the
    // GPU's links, and FSDP's families alone.
    for (t, task) in graph.tasks.iter().enumerate() {
        let meta = &graph.meta[t];
        let layer = meta.layer;
        if task.axis == COMPUTE || meta.micro_batch == NONE || layer == NONE || layer as usize >= n
        {
            continue;
        }
        let dp = task.axis == Axis::Dp.index() as u8;
        let counted = [Axis::Tp, Axis::Cp, Axis::Ep]
            .iter()
            .any(|a| a.index() as u8 == task.axis)
            || (dp && per_mb_fsdp && interior(layer));
        if !counted {
            continue;
        }
        let l = &mut out.layers[layer as usize];
        for u in &graph.patterns[task.pattern as usize] {
            if let Some(i) = link_index(&graph, u.resource) {
                let capacity = graph.resources[u.resource as usize].capacity_bps;
                if capacity > 0.0 {
                    l.links_s[i] += u.weight * task.work.max(0.0) / capacity;
                }
            }
        }
        if dp {
            match meta.op {
                OpKind::AllGather => l.gathers_s += alone_s(&graph, t as TaskId),
                OpKind::ReduceScatter => l.reduce_scatters_s += alone_s(&graph, t as TaskId),
                _ => {}
            }
        }
    }
    graph.recycle();
    out
}

/// The figures of every virtual stage of `s` from its proxy's.
pub fn stage_figures(s: &Scenario, model: &ModelFigures) -> Vec<StageFigures> {
    let Workload::Transformer(t) = &s.workload else {
        return Vec::new();
    };
    let stages = s.parallel.pp * s.parallel.virtual_stages.max(1);
    let proxy_layers = model.layers.len() as u32;
    if proxy_layers == 0 {
        return vec![StageFigures::default(); stages as usize];
    }
    let split = s.parallel.schedule.splits_backward();
    let stage_layers = stage_layers::split(&s.parallel, t.layers);
    (0..stages)
        .map(|vs| {
            let layers: Vec<u32> = stage_layers[vs as usize].clone().collect();
            let at = |l: u32| model.layers[proxy_layer(l, t.layers, proxy_layers)];
            let mut f = StageFigures::default();
            for &l in &layers {
                let x = at(l);
                f.forward_s += x.forward_s;
                f.recompute_s += x.recompute_s;
                f.backward_s += x.backward_s;
                f.weight_s += x.weight_s;
                f.gathers_s += x.gathers_s;
                f.reduce_scatters_s += x.reduce_scatters_s;
                for (a, b) in f.links_s.iter_mut().zip(x.links_s) {
                    *a += b;
                }
                for (a, b) in f.layer_links_s.iter_mut().zip(x.links_s) {
                    *a = a.max(b);
                }
            }
            let last = vs + 1 == stages;
            if let (Some(&bottom), Some(&top)) = (layers.first(), layers.last()) {
                // At the stage's boundary a send arrives, not a layer's op.
                // The backward's first layer is the top one; a recomputed
                // layer's lead is what runs after the layer above's backward
                // (see `model_figures`), inside the stage but at its top.
                f.forward_s -= at(bottom).lead_forward_s;
                f.recompute_s -= at(top).lead_recompute_s;
                f.boundary_forward_s = at(bottom).serial_gather_forward_s;
                f.boundary_backward_s = at(top).serial_gather_recompute_s;
                if !last {
                    f.backward_s -= at(top).lead_backward_s;
                    f.boundary_backward_s += at(top).serial_gather_backward_s;
                }
                f.chain_s = f.backward_s - if split { 0.0 } else { at(bottom).suffix_s };
            }
            if last {
                f.forward_s += model.logits_forward_s;
                f.backward_s += model.logits_backward_s;
                f.chain_s += model.logits_backward_s;
            }
            f
        })
        .collect()
}

/// The lower bound of `s`'s step, seconds, from its virtual stages'
/// figures (see the module's doc).
pub fn lower_bound_s(s: &Scenario, stages: &[StageFigures]) -> f64 {
    let p = &s.parallel;
    let m = f64::from(s.micro_batches());
    let v = p.virtual_stages.max(1);
    let split = p.schedule.splits_backward();
    let at = |vs: u32| stages.get(vs as usize).copied().unwrap_or_default();
    let train = matches!(&s.workload, Workload::Transformer(t) if t.mode == Mode::Train);
    (0..p.pp)
        .map(|k| {
            let held: Vec<u32> = (0..v)
                .map(|c| p.schedule.virtual_stage(k, c, p.pp))
                .collect();
            let lo = held.iter().copied().min().unwrap_or(0);
            let head: f64 = (0..lo).map(|vs| at(vs).forward_s).sum();
            let sum = |f: fn(&StageFigures) -> f64| held.iter().map(|&vs| f(&at(vs))).sum::<f64>();
            let per_mb = sum(|x| x.forward_s + x.recompute_s + x.backward_s + x.weight_s);
            let fsdp = (m * sum(|x| x.gathers_s)).max(m * sum(|x| x.reduce_scatters_s));
            let tail: f64 = (0..lo).map(|vs| at(vs).chain_s).sum();
            // Of a link's traffic, only FSDP's first two gathers (the first
            // layer's and its prefetched successor's, issued as the step
            // starts: `workload::build::sharding`) may cross it before the
            // GPU's first op; the rest waits for compute. When the backward
            // is whole, after the GPU's last input-gradient op only its
            // layer's rest follows (its weight gradients, then their
            // reduce-scatter): at most as much again, and the step goes on
            // for `tail` after that op.
            let links = (0..4)
                .map(|i| {
                    let layer = held
                        .iter()
                        .map(|&vs| at(vs).layer_links_s[i])
                        .fold(0.0f64, f64::max);
                    // Before the first op, and again after the last input gradient.
                    let edge = 2.0 * layer;
                    let traffic = m * held.iter().map(|&vs| at(vs).links_s[i]).sum::<f64>();
                    let from_start = head.max(edge) - edge + traffic;
                    if train && !split {
                        from_start.max(head + traffic - 2.0 * edge + tail)
                    } else {
                        from_start
                    }
                })
                .fold(0.0f64, f64::max);
            // FSDP's unprefetched gathers at the passes' starts, each between
            // two of the GPU's ops; the first may run while the GPU waits
            // for its first input, under `head`.
            let boundary = m * sum(|x| x.boundary_forward_s + x.boundary_backward_s);
            let first = held
                .iter()
                .map(|&vs| at(vs).boundary_forward_s)
                .fold(0.0f64, f64::max);
            let start = head.max(first) - first;
            let all = (start + m * per_mb + boundary).max(fsdp).max(links);
            if !train {
                return all;
            }
            let pre = if split {
                m * sum(|x| x.forward_s + x.recompute_s + x.backward_s)
            } else {
                // The last pass's weight gradients after its last
                // input-gradient op may follow it.
                let after = held
                    .iter()
                    .map(|&vs| at(vs).backward_s - at(vs).chain_s)
                    .fold(0.0f64, f64::max);
                m * per_mb - after
            };
            all.max(start + pre + boundary + tail)
        })
        .fold(0.0, f64::max)
}

/// Proxies' figures, computed once per proxy for every candidate that
/// shares it, across threads. A proxy's figures are a function of it
/// alone, so which thread computes one changes nothing.
#[derive(Default)]
pub struct Bounds {
    cache: Mutex<HashMap<String, Arc<ModelFigures>>>,
}

impl Bounds {
    /// The lower bound of `s`'s step, seconds (0 where no proxy stands for it).
    pub fn of(&self, s: &Scenario) -> f64 {
        let Some(proxy) = proxy(s) else {
            return 0.0;
        };
        let gaps = gaps_of(s);
        let key = format!(
            "{}{}{}",
            gaps.forward,
            gaps.backward,
            serde_json::to_string(&proxy).expect("scenarios serialise")
        );
        let known = self.cache.lock().expect("not poisoned").get(&key).cloned();
        let model = match known {
            Some(f) => f,
            None => {
                let f = Arc::new(model_figures(&proxy, gaps));
                self.cache
                    .lock()
                    .expect("not poisoned")
                    .insert(key, f.clone());
                f
            }
        };
        lower_bound_s(s, &stage_figures(s, &model))
    }

    /// Proxies built so far.
    pub fn proxies(&self) -> usize {
        self.cache.lock().expect("not poisoned").len()
    }
}
