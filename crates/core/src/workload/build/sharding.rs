//! Sharded data parallelism (model.md section 4): the collectives that
//! Megatron's distributed optimizer and FSDP add to a step, and what each
//! GPU's compute stream waits for.
//!
//! - Distributed optimizer (ZeRO-1/2): the gradient buckets are
//!   reduce-scattered instead of all-reduced (the transformer's bucket
//!   path), and the updated parameters are all-gathered in buckets of the
//!   same size, in forward order. One simulated step stands for every step:
//!   with `param_gather` the gather of the previous step's update is issued
//!   at the start of this step, and a layer's first forward waits for the
//!   bucket that holds it, as Megatron-LM does with `--overlap-param-gather`;
//!   without it the gather runs after the optimizer step and the step ends
//!   when it does.
//! - FSDP (ZeRO-3): each layer's parameters are all-gathered before its
//!   forward and again before its backward (the full recomputation of a
//!   layer uses the backward's gather), and its gradients are
//!   reduce-scattered after its backward. With DP overlap the gather of the
//!   next layer is issued when the current layer starts (prefetch one layer
//!   ahead, FSDP's `BACKWARD_PRE` and forward prefetch) and the
//!   reduce-scatter runs under the next layer's backward; without it each
//!   gather and reduce-scatter runs between two layers while the compute
//!   stream waits. The embeddings form the root unit: gathered with the
//!   first layer, their gradients reduced in the bucket path.
//!
//! With experts, FSDP shards an MoE layer's routed experts over their
//! expert-data-parallel group and the rest of the layer over DP, as
//! torchtitan's per-parameter placement does
//! (torchtitan/distributed/fsdp.py:266-360: one `fully_shard` unit per
//! block, the experts' parameters on the expert-DP mesh, the others on the
//! DP mesh): the layer's gather and reduce-scatter are then two, one per
//! group, each waited for where the dense one is.
//!
//! Every DP collective here is one task shared by the replicas of its
//! group: the first replica built creates it, the others add their
//! dependencies to it.

use std::collections::HashMap;

use crate::collective::Collective;
use crate::model::axis::Axis;
use crate::model::op::{OpKind, Phase};
use crate::model::scenario::{DpSharding, GradSync, Precision, Scenario, Transformer};
use crate::workload::build::schedule::{stage_program, Pass};
use crate::workload::cost::expert_folding::ExpertFolding;
use crate::workload::cost::moe::expert_params_per_rank;
use crate::workload::cost::params::{dense_params_at, embedding_params_whole, layer_params};
use crate::workload::cost::stage_layers;
use crate::workload::graph::cluster::Cluster;
use crate::workload::graph::task::{Meta, TaskId};
use crate::workload::graph::Graph;

/// Bytes of a half-precision parameter, the width the all-gathers move.
pub(crate) const PARAM_GATHER_BYTES: f64 = 2.0;

/// Bytes of an fp8 parameter, the width of FSDP's gathers with torchtitan's
/// `enable_fsdp_float8_all_gather` (the layers' linear weights cast to
/// fp8 before the gather; the embeddings stay bf16).
const FP8_GATHER_BYTES: f64 = 1.0;

/// Which of a group's sharded collectives: FSDP's layer gather, its layer
/// reduce-scatter, or the distributed optimizer's parameter bucket gather.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Family {
    LayerGather,
    LayerReduceScatter,
    BucketGather,
    ExpertGather,
    ExpertReduceScatter,
}

/// One FSDP gather of a stage, in the order the stage needs them.
#[derive(Clone, Copy, Debug)]
struct Need {
    layer: u32,
    micro_batch: u32,
    phase: Phase,
}

/// A distributed-optimizer parameter bucket: its first layer in forward
/// order and its bytes.
#[derive(Clone, Copy, Debug)]
struct ParamBucket {
    first_layer: u32,
    bytes: f64,
}

/// The sharded collectives of the step being built.
pub(crate) struct Sharding {
    mode: DpSharding,
    overlap_dp: bool,
    param_gather: bool,
    grad_sync: GradSync,
    train: bool,
    micro_batches: u32,
    /// Each virtual stage's layers (`stage_layers::split`).
    stage_layers: Vec<std::ops::Range<u32>>,
    /// One layer's parameters on a TP rank.
    layer_params: f64,
    /// The embedding's (or output layer's) parameters on a TP rank.
    embedding_params: f64,
    grad_bytes: f64,
    bucket_bytes: f64,
    /// Bytes per parameter FSDP's layer gathers move: 1 with fp8 weights
    /// gathered (`overlap.fp8_all_gather`), else 2.
    layer_gather_bytes: f64,
    /// Collectives by (stage, TP rank, family, index), shared by the replicas.
    tasks: HashMap<(u32, u32, Family, u32), TaskId>,
    /// Reduce-scatters of each (stage, TP rank), which the optimizer awaits.
    reduce_scatters: HashMap<(u32, u32), Vec<TaskId>>,
    // The stage being built (one pipeline stage of one replica).
    stage: u32,
    owner_replica: bool,
    needs: Vec<Need>,
    next_need: usize,
    next_reduce_scatter: u32,
    /// Index of the owner's compute op where the previous gather's layer
    /// began: the next gather's window starts there.
    previous_layer_start: Option<u32>,
    /// Reduce-scatters whose window (the backward after them) is open,
    /// with the owner's compute index where it starts.
    open_reduce_scatters: Vec<(TaskId, u32)>,
    param_buckets: Vec<ParamBucket>,
    /// Index of the owner's compute op where the previous parameter
    /// bucket's first layer began.
    previous_bucket_start: u32,
    /// Embedding matrices the stage holds (input embedding, output layer).
    root_matrices: f64,
    /// Per layer of the model: its parameters on a TP rank that shard over
    /// DP (an MoE layer's without its routed experts), and whether it is an
    /// MoE layer.
    dense_params: Vec<f64>,
    moe_layers: Vec<bool>,
    /// An MoE layer's routed experts' parameters on a rank, which shard
    /// over the expert-data-parallel group.
    expert_params: f64,
    /// The experts' groups (Megatron-LM's MoE parallel folding).
    folding: ExpertFolding,
    /// FSDP's expert collectives by (stage, the group's first GPU,
    /// family, index), shared by the group's members.
    expert_tasks: HashMap<(u32, u32, Family, u32), TaskId>,
    /// The latest expert collective of each (stage, first GPU, family):
    /// the next waits for it (one stream per family).
    last_expert: HashMap<(u32, u32, Family), TaskId>,
}

impl Sharding {
    pub fn new(s: &Scenario, t: &Transformer) -> Self {
        let tp = s.parallel.tp;
        Self {
            mode: s.parallel.dp_sharding,
            overlap_dp: s.overlap.dp,
            param_gather: s.overlap.param_gather,
            grad_sync: s.overlap.grad_sync,
            train: t.mode == crate::model::scenario::Mode::Train,
            micro_batches: s.micro_batches(),
            stage_layers: stage_layers::split(&s.parallel, t.layers),
            layer_params: layer_params(t, tp),
            embedding_params: embedding_params_whole(t) / f64::from(tp),
            grad_bytes: f64::from(s.overlap.grad_bytes),
            bucket_bytes: s.overlap.bucket_mb * 1e6,
            layer_gather_bytes: if t.precision == Precision::Fp8 && s.overlap.fp8_all_gather {
                FP8_GATHER_BYTES
            } else {
                PARAM_GATHER_BYTES
            },
            tasks: HashMap::new(),
            reduce_scatters: HashMap::new(),
            stage: 0,
            owner_replica: true,
            needs: Vec::new(),
            next_need: 0,
            next_reduce_scatter: 0,
            previous_layer_start: None,
            open_reduce_scatters: Vec::new(),
            param_buckets: Vec::new(),
            previous_bucket_start: 0,
            root_matrices: 0.0,
            dense_params: (0..t.layers)
                .map(|layer| dense_params_at(t, tp, layer))
                .collect(),
            moe_layers: (0..t.layers)
                .map(|layer| t.moe.as_ref().is_some_and(|m| m.is_moe_layer(layer)))
                .collect(),
            expert_params: t
                .moe
                .as_ref()
                .map_or(0.0, |m| expert_params_per_rank(t, m, &ExpertFolding::of(s))),
            folding: ExpertFolding::of(s),
            expert_tasks: HashMap::new(),
            last_expert: HashMap::new(),
        }
    }

    /// Whether FSDP reduce-scatters each layer itself (the bucket path then
    /// carries only the embeddings).
    pub fn per_layer_gradients(&self) -> bool {
        self.mode == DpSharding::Full
    }

    /// The collective that reduces the gradient buckets.
    pub fn bucket_collective(&self) -> (Collective, OpKind) {
        match self.mode {
            DpSharding::None => (Collective::AllReduce, OpKind::AllReduce),
            DpSharding::Optimizer | DpSharding::Full => {
                (Collective::ReduceScatter, OpKind::ReduceScatter)
            }
        }
    }

    /// Replicas that share the optimizer step: each updates its 1/d.
    pub fn optimizer_shards(&self, dp: u32) -> f64 {
        match self.mode {
            DpSharding::None => 1.0,
            DpSharding::Optimizer | DpSharding::Full => f64::from(dp),
        }
    }

    /// Starts a stage's program: what it will gather, in order.
    /// `embedding_stage`: whether the stage holds the input embedding and
    /// a separate output layer.
    pub fn begin_stage(
        &mut self,
        s: &Scenario,
        replica: u32,
        stage: u32,
        embedding_stage: (bool, bool),
    ) {
        self.stage = stage;
        self.owner_replica = replica == 0;
        self.next_need = 0;
        self.next_reduce_scatter = 0;
        self.previous_layer_start = None;
        self.open_reduce_scatters.clear();
        self.previous_bucket_start = 0;
        self.root_matrices = f64::from(u8::from(embedding_stage.0) + u8::from(embedding_stage.1));
        let p = &s.parallel;
        let program = stage_program(
            p.schedule,
            stage,
            p.pp,
            self.micro_batches,
            p.virtual_stages,
            self.train,
        );
        let split = self.stage_layers.clone();
        let layers_of = |chunk: u32| {
            let vs = p.schedule.virtual_stage(stage, chunk, p.pp);
            split[vs as usize].clone()
        };
        self.needs.clear();
        if self.mode == DpSharding::Full {
            for step in &program {
                let layers = layers_of(step.chunk);
                let mb = step.micro_batch;
                match step.pass {
                    Pass::Forward => self.needs.extend(layers.map(|layer| Need {
                        layer,
                        micro_batch: mb,
                        phase: Phase::Forward,
                    })),
                    Pass::Backward | Pass::InputGrad => {
                        self.needs.extend(layers.rev().map(|layer| Need {
                            layer,
                            micro_batch: mb,
                            phase: Phase::Backward,
                        }))
                    }
                    Pass::WeightGrad | Pass::HeldWeightGrads => {}
                }
            }
        }
        self.param_buckets.clear();
        if self.mode == DpSharding::Optimizer && self.train {
            // Forward order: the chunks as the first micro-batch meets them.
            let mut chunks: Vec<u32> = (0..p.virtual_stages).collect();
            chunks.sort_by_key(|&c| p.schedule.virtual_stage(stage, c, p.pp));
            let weight = PARAM_GATHER_BYTES;
            let (input_embedding, output_layer) = embedding_stage;
            let mut pending = if input_embedding {
                self.embedding_params * weight
            } else {
                0.0
            };
            let mut first: Option<u32> = None;
            for layer in chunks.into_iter().flat_map(layers_of) {
                first.get_or_insert(layer);
                pending += self.layer_params * weight;
                if pending >= self.bucket_bytes {
                    self.param_buckets.push(ParamBucket {
                        first_layer: first.take().unwrap_or(layer),
                        bytes: std::mem::take(&mut pending),
                    });
                }
            }
            if output_layer {
                pending += self.embedding_params * weight;
            }
            if pending > 0.0 {
                match first {
                    Some(first_layer) => self.param_buckets.push(ParamBucket {
                        first_layer,
                        bytes: pending,
                    }),
                    // Only the output layer is left: it joins the last bucket.
                    None => match self.param_buckets.last_mut() {
                        Some(last) => last.bytes += pending,
                        None => self.param_buckets.push(ParamBucket {
                            first_layer: layers_of(0).start,
                            bytes: pending,
                        }),
                    },
                }
            }
        }
    }

    /// The DP group of `stage` for TP rank `k`: one GPU per simulated replica.
    fn group(cluster: &Cluster, stage: u32, k: u32) -> Vec<u32> {
        (0..cluster.layout.replicas())
            .map(|r| cluster.gpu(stage, r, k))
            .collect()
    }

    /// The shared collective `(family, index)` of TP rank `k`, created on
    /// first use after the family's previous one (one stream per family).
    #[allow(clippy::too_many_arguments)]
    fn task(
        &mut self,
        g: &mut Graph,
        cluster: &Cluster,
        k: u32,
        family: Family,
        index: u32,
        kind: Collective,
        size_bytes: f64,
        meta: Meta,
    ) -> TaskId {
        let key = (self.stage, k, family, index);
        if let Some(&id) = self.tasks.get(&key) {
            return id;
        }
        let members = Self::group(cluster, self.stage, k);
        let c = cluster.dp_collective(g, &members, kind, size_bytes);
        let id = g.placed_comm(&members, Axis::Dp, c, meta);
        if index > 0 {
            if let Some(&previous) = self.tasks.get(&(self.stage, k, family, index - 1)) {
                g.dep(previous, id);
            }
        }
        self.tasks.insert(key, id);
        if family == Family::LayerReduceScatter {
            self.reduce_scatters
                .entry((self.stage, k))
                .or_default()
                .push(id);
        }
        id
    }

    /// FSDP gather number `j` of the stage.
    fn layer_gather(&mut self, g: &mut Graph, cluster: &Cluster, k: u32, j: usize) -> TaskId {
        let need = self.needs[j];
        let mut bytes = self.dense_params[need.layer as usize] * self.layer_gather_bytes;
        // The root unit (embeddings) comes with the stage's first gather.
        if j == 0 {
            bytes += self.root_params() * PARAM_GATHER_BYTES;
        }
        let meta = Meta::new(OpKind::AllGather, need.phase)
            .mb(need.micro_batch)
            .layer(need.layer);
        self.task(
            g,
            cluster,
            k,
            Family::LayerGather,
            j as u32,
            Collective::AllGather,
            bytes,
            meta,
        )
    }

    /// The shared expert collective `(family, index)` of GPU `gpu`'s
    /// expert-data-parallel group, created on first use after the
    /// family's latest one; `None` where the group is one rank.
    #[allow(clippy::too_many_arguments)]
    fn expert_task(
        &mut self,
        g: &mut Graph,
        cluster: &Cluster,
        gpu: u32,
        family: Family,
        index: u32,
        kind: Collective,
        size_bytes: f64,
        meta: Meta,
    ) -> Option<TaskId> {
        let edp = self.folding.edp();
        if edp <= 1 {
            return None;
        }
        let info = &g.gpus[gpu as usize];
        let at = (self.stage, info.dp_rank, info.tp_rank);
        let members = cluster.expert_dp_members(at, &self.folding);
        let leader = members[0];
        let key = (self.stage, leader, family, index);
        if let Some(&id) = self.expert_tasks.get(&key) {
            return Some(id);
        }
        let per_node = self.folding.edp_per_node(cluster.layout.gpus_per_node);
        let c = cluster.group_collective(g, &members, kind, size_bytes, (edp, per_node));
        let id = g.placed_comm(&members, Axis::Dp, c, meta);
        if let Some(previous) = self.last_expert.insert((self.stage, leader, family), id) {
            g.dep(previous, id);
        }
        self.expert_tasks.insert(key, id);
        if family == Family::ExpertReduceScatter {
            let mut ks: Vec<u32> = members
                .iter()
                .map(|&m| g.gpus[m as usize].tp_rank)
                .collect();
            ks.dedup();
            for k in ks {
                let list = self.reduce_scatters.entry((self.stage, k)).or_default();
                if !list.contains(&id) {
                    list.push(id);
                }
            }
        }
        Some(id)
    }

    /// FSDP's gather number `j` of the stage's routed experts, on `gpu`'s
    /// expert-data-parallel group: `None` for a dense layer.
    fn expert_gather(
        &mut self,
        g: &mut Graph,
        cluster: &Cluster,
        gpu: u32,
        j: usize,
    ) -> Option<TaskId> {
        let need = self.needs[j];
        if !self.moe_layers[need.layer as usize] {
            return None;
        }
        let bytes = self.expert_params * self.layer_gather_bytes;
        let meta = Meta::new(OpKind::AllGather, need.phase)
            .mb(need.micro_batch)
            .layer(need.layer);
        self.expert_task(
            g,
            cluster,
            gpu,
            Family::ExpertGather,
            j as u32,
            Collective::AllGather,
            bytes,
            meta,
        )
    }

    /// Embedding parameters this stage holds: none, one or two matrices.
    fn root_params(&self) -> f64 {
        self.root_matrices * self.embedding_params
    }

    /// Before `layer`'s forward (or its backward, recomputation included)
    /// on the TP group `members`: FSDP waits for the layer's gather and,
    /// with DP overlap, issues the next one; the distributed optimizer's
    /// first forward of a bucket's first layer waits for that bucket.
    pub fn before_layer(
        &mut self,
        g: &mut Graph,
        cluster: &Cluster,
        members: &[u32],
        layer: u32,
        phase: Phase,
    ) {
        let start = g.next_compute_index(members[0]);
        match self.mode {
            DpSharding::Full => {
                let j = self.next_need;
                if j >= self.needs.len() {
                    return;
                }
                debug_assert_eq!(self.needs[j].layer, layer);
                self.next_need += 1;
                for (k, &m) in members.iter().enumerate() {
                    let k = k as u32;
                    let current = self.layer_gather(g, cluster, k, j);
                    let experts = self.expert_gather(g, cluster, m, j);
                    for id in std::iter::once(current).chain(experts) {
                        if !self.overlap_dp || j == 0 {
                            match g.last_compute(m) {
                                Some(last) => g.dep(last, id),
                                None => g.launch_first(id),
                            }
                        }
                        g.block_compute_on(m, id);
                    }
                    if self.owner_replica {
                        // Its window: the previous layer's compute, under
                        // which the prefetch runs.
                        if let Some(from) = self.previous_layer_start.filter(|&f| start > f) {
                            g.set_window(current, from, start - 1);
                        }
                    }
                    if self.overlap_dp && j + 1 < self.needs.len() {
                        let next = self.layer_gather(g, cluster, k, j + 1);
                        let experts = self.expert_gather(g, cluster, m, j + 1);
                        for id in std::iter::once(next).chain(experts) {
                            match g.last_compute(m) {
                                Some(last) => g.dep(last, id),
                                // Issued as the step's first layer starts.
                                None => g.launch_first(id),
                            }
                        }
                    }
                }
                self.previous_layer_start = Some(start);
            }
            DpSharding::Optimizer if phase == Phase::Forward => {
                let Some(b) = self
                    .param_buckets
                    .iter()
                    .position(|bucket| bucket.first_layer == layer)
                else {
                    return;
                };
                let key = (self.stage, 0, Family::BucketGather, b as u32);
                if self.tasks.contains_key(&key) && self.owner_replica {
                    // A later micro-batch's forward: the bucket has arrived.
                    return;
                }
                let bytes = self.param_buckets[b].bytes;
                let meta = Meta::new(OpKind::AllGather, Phase::Forward)
                    .mb(0)
                    .layer(layer)
                    .chunk(b as u32);
                for (k, &m) in members.iter().enumerate() {
                    let id = self.task(
                        g,
                        cluster,
                        k as u32,
                        Family::BucketGather,
                        b as u32,
                        Collective::AllGather,
                        bytes,
                        meta,
                    );
                    if self.param_gather {
                        // Issued as the step starts, before any compute.
                        g.launch_first(id);
                        g.block_compute_on(m, id);
                    }
                    // Its window: the forward since the previous bucket's first layer.
                    if self.owner_replica && start > self.previous_bucket_start {
                        g.set_window(id, self.previous_bucket_start, start - 1);
                    }
                }
                self.previous_bucket_start = start;
            }
            DpSharding::Optimizer | DpSharding::None => {}
        }
    }

    /// After `layer`'s gradients of micro-batch `mb` are computed (its
    /// backward, or its weight gradient when the backward is split): FSDP
    /// reduce-scatters them, on every micro-batch or on the last only.
    pub fn after_layer_grads(
        &mut self,
        g: &mut Graph,
        cluster: &Cluster,
        members: &[u32],
        layer: u32,
        mb: u32,
    ) {
        if self.mode != DpSharding::Full || !self.train {
            return;
        }
        if self.grad_sync == GradSync::LastMicroBatch && mb + 1 != self.micro_batches {
            return;
        }
        let now = g.next_compute_index(members[0]);
        self.close_reduce_scatter_windows(g, now);
        let index = self.next_reduce_scatter;
        self.next_reduce_scatter += 1;
        let bytes = self.dense_params[layer as usize] * self.grad_bytes;
        let meta = Meta::new(OpKind::ReduceScatter, Phase::Backward)
            .mb(mb)
            .layer(layer);
        let moe = self.moe_layers[layer as usize];
        for (k, &m) in members.iter().enumerate() {
            let id = self.task(
                g,
                cluster,
                k as u32,
                Family::LayerReduceScatter,
                index,
                Collective::ReduceScatter,
                bytes,
                meta,
            );
            let experts = if moe {
                let bytes = self.expert_params * self.grad_bytes;
                self.expert_task(
                    g,
                    cluster,
                    m,
                    Family::ExpertReduceScatter,
                    index,
                    Collective::ReduceScatter,
                    bytes,
                    meta,
                )
            } else {
                None
            };
            for id in std::iter::once(id).chain(experts) {
                if let Some(last) = g.last_compute(m) {
                    g.dep(last, id);
                }
                if !self.overlap_dp {
                    g.block_compute_on(m, id);
                }
            }
            if self.owner_replica {
                self.open_reduce_scatters.push((id, now));
            }
        }
    }

    /// A reduce-scatter's window is the backward compute after it, up to
    /// the next one's launch (or the stage's end).
    fn close_reduce_scatter_windows(&mut self, g: &mut Graph, now: u32) {
        for (id, from) in std::mem::take(&mut self.open_reduce_scatters) {
            if now > from {
                g.set_window(id, from, now - 1);
            }
        }
    }

    /// The stage's program is built.
    pub fn end_stage(&mut self, g: &mut Graph, members: &[u32]) {
        let now = g.next_compute_index(members[0]);
        self.close_reduce_scatter_windows(g, now);
    }

    /// FSDP reduce-scatters the optimizer step of `stage`, TP rank `k`, waits for.
    pub fn reduce_scatters(&self, stage: u32, k: u32) -> &[TaskId] {
        self.reduce_scatters
            .get(&(stage, k))
            .map_or(&[], Vec::as_slice)
    }

    /// After GPU `gpu`'s optimizer step (`stage`, TP rank `k`): without
    /// `param_gather` the distributed optimizer's parameter gathers start
    /// now, and the step ends when they do.
    pub fn after_optimizer(&self, g: &mut Graph, stage: u32, k: u32, gpu: u32) {
        if self.mode != DpSharding::Optimizer || self.param_gather {
            return;
        }
        let Some(optimizer) = g.last_compute(gpu) else {
            return;
        };
        let mut b = 0;
        while let Some(&id) = self.tasks.get(&(stage, k, Family::BucketGather, b)) {
            g.dep(optimizer, id);
            b += 1;
        }
    }
}
