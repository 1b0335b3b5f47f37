//! The GPT-style transformer step, 3D parallel (model.md sections 4 and 5):
//! each pipeline stage's program in schedule order, with its TP collectives,
//! pipeline sends and DP gradient buckets, and the overlap switch of each axis
//! deciding what the compute stream waits for.

use super::embedding_sync;
use super::fusion::FusedLayers;
use super::layer_cost::{
    dense_params_at, embedding_params_whole, layer_cost, times, LayerCost, OpCost, Roofline,
    SplitGemm, OPTIMIZER_BYTES_PER_PARAM,
};
use super::moe::expert_params_per_rank;
use super::sharding::Sharding;
use super::stage_layers::stage_layers;
use super::tp_form::TpForm;
use super::Cluster;
use crate::model::axis::Axis;
use crate::model::fidelity::Fidelity;
use crate::model::op::{OpKind, Phase};
use crate::model::scenario::{CpMode, Mode, Recompute, Scenario, Transformer};
use crate::workload::collective::Collective;
use crate::workload::collective_cost::CollectiveCall;
use crate::workload::graph::{Graph, Meta, TaskId};
use crate::workload::pp_boundary::{self, Group};
use crate::workload::schedule::{period_marks, stage_program, Pass, Step};

const TP: u8 = Axis::Tp as u8;
const PP: u8 = Axis::Pp as u8;
const DP: u8 = Axis::Dp as u8;
const EP: u8 = Axis::Ep as u8;
const CP: u8 = Axis::Cp as u8;

mod moe_layer;

/// Latency of a chunk's collective after the first: the chunks of one GEMM
/// flow through one pipelined ring (CoCoNet fuses them into one kernel), so a
/// ring of n ranks moving c chunks takes 2(n - 1) + c - 1 steps, not
/// c x 2(n - 1): each further chunk adds one step.
pub(crate) fn pipelined_chunk_latency_s(step_latency_s: f64) -> f64 {
    step_latency_s
}

/// Gradients whose reduction can start: a DP bucket, seen from one GPU.
struct Bucket {
    bytes: f64,
    /// The compute op after which its gradients are final.
    ready: TaskId,
    /// First compute op that runs after it is ready (its window starts there).
    window_from: u32,
}

#[derive(Default)]
struct GpuBuckets {
    pending_bytes: f64,
    buckets: Vec<Bucket>,
    params: f64,
    /// The routed experts' gradients, reduced over the expert-data-parallel
    /// group (tp * dp / ep ranks) rather than over DP.
    expert_pending_bytes: f64,
    expert_buckets: Vec<Bucket>,
    expert_params: f64,
}

struct Builder<'a> {
    g: Graph,
    s: &'a Scenario,
    t: &'a Transformer,
    cluster: Cluster,
    cost: LayerCost,
    roof: Roofline,
    tp: u32,
    /// GEMM chunks when TP overlap is on.
    chunks: u32,
    tp_on: bool,
    /// Sequence-parallel TP collectives decomposed into copy-engine ring
    /// steps (Async TP, `tp_form`).
    decomposed: bool,
    micro_batches: u32,
    virtual_stages: u32,
    /// The micro-batches whose gradients reaching the first stage mark the
    /// steady state's periods (`schedule::period_marks`), if any.
    period_marks: Option<[u32; 3]>,
    /// Pipeline sends, created up front so that both ends can refer to them.
    sends: Vec<TaskId>,
    buckets: Vec<GpuBuckets>,
    bucket_bytes: f64,
    // The group being built: one pipeline stage of one DP replica.
    members: Vec<u32>,
    tp_pattern: u32,
    /// The group's TP collectives run in order on one stream (one NCCL communicator).
    last_tp_collective: Option<TaskId>,
    /// The group's CP ring step: its link pattern and latency.
    cp_step: (u32, f64),
    /// The group's CP transfers run in order on one stream.
    last_cp_collective: Option<TaskId>,
    /// Sends whose window (the sender's next step) is still open.
    open_windows: Vec<(TaskId, u32)>,
    /// Pieces of each sliced forward boundary (`pp_boundary`), if sliced.
    sliced: Option<u32>,
    /// The step's last layer when its output leaves through a sliced
    /// boundary: the boundary's ReduceScatter replaces its AllReduce.
    boundary_layer: Option<u32>,
    /// The step's fusions (`fusion`).
    fused: FusedLayers,
    /// Collectives of a sharded DP (distributed optimizer, FSDP).
    sharding: Sharding,
    /// One MoE layer's costs on a rank, for a model with experts.
    moe_cost: Option<crate::workload::moe::MoeCost>,
    /// One all-to-all's traffic from a rank, when the EP group spans ranks.
    ep_traffic: Option<crate::workload::moe::AllToAllTraffic>,
    /// The all-to-alls the pass being built launched and still awaits.
    ep_stream: moe_layer::EpStream,
    /// The (stage, replica) whose group is being built.
    group_at: (u32, u32),
}

/// Builds the step into `g`, an empty graph (see `workload::build_capped`).
pub(crate) fn build(mut g: Graph, s: &Scenario, t: &Transformer, fidelity: Fidelity) -> Graph {
    let cluster = Cluster::new(&mut g, s, fidelity);
    let roof = Roofline::with_precision(&s.hardware, t.precision);
    let tp = s.parallel.tp;
    let cost = layer_cost(t, tp, s.parallel.cp, &roof);
    let form = TpForm::of(s, t);
    let tp_on = form.on;
    let virtual_stages = s.parallel.virtual_stages;
    let gpus = g.gpus.len();
    let mut b = Builder {
        g,
        s,
        t,
        cluster,
        cost,
        roof,
        tp,
        chunks: form.chunks,
        tp_on,
        decomposed: form.decomposed,
        micro_batches: s.micro_batches(),
        virtual_stages,
        period_marks: period_marks(s),
        sends: Vec::new(),
        buckets: (0..gpus).map(|_| GpuBuckets::default()).collect(),
        bucket_bytes: s.overlap.bucket_mb * 1e6,
        members: Vec::new(),
        tp_pattern: 0,
        last_tp_collective: None,
        cp_step: (0, 0.0),
        last_cp_collective: None,
        open_windows: Vec::new(),
        sliced: pp_boundary::sliced_pieces(s, t),
        boundary_layer: None,
        fused: FusedLayers {
            on: s.overlap.fuse && tp > 1,
            ..FusedLayers::default()
        },
        sharding: Sharding::new(s, t),
        moe_cost: t.moe.as_ref().map(|m| {
            crate::workload::moe::moe_cost(t, m, tp, s.parallel.ep, &Roofline::of(&s.hardware))
        }),
        ep_traffic: t.moe.as_ref().filter(|_| s.parallel.ep > 1).map(|m| {
            let ep = s.parallel.ep;
            let place = crate::workload::moe::EpPlacement::of(ep, s.hardware.gpus_per_node);
            let tokens = crate::workload::moe::tokens_per_rank(t, tp);
            crate::workload::moe::all_to_all_traffic(t, m, ep, place, tokens)
        }),
        ep_stream: Default::default(),
        group_at: (0, 0),
    };
    b.create_sends();
    let layout = b.cluster.layout.clone();
    for replica in 0..layout.replicas() {
        for stage in 0..layout.pp {
            if b.g.over_cap() {
                break;
            }
            b.stage(replica, stage);
        }
    }
    if t.mode == Mode::Train && !b.g.over_cap() {
        b.dp_reduction_and_optimizer();
    }
    b.g
}

impl Builder<'_> {
    fn virtual_stages_total(&self) -> u32 {
        self.cluster.layout.pp * self.virtual_stages
    }

    /// The layers virtual stage `vs` runs.
    fn layers_of(&self, vs: u32) -> std::ops::Range<u32> {
        stage_layers(self.t.layers, self.virtual_stages_total(), vs)
    }

    /// Parameters of the embedding matrix on one TP rank (and of the output
    /// layer: the tied matrix's copy, or its own).
    fn embedding_params(&self) -> f64 {
        embedding_params_whole(self.t) / f64::from(self.tp)
    }

    /// Whether the last virtual stage holds an output layer apart from the
    /// input embedding: untied, or tied and on another stage (a copy).
    fn separate_output_layer(&self) -> bool {
        self.virtual_stages_total() > 1 || !self.t.tied_embeddings
    }

    /// Whether pipeline activations travel as 1/t slices gathered on arrival.
    fn gathers_on_arrival(&self) -> bool {
        self.s.parallel.scatter_gather && self.tp > 1 && !self.t.sequence_parallel
    }

    fn send_bytes(&self) -> f64 {
        let full = self.cost.activation_bytes;
        if self.t.sequence_parallel || (self.s.parallel.scatter_gather && self.tp > 1) {
            full / f64::from(self.tp)
        } else {
            full
        }
    }

    fn send_index(&self, replica: u32, tp_rank: u32, from_vs: u32, mb: u32, pass: Pass) -> usize {
        let l = &self.cluster.layout;
        let dir = match pass {
            Pass::Forward => 0,
            Pass::Backward | Pass::InputGrad | Pass::WeightGrad | Pass::HeldWeightGrads => 1,
        };
        let group = replica * l.tp_ranks() + tp_rank;
        (((group * self.virtual_stages_total() + from_vs) * self.micro_batches + mb) * 2 + dir)
            as usize
    }

    /// Every pipeline send of the step, one per TP rank: forward from virtual
    /// stage vs to vs + 1, backward from vs to vs - 1.
    fn create_sends(&mut self) {
        let l = self.cluster.layout.clone();
        let vst = self.virtual_stages_total();
        let bytes = self.send_bytes();
        let train = self.t.mode == Mode::Train;
        let mut pattern_cache = std::collections::HashMap::new();
        for replica in 0..l.replicas() {
            for k in 0..l.tp_ranks() {
                for from_vs in 0..vst {
                    for mb in 0..self.micro_batches {
                        for pass in [Pass::Forward, Pass::Backward] {
                            let to_vs = match pass {
                                Pass::Forward if from_vs + 1 < vst => Some(from_vs + 1),
                                Pass::Backward if from_vs > 0 && train => Some(from_vs - 1),
                                _ => None,
                            };
                            let id = match to_vs {
                                None => TaskId::MAX,
                                Some(to_vs) => {
                                    let schedule = self.s.parallel.schedule;
                                    let (a, chunk) = schedule.stage_and_chunk(from_vs, l.pp);
                                    let b = schedule.stage_and_chunk(to_vs, l.pp).0;
                                    let from = self.cluster.gpu(a, replica, k);
                                    let to = self.cluster.gpu(b, replica, k);
                                    let same_node = l.stages_share_node(a, b);
                                    let (pattern, latency) =
                                        *pattern_cache.entry((from, to)).or_insert_with(|| {
                                            self.cluster.send(&mut self.g, from, to, same_node)
                                        });
                                    let phase = match pass {
                                        Pass::Forward => Phase::Forward,
                                        _ => Phase::Backward,
                                    };
                                    let meta = Meta::new(OpKind::Send, phase).mb(mb).chunk(chunk);
                                    // A sliced boundary's sends, one per piece, in a row.
                                    let pieces = self.pieces(pass);
                                    let piece_bytes = bytes / f64::from(pieces);
                                    let first = self.g.comm(
                                        &[from, to],
                                        PP,
                                        pattern,
                                        piece_bytes,
                                        latency,
                                        meta,
                                    );
                                    for _ in 1..pieces {
                                        self.g.comm(
                                            &[from, to],
                                            PP,
                                            pattern,
                                            piece_bytes,
                                            latency,
                                            meta,
                                        );
                                    }
                                    first
                                }
                            };
                            debug_assert_eq!(
                                self.sends.len(),
                                self.send_index(replica, k, from_vs, mb, pass)
                            );
                            self.sends.push(id);
                        }
                    }
                }
            }
        }
    }

    fn stage(&mut self, replica: u32, stage: u32) {
        let l = self.cluster.layout.clone();
        self.members = (0..l.tp_ranks())
            .map(|k| self.cluster.gpu(stage, replica, k))
            .collect();
        let members = self.members.clone();
        self.tp_pattern = self.cluster.nvlink_ring(&mut self.g, &members);
        if self.s.parallel.cp > 1 {
            self.cp_step = self.cluster.cp_ring_step(&mut self.g, &members);
        }
        self.open_windows.clear();
        self.last_tp_collective = None;
        self.last_cp_collective = None;
        let train = self.t.mode == Mode::Train;
        let schedule = self.s.parallel.schedule;
        let last_vs = self.virtual_stages_total() - 1;
        let embeddings = (
            schedule.stage_and_chunk(0, l.pp).0 == stage,
            self.separate_output_layer() && schedule.stage_and_chunk(last_vs, l.pp).0 == stage,
        );
        self.sharding
            .begin_stage(self.s, replica, stage, embeddings);
        let program = stage_program(
            self.s.parallel.schedule,
            stage,
            l.pp,
            self.micro_batches,
            self.virtual_stages,
            train,
        );
        let program = crate::workload::moe::merged_order(self.s, stage, program);
        self.group_at = (stage, replica);
        let mut i = 0;
        while i < program.len() {
            if self.g.over_cap() {
                break;
            }
            let step = program[i];
            // One unit's FLOPs: those of the marked period's micro-batch,
            // neither the step's first nor its last.
            let unit = |step: &Step| self.period_marks.is_some_and(|k| step.micro_batch == k[1]);
            if let Some(&next) = program.get(i + 1).filter(|next| self.merges(&step, next)) {
                let units = [unit(&step), unit(&next)];
                let added = self.merged(replica, stage, step, next);
                for (pass, per_member) in added.iter().enumerate() {
                    for (&m, &(model, executed)) in members.iter().zip(per_member) {
                        if units[pass] {
                            let total = &mut self.g.unit_flops[m as usize];
                            total.0 += model;
                            total.1 += executed;
                        }
                    }
                }
                self.close_windows();
                i += 2;
                continue;
            }
            let before: Vec<(f64, f64)> = if unit(&step) {
                members.iter().map(|&m| self.g.flops[m as usize]).collect()
            } else {
                Vec::new()
            };
            self.step(replica, stage, step);
            for (&m, (model, executed)) in members.iter().zip(before) {
                let (now, added) = (self.g.flops[m as usize], &mut self.g.unit_flops[m as usize]);
                added.0 += now.0 - model;
                added.1 += now.1 - executed;
            }
            self.close_windows();
            i += 1;
        }
        self.sharding.end_stage(&mut self.g, &members);
        // Parameters this GPU holds: its layers, the input embedding on the
        // first virtual stage and the output layer on the last.
        let vocab_params = self.embedding_params();
        let layers: Vec<u32> = (0..self.virtual_stages)
            .flat_map(|chunk| self.layers_of(schedule.virtual_stage(stage, chunk, l.pp)))
            .collect();
        let mut params: f64 = layers
            .iter()
            .map(|&layer| dense_params_at(self.t, self.tp, layer))
            .sum();
        let expert_params: f64 = match &self.t.moe {
            Some(m) => layers
                .iter()
                .filter(|&&layer| m.is_moe_layer(layer))
                .map(|_| expert_params_per_rank(self.t, m, self.s.parallel.ep))
                .sum(),
            None => 0.0,
        };
        let last_vs = self.virtual_stages_total() - 1;
        if schedule.stage_and_chunk(0, l.pp).0 == stage {
            params += vocab_params;
        }
        if self.separate_output_layer() && schedule.stage_and_chunk(last_vs, l.pp).0 == stage {
            params += vocab_params;
        }
        for &m in &members {
            self.buckets[m as usize].params = params;
            self.buckets[m as usize].expert_params = expert_params;
            self.flush_bucket(m);
            self.flush_expert_bucket(m);
        }
    }

    fn step(&mut self, replica: u32, stage: u32, step: Step) {
        let vs = self
            .s
            .parallel
            .schedule
            .virtual_stage(stage, step.chunk, self.cluster.layout.pp);
        let last_vs = self.virtual_stages_total() - 1;
        let mb = step.micro_batch;
        let layers = self.layers_of(vs);
        self.fused.first = layers.start;
        self.fused.last = layers.end - 1;
        let sliced_out = step.pass == Pass::Forward && vs < last_vs && self.sliced.is_some();
        self.boundary_layer = sliced_out.then_some(layers.end - 1);
        match step.pass {
            Pass::Forward => {
                if vs > 0 {
                    self.receive(replica, vs - 1, mb, Pass::Forward, Phase::Forward);
                }
                for layer in layers {
                    if self.g.over_cap() {
                        return;
                    }
                    self.before_layer(layer, Phase::Forward);
                    self.forward_layer(layer, mb, Phase::Forward);
                }
                self.forward_tail(replica, vs, last_vs, mb);
            }
            Pass::Backward | Pass::InputGrad => {
                let whole = step.pass == Pass::Backward;
                self.backward_head(replica, vs, last_vs, mb);
                for layer in layers.rev() {
                    if self.g.over_cap() {
                        return;
                    }
                    self.before_layer(layer, Phase::Backward);
                    if self.t.recompute == Recompute::Full {
                        self.forward_layer(layer, mb, Phase::Recompute);
                        self.ep_wait();
                    }
                    self.backward_layer(layer, mb, whole);
                }
                self.backward_tail(replica, vs, mb, whole);
            }
            Pass::WeightGrad | Pass::HeldWeightGrads => {
                // Layer by layer, each over every micro-batch of the step.
                let mbs = step.micro_batches(self.micro_batches);
                let final_mb = mbs.end == self.micro_batches;
                for layer in layers.rev() {
                    if self.g.over_cap() {
                        return;
                    }
                    for mb in mbs.clone() {
                        self.layer_weight_grad(layer, mb);
                        self.layer_grads_done(layer, mb);
                    }
                }
                // The input embedding's gradient is a weight gradient too.
                if vs == 0 && final_mb {
                    self.grads_final(self.embedding_params());
                }
            }
        }
    }

    /// Before a backward's first layer: the gradient received from the
    /// next virtual stage, or on the last the logits' backward.
    fn backward_head(&mut self, replica: u32, vs: u32, last_vs: u32, mb: u32) {
        let final_mb = mb + 1 == self.micro_batches;
        if vs < last_vs {
            self.receive(replica, vs + 1, mb, Pass::Backward, Phase::Backward);
            self.mark_period(replica, vs, mb);
        } else {
            let meta = Meta::new(OpKind::LogitsBackward, Phase::Backward).mb(mb);
            self.compute_all(self.cost.logits_backward, meta);
            // The output layer's gradient is final here, unless it is
            // the input embedding itself (tied, one virtual stage),
            // whose gradient is final only after the whole backward.
            if final_mb && self.separate_output_layer() {
                self.grads_final(self.embedding_params());
            }
        }
    }

    /// After a backward's last layer: the input embedding's gradient on the
    /// first virtual stage, else the send of the input gradient.
    fn backward_tail(&mut self, replica: u32, vs: u32, mb: u32, whole: bool) {
        self.ep_wait();
        if whole && vs == 0 && mb + 1 == self.micro_batches {
            self.grads_final(self.embedding_params());
        }
        if vs > 0 {
            self.send(replica, vs, mb, Pass::Backward);
        }
    }

    /// The gradient of `mb` arriving at the first stage of the first replica
    /// marks a period of the steady state (`Graph::period_marks`) when `mb`
    /// is one of the marked micro-batches: its pipeline send is marked.
    fn mark_period(&mut self, replica: u32, vs: u32, mb: u32) {
        if replica == 0 && vs == 0 && self.period_marks.is_some_and(|k| k.contains(&mb)) {
            let send = self.sends[self.send_index(0, 0, 1, mb, Pass::Backward)];
            self.g.period_marks.push(send);
        }
    }

    /// Sharded DP's hook before a layer's forward or backward (`sharding`).
    fn before_layer(&mut self, layer: u32, phase: Phase) {
        let members = std::mem::take(&mut self.members);
        self.sharding
            .before_layer(&mut self.g, &self.cluster, &members, layer, phase);
        self.members = members;
    }

    /// A layer's gradients of micro-batch `mb` are computed: FSDP
    /// reduce-scatters them itself; otherwise the last micro-batch's fill
    /// the DP bucket.
    fn layer_grads_done(&mut self, layer: u32, mb: u32) {
        if self.sharding.per_layer_gradients() {
            let members = std::mem::take(&mut self.members);
            self.sharding
                .after_layer_grads(&mut self.g, &self.cluster, &members, layer, mb);
            self.members = members;
        } else if mb + 1 == self.micro_batches {
            self.grads_final(dense_params_at(self.t, self.tp, layer));
            if let Some(m) = self.t.moe.as_ref().filter(|m| m.is_moe_layer(layer)) {
                let experts = expert_params_per_rank(self.t, m, self.s.parallel.ep);
                self.expert_grads_final(experts);
            }
        }
    }

    fn compute_all(&mut self, cost: OpCost, meta: Meta) {
        for i in 0..self.members.len() {
            let m = self.members[i];
            self.g
                .compute(m, cost.time_s, cost.memory_s, cost.flops, meta);
        }
    }

    /// A collective of the TP group, after each member's latest op.
    fn tp_collective(&mut self, kind: Collective, size_bytes: f64, meta: Meta) -> TaskId {
        let call = self.cluster.node_call(kind, self.tp, size_bytes);
        self.tp_call(&call, meta)
    }

    /// The TP group's collective running `call`, after each member's latest op.
    fn tp_call(&mut self, call: &CollectiveCall, meta: Meta) -> TaskId {
        let members = std::mem::take(&mut self.members);
        let id = self.g.comm(
            &members,
            TP,
            self.tp_pattern,
            call.wire_bytes,
            call.latency_s,
            meta.call(call),
        );
        // The window it would have if overlapped, until an overlapping
        // schedule names another: the GEMM that produced its data.
        if let Some(last) = self.g.next_compute_index(members[0]).checked_sub(1) {
            self.g.set_window(id, last, last);
        }
        for &m in &members {
            if let Some(last) = self.g.last_compute(m) {
                self.g.dep(last, id);
            }
        }
        if let Some(previous) = self.last_tp_collective.replace(id) {
            self.g.dep(previous, id);
        }
        self.members = members;
        id
    }

    fn block_all(&mut self, task: TaskId) {
        for i in 0..self.members.len() {
            let m = self.members[i];
            self.g.block_compute_on(m, task);
        }
    }

    /// The collective's window is the owner's next compute op.
    fn window_next(&mut self, task: TaskId) {
        let owner = self.members[0];
        let next = self.g.next_compute_index(owner);
        self.g.set_window(task, next, next);
    }

    /// A blocking collective: the compute stream waits for it.
    fn tp_blocking(&mut self, kind: Collective, meta: Meta) {
        let id = self.tp_collective(kind, self.cost.activation_bytes, meta);
        self.block_all(id);
    }

    fn collective_op(kind: Collective) -> OpKind {
        match kind {
            Collective::AllReduce => OpKind::AllReduce,
            Collective::ReduceScatter => OpKind::ReduceScatter,
            Collective::AllGather => OpKind::AllGather,
            Collective::SendRecv => OpKind::Send,
        }
    }

    fn layer_forward(&mut self, layer: u32, mb: u32, phase: Phase) {
        let meta = Meta::new(OpKind::Qkv, phase).mb(mb).layer(layer);
        let sp = self.t.sequence_parallel && self.tp > 1;
        let (fused, bda) = (self.fused, self.cost.bias_dropout_add);
        if self.decomposed {
            let pre = fused.opening(self.cost.qkv_pre, bda, OpKind::Qkv, layer);
            let gemm = self.cost.qkv_gemm;
            self.gathered_column_parallel(pre, gemm, meta);
        } else {
            if sp {
                self.tp_blocking(Collective::AllGather, meta.op(OpKind::AllGather));
            }
            let qkv = fused.opening(self.cost.qkv, bda, OpKind::Qkv, layer);
            self.compute_all(qkv, meta);
        }
        self.attention_forward(meta.op(OpKind::Attention));
        self.row_parallel(self.cost.proj, meta.op(OpKind::Proj));
        // An MoE layer's experts replace the MLP (`moe_layer`).
        if self.t.is_moe_layer(layer) {
            return;
        }
        let up = meta.op(OpKind::MlpUp);
        if self.decomposed {
            let pre = fused.opening(self.cost.mlp_up_pre, bda, OpKind::MlpUp, layer);
            let gemm = self.cost.mlp_up_gemm;
            self.gathered_column_parallel(pre, gemm, up);
            self.compute_all(self.cost.mlp_up_post, up);
        } else {
            if sp {
                self.tp_blocking(Collective::AllGather, meta.op(OpKind::AllGather));
            }
            let mlp_up = fused.opening(self.cost.mlp_up, bda, OpKind::MlpUp, layer);
            self.compute_all(mlp_up, up);
        }
        self.row_parallel(self.cost.mlp_down, meta.op(OpKind::MlpDown));
    }

    /// With sequence parallelism and TP overlap, the AllGather before a
    /// column-parallel GEMM in its decomposed form (PyTorch Async TP,
    /// Transformer Engine's userbuffers; model.md section 4).
    fn gathered_column_parallel(&mut self, pre: OpCost, gemm: SplitGemm, meta: Meta) {
        let chunk = gemm.chunk(&self.roof, self.tp);
        self.decomposed_gather(pre, chunk, meta);
    }

    /// One step of a decomposed TP collective: every rank of the group
    /// passes one sequence slice (1/t of the activation) to its ring
    /// neighbour, point to point.
    fn ring_step(&mut self, meta: Meta) -> TaskId {
        let size = self.cost.activation_bytes / f64::from(self.tp);
        let id = self.tp_collective(Collective::SendRecv, size, meta);
        self.g.on_copy_engines(id);
        id
    }

    /// A decomposed AllGather feeding a GEMM: after `pre` (the kernels that
    /// produce the local slice), the GEMM runs in t pieces, the first on the
    /// local slice, and the t - 1 ring steps bring the other slices, each
    /// moving under the GEMM on the piece before it. `chunk` is one piece.
    fn decomposed_gather(&mut self, pre: OpCost, chunk: OpCost, meta: Meta) {
        if pre != OpCost::default() {
            self.compute_all(pre, meta);
        }
        let first = self.g.next_compute_index(self.members[0]);
        let steps: Vec<TaskId> = (0..self.tp - 1)
            .map(|i| {
                let id = self.ring_step(meta.op(OpKind::AllGather).chunk(i));
                self.g.set_window(id, first + i, first + i);
                id
            })
            .collect();
        for i in 0..self.tp {
            if i > 0 {
                self.block_all(steps[i as usize - 1]);
            }
            self.compute_all(chunk, meta.chunk(i));
        }
    }

    /// A decomposed ReduceScatter after a GEMM: the GEMM runs in t pieces,
    /// one per destination slice; after each but the last, its partial sum
    /// moves one ring step (added to the neighbour's) while the next piece
    /// computes. Returns the last step, which the output's consumer awaits.
    fn decomposed_scatter(&mut self, gemm: SplitGemm, meta: Meta) -> Option<TaskId> {
        let chunk = gemm.chunk(&self.roof, self.tp);
        let mut last = None;
        for i in 0..self.tp {
            self.compute_all(chunk, meta.chunk(i));
            if i + 1 < self.tp {
                let id = self.ring_step(meta.op(OpKind::ReduceScatter).chunk(i));
                self.window_next(id);
                last = Some(id);
            }
        }
        last
    }

    /// Backward of a column-parallel GEMM in the decomposed form: the input
    /// gradient's GEMM with its ReduceScatter decomposed, then the weight
    /// gradient's GEMM fed by the decomposed AllGather of the layer's input
    /// (sharded by sequence parallelism). The next op awaits the scatter.
    fn decomposed_column_backward(
        &mut self,
        pre: OpCost,
        forward: SplitGemm,
        dmeta: Meta,
        wmeta: Meta,
    ) {
        if pre != OpCost::default() {
            self.compute_all(pre, dmeta);
        }
        let scatter = self.decomposed_scatter(forward.input_grad(), dmeta);
        let wgrad = forward.weight_grad_chunk(&self.roof, self.tp);
        self.decomposed_gather(OpCost::default(), wgrad, wmeta);
        if let Some(id) = scatter {
            self.block_all(id);
        }
    }

    /// A layer's backward with sequence parallelism and TP overlap: every
    /// SP AllGather and ReduceScatter decomposed into ring steps under the
    /// GEMM beside it (Async TP / userbuffers, forward and backward alike).
    fn layer_backward_decomposed(&mut self, meta: Meta) {
        // MLP: the output gradient is gathered under the down projection's
        // input gradient; its weight gradient then runs on the whole. (An
        // MoE layer's experts have run their backward already.)
        if !self.t.is_moe_layer(meta.layer) {
            let down = self.cost.mlp_down;
            self.output_grad_gathered(down, meta);
            self.compute_all(down.chunk(&self.roof, 1), meta);
            self.decomposed_column_backward(
                self.cost.mlp_up_dgrad_pre,
                self.cost.mlp_up_gemm,
                meta.op(OpKind::MlpUpDgrad),
                meta.op(OpKind::MlpUpWgrad),
            );
        }
        // Attention: likewise for the projection, then the core's backward.
        let attention = meta.op(OpKind::AttentionBackward);
        let proj = self.cost.proj;
        self.output_grad_gathered(proj, attention);
        self.attention_backward(
            proj.chunk(&self.roof, 1)
                .add(self.cost.attention_core_backward),
            attention,
        );
        self.decomposed_column_backward(
            OpCost::default(),
            self.cost.qkv_gemm,
            meta.op(OpKind::QkvDgrad),
            meta.op(OpKind::QkvWgrad),
        );
    }

    /// A row-parallel GEMM and the reduction of its output. With TP overlap
    /// the GEMM runs in chunks and chunk i's collective runs while chunk i+1
    /// computes (CoCoNet); the next op waits for all of them.
    fn row_parallel(&mut self, gemm: SplitGemm, meta: Meta) {
        if self.tp == 1 {
            self.compute_all(gemm.chunk(&self.roof, 1), meta);
            return;
        }
        if self.decomposed {
            if let Some(id) = self.decomposed_scatter(gemm, meta) {
                self.block_all(id);
            }
            return;
        }
        let kind = if self.t.sequence_parallel {
            Collective::ReduceScatter
        } else {
            Collective::AllReduce
        };
        let chunks = self.chunks;
        let cost = gemm.chunk(&self.roof, chunks);
        if meta.op == OpKind::MlpDown && self.boundary_layer == Some(meta.layer) {
            // The sliced boundary's ReduceScatter reduces this output.
            for i in 0..chunks {
                self.compute_all(cost, meta.chunk(i));
            }
            return;
        }
        let size = self.cost.activation_bytes / f64::from(chunks);
        let fused_bytes = if self.fused.carries(meta.op, meta.layer) {
            self.cost.bias_dropout_add.memory_s * self.roof.hbm_gbps * 1e9 / f64::from(chunks)
        } else {
            0.0
        };
        // Chunks as they are launched (model.md 2b): separate NCCL calls, each
        // at its own size with its own latency and protocol; or, with
        // `overlap.fuse`, one fused kernel (CoCoNet's), chosen at the whole
        // size, whose further chunks add one ring step each.
        let one_kernel = self.fused.on;
        let call = if one_kernel {
            self.cluster
                .node_call(kind, self.tp, self.cost.activation_bytes)
                .piece(chunks)
        } else {
            self.cluster.node_call(kind, self.tp, size)
        };
        let mut collectives = Vec::with_capacity(chunks as usize);
        for i in 0..chunks {
            self.compute_all(cost, meta.chunk(i));
            let id = self.tp_call(&call, meta.op(Self::collective_op(kind)).chunk(i));
            crate::workload::fusion::carry(&mut self.g, id, fused_bytes);
            if one_kernel && i > 0 {
                self.g.tasks[id as usize]
                    .set_latency_s(pipelined_chunk_latency_s(self.cluster.nvlink_latency_s()));
            }
            if i + 1 < chunks {
                self.window_next(id);
            }
            collectives.push(id);
        }
        for id in collectives {
            self.block_all(id);
        }
    }

    fn layer_backward(&mut self, layer: u32, mb: u32) {
        let meta = Meta::new(OpKind::MlpDownBackward, Phase::Backward)
            .mb(mb)
            .layer(layer);
        let sp = self.t.sequence_parallel && self.tp > 1;
        if self.decomposed {
            self.layer_backward_decomposed(meta);
            return;
        }
        // An MoE layer's experts have run their backward already.
        if !self.t.is_moe_layer(layer) {
            if sp {
                // Mirror of the forward ReduceScatter after the MLP.
                self.tp_blocking(Collective::AllGather, meta.op(OpKind::AllGather));
            }
            self.compute_all(self.cost.mlp_down_backward, meta);
            self.column_parallel_backward(
                self.cost.mlp_up_dgrad,
                self.cost.mlp_up_wgrad,
                meta.op(OpKind::MlpUpDgrad),
                meta.op(OpKind::MlpUpWgrad),
            );
        }
        if sp {
            self.tp_blocking(Collective::AllGather, meta.op(OpKind::AllGather));
        }
        self.attention_backward(
            self.cost.attention_backward,
            meta.op(OpKind::AttentionBackward),
        );
        self.column_parallel_backward(
            self.cost.qkv_dgrad,
            self.cost.qkv_wgrad,
            meta.op(OpKind::QkvDgrad),
            meta.op(OpKind::QkvWgrad),
        );
    }

    /// B of one layer: the input gradients only (Qi et al. 2024), with the TP
    /// collectives they need: the mirrors of the forward's reductions and
    /// the reduction of each column-parallel GEMM's input gradient, which the
    /// next B op consumes. The weight-gradient GEMMs wait for W.
    fn layer_input_grad(&mut self, layer: u32, mb: u32) {
        let meta = Meta::new(OpKind::MlpDownBackward, Phase::Backward)
            .mb(mb)
            .layer(layer);
        let sp = self.t.sequence_parallel && self.tp > 1;
        if self.decomposed {
            self.layer_input_grad_decomposed(meta);
            return;
        }
        // An MoE layer's experts have run their B already.
        if !self.t.is_moe_layer(layer) {
            if sp {
                self.tp_blocking(Collective::AllGather, meta.op(OpKind::AllGather));
            }
            let down_wgrad = self.cost.mlp_down.chunk(&self.roof, 1);
            self.compute_all(self.cost.mlp_down_backward.without(down_wgrad), meta);
            self.input_grad_reduced(self.cost.mlp_up_dgrad, meta.op(OpKind::MlpUpDgrad));
        }
        if sp {
            self.tp_blocking(Collective::AllGather, meta.op(OpKind::AllGather));
        }
        let proj_wgrad = self.cost.proj.chunk(&self.roof, 1);
        self.attention_backward(
            self.cost.attention_backward.without(proj_wgrad),
            meta.op(OpKind::AttentionBackward),
        );
        self.input_grad_reduced(self.cost.qkv_dgrad, meta.op(OpKind::QkvDgrad));
    }

    /// A column-parallel GEMM's input gradient and its reduction across the
    /// TP group, which the next op waits for: in a split backward no weight
    /// gradient follows to hide it.
    fn input_grad_reduced(&mut self, dgrad: OpCost, meta: Meta) {
        self.compute_all(dgrad, meta);
        if self.tp == 1 {
            return;
        }
        let kind = if self.t.sequence_parallel {
            Collective::ReduceScatter
        } else {
            Collective::AllReduce
        };
        self.tp_blocking(kind, meta.op(Self::collective_op(kind)));
    }

    /// W of one layer: the four weight-gradient GEMMs, as one op for the MLP
    /// and one for attention. With sequence parallelism each column-parallel
    /// GEMM's input is gathered again across the TP group first (the
    /// AllGather Megatron runs under the input gradient in a whole backward).
    fn layer_weight_grad(&mut self, layer: u32, mb: u32) {
        let meta = Meta::new(OpKind::MlpUpWgrad, Phase::Backward)
            .mb(mb)
            .layer(layer);
        let sp = self.t.sequence_parallel && self.tp > 1;
        if self.decomposed {
            self.layer_weight_grad_decomposed(meta);
            return;
        }
        if self.t.is_moe_layer(layer) {
            self.experts_weight_grad(meta);
        } else {
            if sp {
                self.tp_blocking(Collective::AllGather, meta.op(OpKind::AllGather));
            }
            let down_wgrad = self.cost.mlp_down.chunk(&self.roof, 1);
            self.compute_all(down_wgrad.add(self.cost.mlp_up_wgrad), meta);
        }
        if sp {
            self.tp_blocking(Collective::AllGather, meta.op(OpKind::AllGather));
        }
        let proj_wgrad = self.cost.proj.chunk(&self.roof, 1);
        self.compute_all(
            proj_wgrad.add(self.cost.qkv_wgrad),
            meta.op(OpKind::QkvWgrad),
        );
    }

    /// B of one layer with sequence parallelism and TP overlap: the input
    /// gradients with their SP collectives decomposed (Async TP). Each
    /// row-parallel GEMM's output gradient is gathered in ring steps under
    /// the pieces of its input-gradient GEMM, and each column-parallel
    /// GEMM's input gradient is reduce-scattered in ring steps under its
    /// own pieces. The layer input that W needs is not gathered here: W
    /// gathers it again (`layer_weight_grad_decomposed`).
    fn layer_input_grad_decomposed(&mut self, meta: Meta) {
        if !self.t.is_moe_layer(meta.layer) {
            let down = self.cost.mlp_down;
            self.output_grad_gathered(down, meta);
            self.input_grad_scattered(
                self.cost.mlp_up_dgrad_pre,
                self.cost.mlp_up_gemm,
                meta.op(OpKind::MlpUpDgrad),
            );
        }
        let attention = meta.op(OpKind::AttentionBackward);
        let proj = self.cost.proj;
        self.output_grad_gathered(proj, attention);
        self.attention_backward(self.cost.attention_core_backward, attention);
        self.input_grad_scattered(
            OpCost::default(),
            self.cost.qkv_gemm,
            meta.op(OpKind::QkvDgrad),
        );
    }

    /// The attention core's forward, with context parallelism's exchange
    /// of keys and values (model.md 4d).
    fn attention_forward(&mut self, meta: Meta) {
        if self.s.parallel.cp == 1 {
            self.compute_all(self.cost.attention, meta);
            return;
        }
        let (block, kv) = (self.cost.attention_block, self.cost.kv_block_bytes);
        match self.s.parallel.cp_mode {
            CpMode::Ring => self.ring_attention(block, kv, meta),
            CpMode::Allgather => self.gathered_attention(block, kv, meta),
        }
    }

    /// A CP transfer of the group, after each member's latest op and the
    /// group's previous CP transfer (one stream).
    fn cp_comm(&mut self, bytes: f64, meta: Meta) -> TaskId {
        let members = std::mem::take(&mut self.members);
        let (pattern, latency) = self.cp_step;
        let id = self.g.comm(&members, CP, pattern, bytes, latency, meta);
        self.cp_after_compute(&members, id);
        self.members = members;
        id
    }

    /// `id` waits for each member's latest compute op and the group's
    /// previous CP transfer.
    fn cp_after_compute(&mut self, members: &[u32], id: TaskId) {
        for &m in members {
            if let Some(last) = self.g.last_compute(m) {
                self.g.dep(last, id);
            }
        }
        if let Some(previous) = self.last_cp_collective.replace(id) {
            self.g.dep(previous, id);
        }
    }

    /// Ring attention over cp K/V blocks (Megatron-LM's and torchtitan's):
    /// the local block first, then cp - 1 steps, each bringing the next
    /// block from the ring neighbour while passing one on. With CP overlap,
    /// step i + 1's transfer runs under block i's attention: it leaves as
    /// soon as step i has arrived and block i - 1 no longer reads its
    /// buffer (double buffering). Without it, each step runs after the
    /// block before it and the block after waits for it. `bytes`: what one
    /// step moves per rank.
    fn ring_attention(&mut self, block: OpCost, bytes: f64, meta: Meta) {
        let cp = self.s.parallel.cp;
        let send = meta.op(OpKind::Send);
        let mut arrived: Option<TaskId> = None;
        for i in 0..cp {
            if self.s.overlap.cp {
                let incoming = arrived;
                if i + 1 < cp {
                    let id = self.cp_comm(bytes, send.chunk(i + 1));
                    // Its window: the block computing while it moves.
                    self.window_next(id);
                    arrived = Some(id);
                }
                if let Some(id) = incoming {
                    self.block_all(id);
                }
            } else if i > 0 {
                let id = self.cp_comm(bytes, send.chunk(i));
                // The window it would have if overlapped: the block before.
                if let Some(last) = self.g.next_compute_index(self.members[0]).checked_sub(1) {
                    self.g.set_window(id, last, last);
                }
                self.block_all(id);
            }
            self.compute_all(block, meta.chunk(i));
        }
    }

    /// All-gather attention (Llama 3): the K/V of every CP rank gathered,
    /// then the rank's queries against them. Without CP overlap attention
    /// waits for the whole gather. With it, the gather runs under the
    /// local block (the rank's own keys, the diagonal of the causal mask)
    /// and the other blocks wait for it. `kv`: one rank's K/V bytes.
    fn gathered_attention(&mut self, block: OpCost, kv: f64, meta: Meta) {
        let cp = self.s.parallel.cp;
        let gather = self.cp_collective(Collective::AllGather, kv, meta.op(OpKind::AllGather));
        if self.s.overlap.cp {
            self.window_next(gather);
            self.compute_all(block, meta.chunk(0));
            self.block_all(gather);
            self.compute_all(times(block, cp - 1), meta.chunk(1));
        } else {
            self.window_next(gather);
            self.block_all(gather);
            self.compute_all(times(block, cp), meta);
        }
    }

    /// A collective of the group's CP ranks of `kind` over cp x `bytes`
    /// (each rank's share), after each member's latest op.
    fn cp_collective(&mut self, kind: Collective, bytes: f64, meta: Meta) -> TaskId {
        let members = std::mem::take(&mut self.members);
        let size = bytes * f64::from(self.s.parallel.cp);
        let placed = self
            .cluster
            .cp_collective(&mut self.g, &members, kind, size);
        let id = self.g.placed_comm(&members, CP, placed, meta);
        self.cp_after_compute(&members, id);
        self.members = members;
        id
    }

    /// The attention core's backward with context parallelism: the rest
    /// of the op (`rest`: the projection's GEMMs and the kernels before
    /// them), then cp blocks. Ring: the backward passes K/V and their
    /// gradients, twice a forward step's bytes. Allgather: the gradients of
    /// the gathered K/V are reduce-scattered back, and QKV's backward waits.
    fn cp_attention_backward(&mut self, rest: OpCost, meta: Meta) {
        if rest.time_s > 0.0 {
            self.compute_all(rest, meta);
        }
        let (block, kv) = (self.cost.attention_backward_block, self.cost.kv_block_bytes);
        match self.s.parallel.cp_mode {
            CpMode::Ring => self.ring_attention(block, 2.0 * kv, meta),
            CpMode::Allgather => {
                self.compute_all(times(block, self.s.parallel.cp), meta);
                let kind = Collective::ReduceScatter;
                let id = self.cp_collective(kind, kv, meta.op(OpKind::ReduceScatter));
                self.window_next(id);
                self.block_all(id);
            }
        }
    }

    /// The attention core's backward (with `cost`, what else runs in the
    /// same op). Its recomputed forward counts as recomputation, whichever
    /// backward form runs it.
    fn attention_backward(&mut self, cost: OpCost, meta: Meta) {
        if self.s.parallel.cp > 1 {
            let rest = cost.without(self.cost.attention_core_backward);
            // What is left of the core's own op is rounding.
            let rest = if rest.time_s > 1e-9 * cost.time_s {
                rest
            } else {
                OpCost::default()
            };
            self.cp_attention_backward(rest, meta);
        } else {
            self.compute_all(cost, meta);
        }
        for i in 0..self.members.len() {
            let m = self.members[i];
            self.g
                .count_as_recompute(m, self.cost.attention_recompute_flops);
        }
    }

    /// A row-parallel GEMM's output gradient, gathered across the sequence
    /// in ring steps under the pieces of that GEMM's input gradient (Async TP).
    fn output_grad_gathered(&mut self, gemm: SplitGemm, meta: Meta) {
        self.decomposed_gather(
            self.cost.backward_pre,
            gemm.input_grad().chunk(&self.roof, self.tp),
            meta,
        );
    }

    /// A column-parallel GEMM's input gradient in a split backward, its
    /// ReduceScatter decomposed under its pieces; the next op awaits the
    /// last ring step, since no weight gradient follows to hide it.
    fn input_grad_scattered(&mut self, pre: OpCost, forward: SplitGemm, meta: Meta) {
        if pre != OpCost::default() {
            self.compute_all(pre, meta);
        }
        if let Some(id) = self.decomposed_scatter(forward.input_grad(), meta) {
            self.block_all(id);
        }
    }

    /// W of one layer with sequence parallelism and TP overlap. The
    /// row-parallel weight gradients read the output gradients B gathered
    /// (kept with the deferred W). Each column-parallel weight gradient
    /// gathers the layer's input again, in ring steps under its own
    /// pieces. This is what the zero-bubble reference does (Qi et al. 2024;
    /// the Megatron-LM fork in sail-sg/zero-bubble-pipeline-parallelism,
    /// whose `WeightGradStore` keeps only the local sequence slice with each
    /// deferred W and all-gathers it when W runs): keeping the gathered
    /// input of every held layer and micro-batch instead would cost t times
    /// that activation memory.
    fn layer_weight_grad_decomposed(&mut self, meta: Meta) {
        let qkv = meta.op(OpKind::QkvWgrad);
        if self.t.is_moe_layer(meta.layer) {
            self.experts_weight_grad(meta);
        } else {
            self.compute_all(self.cost.mlp_down.chunk(&self.roof, 1), meta);
            let up = self.cost.mlp_up_gemm.weight_grad_chunk(&self.roof, self.tp);
            self.decomposed_gather(OpCost::default(), up, meta);
        }
        self.compute_all(self.cost.proj.chunk(&self.roof, 1), qkv);
        let qkv_piece = self.cost.qkv_gemm.weight_grad_chunk(&self.roof, self.tp);
        self.decomposed_gather(OpCost::default(), qkv_piece, qkv);
    }

    /// Backward of a column-parallel GEMM: the input gradient is reduced
    /// across the TP group. With TP overlap that reduction runs under the
    /// weight-gradient GEMM, and with sequence parallelism the re-gathered
    /// input runs under the input-gradient GEMM (Korthikanti et al. 2022).
    fn column_parallel_backward(&mut self, dgrad: OpCost, wgrad: OpCost, dmeta: Meta, wmeta: Meta) {
        if self.tp == 1 {
            self.compute_all(dgrad, dmeta);
            self.compute_all(wgrad, wmeta);
            return;
        }
        let sp = self.t.sequence_parallel;
        let size = self.cost.activation_bytes;
        let gather = sp.then(|| {
            let id = self.tp_collective(Collective::AllGather, size, dmeta.op(OpKind::AllGather));
            if self.tp_on {
                self.window_next(id);
            } else {
                self.block_all(id);
            }
            id
        });
        self.compute_all(dgrad, dmeta);
        if let (Some(id), true) = (gather, self.tp_on) {
            self.block_all(id);
        }
        let kind = if sp {
            Collective::ReduceScatter
        } else {
            Collective::AllReduce
        };
        let id = self.tp_collective(kind, size, dmeta.op(Self::collective_op(kind)));
        if self.tp_on {
            self.window_next(id);
            self.compute_all(wgrad, wmeta);
            self.block_all(id);
        } else {
            self.block_all(id);
            self.compute_all(wgrad, wmeta);
        }
    }

    /// The receiving end of a pipeline send: the next op waits for the data
    /// (gathered across the TP group first, with scatter/gather).
    fn receive(&mut self, replica: u32, from_vs: u32, mb: u32, pass: Pass, phase: Phase) {
        let sends: Vec<TaskId> = (0..self.members.len() as u32)
            .map(|k| self.sends[self.send_index(replica, k, from_vs, mb, pass)])
            .collect();
        if self.pieces(pass) > 1 {
            let meta = Meta::new(OpKind::AllGather, phase).mb(mb);
            let group = self.boundary_group();
            let gathers = pp_boundary::gather(&mut self.g, &self.cluster, &group, &sends, meta);
            for id in gathers {
                self.block_all(id);
            }
            return;
        }
        if self.gathers_on_arrival() {
            let kind = Collective::AllGather;
            let members = self.members.clone();
            let call = self
                .cluster
                .node_call(kind, self.tp, self.cost.activation_bytes);
            let meta = Meta::new(OpKind::AllGather, phase).mb(mb).call(&call);
            let id = self.g.comm(
                &members,
                PP,
                self.tp_pattern,
                call.wire_bytes,
                call.latency_s,
                meta,
            );
            for &s in &sends {
                self.g.dep(s, id);
            }
            self.block_all(id);
        } else {
            for (i, &s) in sends.iter().enumerate() {
                let m = self.members[i];
                self.g.block_compute_on(m, s);
            }
        }
    }

    fn send(&mut self, replica: u32, from_vs: u32, mb: u32, pass: Pass) {
        let pieces = self.pieces(pass);
        if pieces > 1 {
            let firsts: Vec<TaskId> = (0..self.members.len() as u32)
                .map(|k| self.sends[self.send_index(replica, k, from_vs, mb, pass)])
                .collect();
            let meta = Meta::new(OpKind::ReduceScatter, Phase::Forward).mb(mb);
            let group = self.boundary_group();
            pp_boundary::reduce_scatter_and_send(&mut self.g, &self.cluster, &group, &firsts, meta);
        }
        for k in 0..self.members.len() {
            let m = self.members[k];
            let first = self.sends[self.send_index(replica, k as u32, from_vs, mb, pass)];
            for id in first..first + pieces {
                if pieces == 1 {
                    let last = self
                        .g
                        .last_compute(m)
                        .expect("a step computes before it sends");
                    self.g.dep(last, id);
                    // The experts' output, when the last layer's combine is
                    // still in flight.
                    self.ep_feed(id);
                }
                if !self.s.overlap.pp {
                    self.g.block_compute_on(m, id);
                }
                if k == 0 {
                    let from = self.g.next_compute_index(m);
                    self.open_windows.push((id, from));
                }
            }
        }
        self.ep_fed();
    }

    /// Sends per boundary crossing in direction `pass`: the sliced
    /// boundary's pieces forward, one otherwise.
    fn pieces(&self, pass: Pass) -> u32 {
        match (self.sliced, pass) {
            (Some(pieces), Pass::Forward) => pieces,
            _ => 1,
        }
    }

    /// The group being built, as one end of a sliced boundary.
    fn boundary_group(&self) -> Group {
        Group {
            members: self.members.clone(),
            pattern: self.tp_pattern,
            tp: self.tp,
            activation_bytes: self.cost.activation_bytes,
            pieces: self.pieces(Pass::Forward),
        }
    }

    /// A send's window is the sender's next step: close it once that step is built.
    fn close_windows(&mut self) {
        let owner = self.members[0];
        let next = self.g.next_compute_index(owner);
        let mut still_open = Vec::new();
        for (id, from) in std::mem::take(&mut self.open_windows) {
            if next > from {
                self.g.set_window(id, from, next - 1);
            } else {
                still_open.push((id, from));
            }
        }
        self.open_windows = still_open;
    }

    /// Gradients of `params` (per rank) are final: fill the DP bucket.
    fn grads_final(&mut self, params: f64) {
        self.fill_buckets(params, false);
    }

    /// Routed experts' gradients of `params` (per rank) are final: fill
    /// the expert bucket.
    fn expert_grads_final(&mut self, params: f64) {
        self.fill_buckets(params, true);
    }

    /// Adds gradients of `params` per rank to each member's pending DP or
    /// expert bucket, flushing a bucket once it holds `bucket_mb`.
    fn fill_buckets(&mut self, params: f64, experts: bool) {
        let bytes = params * f64::from(self.s.overlap.grad_bytes);
        for i in 0..self.members.len() {
            let m = self.members[i];
            let b = &mut self.buckets[m as usize];
            let pending = if experts {
                &mut b.expert_pending_bytes
            } else {
                &mut b.pending_bytes
            };
            *pending += bytes;
            if *pending >= self.bucket_bytes {
                if experts {
                    self.flush_expert_bucket(m);
                } else {
                    self.flush_bucket(m);
                }
            }
        }
    }

    fn flush_expert_bucket(&mut self, gpu: u32) {
        let bytes = std::mem::take(&mut self.buckets[gpu as usize].expert_pending_bytes);
        if let Some(bucket) = self.bucket_ready(gpu, bytes) {
            self.buckets[gpu as usize].expert_buckets.push(bucket);
        }
    }

    fn flush_bucket(&mut self, gpu: u32) {
        let bytes = std::mem::take(&mut self.buckets[gpu as usize].pending_bytes);
        if let Some(bucket) = self.bucket_ready(gpu, bytes) {
            self.buckets[gpu as usize].buckets.push(bucket);
        }
    }

    /// A bucket of `bytes` of gradients that the GPU's latest compute op
    /// finished, if it holds any.
    fn bucket_ready(&self, gpu: u32, bytes: f64) -> Option<Bucket> {
        (bytes > 0.0).then(|| Bucket {
            bytes,
            ready: self
                .g
                .last_compute(gpu)
                .expect("gradients come from compute"),
            window_from: self.g.next_compute_index(gpu),
        })
    }

    /// Each bucket is reduced across the DP replicas on the DP stream, in
    /// order: launched when ready (overlap on) or after the last backward op
    /// (off). The optimizer step follows the last bucket and, on the stages
    /// holding the tied embedding's two copies, its gradient all-reduce
    /// (`embedding_sync`), which needs both stages' reductions: their
    /// optimizer steps are built after it.
    fn dp_reduction_and_optimizer(&mut self) {
        let l = self.cluster.layout.clone();
        let sync = embedding_sync::stages(self.s, self.t);
        // Per GPU of the two embedding stages, the DP reductions its
        // optimizer awaits, kept until the all-reduce exists.
        let mut deferred: Vec<(u32, u32, Vec<TaskId>)> = Vec::new();
        for stage in 0..l.pp {
            let expert_reductions = self.expert_reductions(stage);
            for k in 0..l.tp_ranks() {
                let members: Vec<u32> = (0..l.replicas())
                    .map(|r| self.cluster.gpu(stage, r, k))
                    .collect();
                let owner = members[0];
                let last_bwd = self.g.compute_order[owner as usize].len() as u32 - 1;
                let mut previous: Option<TaskId> = None;
                let mut reductions = Vec::new();
                if l.dp_group() > 1 {
                    let count = self.buckets[owner as usize].buckets.len();
                    let (kind, op) = self.sharding.bucket_collective();
                    for i in 0..count {
                        let size = self.buckets[owner as usize].buckets[i].bytes;
                        let c = self
                            .cluster
                            .dp_collective(&mut self.g, &members, kind, size);
                        let meta = Meta::new(op, Phase::Step).chunk(i as u32);
                        let id = self.g.placed_comm(&members, DP, c, meta);
                        for &m in &members {
                            let dep = if self.s.overlap.dp {
                                self.buckets[m as usize].buckets[i].ready
                            } else {
                                self.g.last_compute(m).expect("a training step computes")
                            };
                            self.g.dep(dep, id);
                        }
                        if let Some(p) = previous {
                            self.g.dep(p, id);
                        }
                        // The window: backward compute after the first bucket is ready.
                        let from = self.buckets[owner as usize].buckets[i].window_from;
                        if i == 0 && from <= last_bwd {
                            self.g.set_window(id, from, last_bwd);
                        }
                        previous = Some(id);
                        reductions.push(id);
                    }
                }
                // The optimizer needs every bucket reduced, and with FSDP
                // every layer's reduce-scatter.
                let reduced: Vec<TaskId> = reductions
                    .iter()
                    .chain(self.sharding.reduce_scatters(stage, k))
                    .chain(&expert_reductions)
                    .copied()
                    .collect();
                if sync.is_some_and(|(first, last)| stage == first || stage == last) {
                    deferred.push((stage, k, reduced));
                } else {
                    self.optimizer_steps(stage, k, &reduced);
                }
            }
        }
        if let Some((first, last)) = sync {
            let done = |stage: u32, k: u32| {
                deferred
                    .iter()
                    .find(|d| d.0 == stage && d.1 == k)
                    .and_then(|d| d.2.last().copied())
            };
            // Per TP rank, one all-reduce per replica.
            let mut all_reduces: Vec<Vec<TaskId>> = Vec::new();
            for k in 0..l.tp_ranks() {
                let reductions = [done(first, k), done(last, k)];
                let ids = (0..l.replicas())
                    .map(|r| self.embedding_all_reduce([first, last], r, k, reductions))
                    .collect();
                all_reduces.push(ids);
            }
            for (stage, k, mut reduced) in deferred {
                reduced.extend(&all_reduces[k as usize]);
                self.optimizer_steps(stage, k, &reduced);
            }
        }
    }

    /// The expert-data-parallel ranks of one CP rank: the ranks holding
    /// the same experts among its stage's tp * dp, tp * dp / ep.
    fn expert_data_parallel(&self) -> u32 {
        self.s.parallel.tp * self.s.parallel.dp / self.s.parallel.ep
    }

    /// The ranks that reduce each expert gradient: the expert-data-parallel
    /// ranks of every CP rank, which hold the same experts (as Megatron's
    /// expert-data-parallel group spans the CP ranks).
    fn expert_reduction_ranks(&self) -> u32 {
        self.expert_data_parallel() * self.s.parallel.cp
    }

    /// The routed experts' gradient buckets of `stage`, each reduced over
    /// the expert-data-parallel group: the ranks of the stage holding the
    /// same experts, every ep-th (model.md section 4c). In order on the DP
    /// stream, launched as the dense buckets are.
    fn expert_reductions(&mut self, stage: u32) -> Vec<TaskId> {
        let l = self.cluster.layout.clone();
        let edp = self.expert_data_parallel();
        let ep = self.s.parallel.ep;
        if self.t.moe.is_none() || self.expert_reduction_ranks() <= 1 {
            return Vec::new();
        }
        let groups: Vec<Vec<u32>> = match l.fidelity {
            Fidelity::Reduced => vec![vec![self.cluster.gpu(stage, 0, 0)]],
            Fidelity::Full => (0..ep)
                .map(|first| {
                    (0..edp)
                        .map(|i| {
                            let local = first + i * ep;
                            self.cluster.gpu(stage, local / l.tp, local % l.tp)
                        })
                        .collect()
                })
                .collect(),
        };
        // Every ep-th rank: gpus_per_node / ep of them share a node.
        let ranks = self.expert_reduction_ranks();
        let per_node = (l.gpus_per_node / ep).clamp(1, ranks);
        let (kind, op) = self.sharding.bucket_collective();
        let mut out = Vec::new();
        for members in groups {
            let owner = members[0];
            let last_bwd = self.g.compute_order[owner as usize].len() as u32 - 1;
            let mut previous: Option<TaskId> = None;
            for i in 0..self.buckets[owner as usize].expert_buckets.len() {
                let bucket = &self.buckets[owner as usize].expert_buckets[i];
                let (size, from) = (bucket.bytes, bucket.window_from);
                let c = self.cluster.group_collective(
                    &mut self.g,
                    &members,
                    kind,
                    size,
                    (ranks, per_node),
                );
                let meta = Meta::new(op, Phase::Step).chunk(i as u32);
                let id = self.g.placed_comm(&members, DP, c, meta);
                for &m in &members {
                    let dep = if self.s.overlap.dp {
                        self.buckets[m as usize].expert_buckets[i].ready
                    } else {
                        self.g.last_compute(m).expect("a training step computes")
                    };
                    self.g.dep(dep, id);
                }
                if let Some(p) = previous {
                    self.g.dep(p, id);
                }
                if i == 0 && from <= last_bwd {
                    self.g.set_window(id, from, last_bwd);
                }
                previous = Some(id);
                out.push(id);
            }
        }
        out
    }

    /// The optimizer step of each replica's GPU of TP rank `k` of `stage`,
    /// after every collective in `reduced` that its own GPU takes part in.
    fn optimizer_steps(&mut self, stage: u32, k: u32, reduced: &[TaskId]) {
        let l = self.cluster.layout.clone();
        for r in 0..l.replicas() {
            let m = self.cluster.gpu(stage, r, k);
            for &id in reduced {
                if self.g.members_of(id).contains(&m) {
                    self.g.block_compute_on(m, id);
                }
            }
            // A sharded optimizer updates its replica's share only (of the
            // routed experts, its share of the expert-data-parallel group).
            let b = &self.buckets[m as usize];
            let expert_shards = self
                .sharding
                .optimizer_shards(self.expert_reduction_ranks());
            let params = b.params / self.sharding.optimizer_shards(l.dp_group())
                + b.expert_params / expert_shards;
            let cost = self.roof.kernel(0.0, params * OPTIMIZER_BYTES_PER_PARAM);
            self.g.compute(
                m,
                cost.time_s,
                cost.memory_s,
                0.0,
                Meta::new(OpKind::Optimizer, Phase::Step),
            );
            self.sharding.after_optimizer(&mut self.g, stage, k, m);
        }
    }

    /// The tied embedding's gradient all-reduce between the GPUs of
    /// `stages` (first and last) of replica `r` and TP rank `k`, after each
    /// one's last backward op and each stage's last DP reduction
    /// (`reductions`), as Megatron-LM runs it once the gradient
    /// synchronisation has finished.
    fn embedding_all_reduce(
        &mut self,
        stages: [u32; 2],
        r: u32,
        k: u32,
        reductions: [Option<TaskId>; 2],
    ) -> TaskId {
        let pair = stages.map(|stage| self.cluster.gpu(stage, r, k));
        let same_node = self.cluster.layout.stages_share_node(stages[0], stages[1]);
        let size = embedding_sync::bytes_per_rank(self.s, self.t);
        let c = self
            .cluster
            .pair_all_reduce(&mut self.g, pair[0], pair[1], same_node, size);
        let meta = Meta::new(OpKind::EmbeddingAllReduce, Phase::Step);
        let id = self.g.placed_comm(&pair, DP, c, meta);
        for m in pair {
            let last_compute = self.g.last_compute(m).expect("a training step computes");
            self.g.dep(last_compute, id);
        }
        // Each GPU's optimizer also waits on its own stage's reductions
        // directly, so its idle time is charged to them there; the other
        // GPU of the pair only waits for that stage to finish, as in a
        // pipeline bubble, and is not charged for traffic it has no part in.
        for reduction in reductions.into_iter().flatten() {
            self.g.dep_unchained(reduction, id);
        }
        id
    }
}
