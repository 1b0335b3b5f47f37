//! The GPT-style transformer step, 3D parallel (model.md sections 4 and 5):
//! the builder's state, and each pipeline stage's program built in schedule
//! order, step by step, with the overlap switch of each axis deciding what
//! the compute stream waits for. The concepts a step is made of live in the
//! submodules, each adding its methods to `Builder`: a layer's op sequence
//! (`layer`), the TP collectives around its GEMMs (`tp_modes`), the
//! attention core and context parallelism's exchange (`context`), FP8's
//! scale reductions (`fp8_scales`), the
//! expert all-to-alls (`moe_layer`), the pipeline sends (`pipeline`), and
//! the gradient buckets, their DP and expert reductions and the optimizer
//! (`grad_buckets`).

use crate::model::ep_overlap::EpOptions;
use crate::model::fidelity::Fidelity;
use crate::model::op::{OpKind, Phase};
use crate::model::scenario::{Mode, Recompute, Scenario, Transformer};
use crate::workload::build::fusion::FusedLayers;
use crate::workload::build::schedule::merged_passes::{ep_form, merged_order, merges_passes};
use crate::workload::build::schedule::{period_marks, stage_program, Pass, Step};
use crate::workload::build::sharding::Sharding;
use crate::workload::cost::expert_folding::ExpertFolding;
use crate::workload::cost::layer_cost::{layer_cost, LayerCost};
use crate::workload::cost::params::embedding_params_whole;
use crate::workload::cost::roofline::{OpCost, Roofline};
use crate::workload::cost::stage_layers;
use crate::workload::cost::tp_form::TpForm;
use crate::workload::graph::cluster::Cluster;
use crate::workload::graph::task::{Meta, TaskId};
use crate::workload::graph::Graph;

mod buckets;
mod context;
mod ep_stream;
mod fp8_scales;
mod grad_buckets;
mod layer;
mod layer_pairs;
mod module_recompute;
mod moe_layer;
mod pipeline;
mod tp_modes;

use buckets::GpuBuckets;
use ep_stream::EpStream;

/// The step being built into `g`, with the state of the group being
/// built (`members`: one pipeline stage of one DP replica) that the
/// submodules' methods share.
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
    /// Each virtual stage's layers (`stage_layers::split`): the layout's,
    /// or the even split.
    stage_layers: Vec<std::ops::Range<u32>>,
    /// The micro-batches whose gradients reaching the first stage mark the
    /// steady state's periods (`schedule::period_marks`), if any.
    period_marks: Option<[u32; 3]>,
    /// Pipeline sends, created up front so that both ends can refer to them.
    sends: Vec<TaskId>,
    /// Each GPU's gradients and parameters (`grad_buckets`).
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
    /// Per member of the group, where it posts the receives of the step
    /// being built (`post_receives`): the compute op before it.
    posted: Vec<Option<TaskId>>,
    /// Whether the stage being built pairs its steady state's steps
    /// (`pairs_steps`).
    pairs_steps: bool,
    /// Whether the forward being built sends its output with the backward
    /// after it (`sends_with_next`), and that send once held: (replica,
    /// virtual stage, micro-batch).
    send_with_next: bool,
    held_send: Option<(u32, u32, u32)>,
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
    moe_cost: Option<crate::workload::cost::moe::MoeCost>,
    /// One all-to-all's traffic from a rank, when the EP group spans ranks.
    ep_traffic: Option<crate::workload::cost::moe::AllToAllTraffic>,
    /// Bytes of the expert-TP group's gather after each dispatch and
    /// reduce-scatter before each combine, whole (zero without one).
    etp_gather_bytes: f64,
    /// The stage's expert groups (Megatron-LM's MoE parallel folding).
    folding: ExpertFolding,
    /// The all-to-alls the pass being built launched and still awaits.
    ep_stream: EpStream,
    /// The EP overlap options the scenario runs (`merged_passes::ep_form`),
    /// read once.
    ep_options: EpOptions,
    /// Whether a forward and the backward after it are built as one pass
    /// (`merged_passes::merges_passes`), read once.
    merges_passes: bool,
    /// The (stage, replica) whose group is being built.
    group_at: (u32, u32),
}

/// Builds the step into `g`, an empty graph (see `workload::build_capped`).
pub(crate) fn build(mut g: Graph, s: &Scenario, t: &Transformer, fidelity: Fidelity) -> Graph {
    let cluster = Cluster::new(&mut g, s, fidelity);
    let mut roof = Roofline::with_precision(&s.hardware, s.hardware_preset, t.precision);
    if s.fsdp_gathers_fp8_weights() {
        // FSDP shards each weight over the DP group, dp x cp ranks (model.md 4d).
        roof.fp8_weight_shards = f64::from(s.parallel.dp * s.parallel.cp);
    }
    let tp = s.parallel.tp;
    let cost = layer_cost(t, tp, s.parallel.cp, &roof);
    let form = TpForm::of(s, t);
    let tp_on = form.on;
    let virtual_stages = s.parallel.virtual_stages;
    let gpus = g.gpus.len();
    let folding = ExpertFolding::of(s);
    // Each CP rank routes its own seq / cp tokens (model.md 4c, as the
    // layer costs count them).
    let t_local = Transformer {
        seq: t.seq / s.parallel.cp.max(1),
        ..t.clone()
    };
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
        stage_layers: stage_layers::split(&s.parallel, t.layers),
        period_marks: period_marks(s),
        sends: Vec::new(),
        buckets: (0..gpus).map(|_| GpuBuckets::default()).collect(),
        bucket_bytes: s.overlap.bucket_mb * 1e6,
        members: Vec::new(),
        tp_pattern: 0,
        last_tp_collective: None,
        cp_step: (0, 0.0),
        last_cp_collective: None,
        posted: Vec::new(),
        pairs_steps: false,
        send_with_next: false,
        held_send: None,
        open_windows: Vec::new(),
        sliced: s.sliced_boundary_pieces(t),
        boundary_layer: None,
        fused: FusedLayers {
            on: s.overlap.fuse && tp > 1,
            ..FusedLayers::default()
        },
        sharding: Sharding::new(s, t),
        moe_cost: t.moe.as_ref().map(|m| {
            crate::workload::cost::moe::moe_cost(
                &t_local,
                m,
                tp,
                &folding,
                &Roofline::of(&s.hardware, s.hardware_preset),
            )
        }),
        ep_traffic: t.moe.as_ref().filter(|_| folding.ep > 1).map(|m| {
            let gpus_per_node = s.hardware.gpus_per_node;
            let group = crate::workload::cost::moe::A2aGroup::of(m, &folding, gpus_per_node);
            let tokens = crate::workload::cost::moe::tokens_per_rank(&t_local, tp);
            crate::workload::cost::moe::expert_all_to_all(
                &t_local,
                m,
                &folding,
                gpus_per_node,
                tokens,
            )
            .at_busiest(m.imbalance, m.dispatcher, group.place.per_node)
        }),
        etp_gather_bytes: t.moe.as_ref().map_or(0.0, |m| {
            crate::workload::cost::moe::etp_gather_bytes(&t_local, m, tp, &folding)
        }),
        folding,
        ep_stream: Default::default(),
        ep_options: ep_form(s),
        merges_passes: merges_passes(s),
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
        self.stage_layers[vs as usize].clone()
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

    /// Whether `stage` holds the input embedding (the first virtual stage)
    /// and an output layer apart from it (the last).
    fn holds_embeddings(&self, stage: u32) -> (bool, bool) {
        let (schedule, pp) = (self.s.parallel.schedule, self.cluster.layout.pp);
        let last_vs = self.virtual_stages_total() - 1;
        (
            schedule.stage_and_chunk(0, pp).0 == stage,
            self.separate_output_layer() && schedule.stage_and_chunk(last_vs, pp).0 == stage,
        )
    }

    /// The program of `stage` in `replica`, built for its TP group: the
    /// steps in schedule order, each closing the windows of the sends
    /// before it, then the stage's parameters handed to its optimizer.
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
        self.posted = vec![None; members.len()];
        self.last_tp_collective = None;
        self.last_cp_collective = None;
        let train = self.t.mode == Mode::Train;
        let embeddings = self.holds_embeddings(stage);
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
        let program = merged_order(self.s, program);
        self.pairs_steps = self.pairs_steps(&program);
        self.group_at = (stage, replica);
        let mut i = 0;
        while i < program.len() {
            if self.g.over_cap() {
                break;
            }
            let step = program[i];
            self.post_receives(step, i.checked_sub(1).map(|p| program[p]));
            // One unit's FLOPs: those of the marked period's micro-batch,
            // neither the step's first nor its last.
            let unit = |step: &Step| self.period_marks.is_some_and(|k| step.micro_batch == k[1]);
            if let Some(&next) = program.get(i + 1).filter(|next| self.merges(&step, next)) {
                // A merged pass sends each output as its pass ends.
                self.send_with_next = false;
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
            self.send_with_next = self.sends_with_next(step, program.get(i + 1).copied());
            self.step(replica, stage, step);
            if step.pass != Pass::Forward {
                if let Some((replica, vs, mb)) = self.held_send.take() {
                    self.send(replica, vs, mb, Pass::Forward);
                }
            }
            for (&m, (model, executed)) in members.iter().zip(before) {
                let (now, added) = (self.g.flops[m as usize], &mut self.g.unit_flops[m as usize]);
                added.0 += now.0 - model;
                added.1 += now.1 - executed;
            }
            self.close_windows();
            i += 1;
        }
        self.sharding.end_stage(&mut self.g, &members);
        self.hand_over_params(stage, &members);
    }

    /// One step of the program: a forward, a backward (whole or B), or the
    /// held W of its layers over the micro-batches it covers.
    fn step(&mut self, replica: u32, stage: u32, step: Step) {
        let vs = self
            .s
            .parallel
            .schedule
            .virtual_stage(stage, step.chunk, self.cluster.layout.pp);
        let last_vs = self.virtual_stages_total() - 1;
        let mb = step.micro_batch;
        let layers = self.layers_of(vs);
        // A stage of the embedding or the loss alone has no layers: no
        // fusion to bound, and no last layer whose AllReduce a sliced
        // boundary's ReduceScatter replaces.
        let last_layer = layers.end.checked_sub(1).filter(|_| !layers.is_empty());
        self.fused.first = layers.start;
        self.fused.last = last_layer.unwrap_or(layers.start);
        let sliced_out = step.pass == Pass::Forward && vs < last_vs && self.sliced.is_some();
        self.boundary_layer = last_layer.filter(|_| sliced_out);
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
                    self.recompute_modules(layer, mb);
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

    /// Sharded DP's hook before a layer's forward or backward (`sharding`).
    fn before_layer(&mut self, layer: u32, phase: Phase) {
        let members = std::mem::take(&mut self.members);
        self.sharding
            .before_layer(&mut self.g, &self.cluster, &members, layer, phase);
        self.members = members;
    }

    fn compute_all(&mut self, cost: OpCost, meta: Meta) {
        for i in 0..self.members.len() {
            let m = self.members[i];
            self.g
                .compute(m, cost.time_s, cost.memory_s, cost.tiles, cost.flops, meta);
        }
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
}
