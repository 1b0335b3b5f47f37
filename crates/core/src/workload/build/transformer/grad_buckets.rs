//! Gradients, from the op that finishes them to the optimizer: each GPU's
//! gradients fill DP buckets as the backward finishes them, the routed
//! experts' their own buckets; each bucket is reduced across the DP
//! replicas (an expert bucket across the expert-data-parallel group,
//! model.md section 4c) on the DP stream, launched as soon as it is ready
//! with DP overlap, after the backward without. The optimizer step waits
//! for every reduction, and on the stages holding the tied embedding's two
//! copies for their all-reduce (`embedding_sync`).

use super::buckets::Bucket;
use super::Builder;
use crate::model::axis::Axis;
use crate::model::fidelity::Fidelity;
use crate::model::op::{OpKind, Phase};
use crate::workload::cost::embedding_sync;
use crate::workload::cost::fp8_casts::FP8_SCALE_BYTES_PER_PARAM;
use crate::workload::cost::moe::expert_params_per_rank;
use crate::workload::cost::params::{dense_params_at, OPTIMIZER_BYTES_PER_PARAM};
use crate::workload::graph::cluster::Cluster;
use crate::workload::graph::task::Placed;
use crate::workload::graph::task::{Meta, TaskId};
use crate::workload::graph::Graph;

impl Builder<'_> {
    /// At the end of `stage`'s program: the parameters each of its GPUs
    /// (`members`) holds, which its optimizer step updates, and its last
    /// buckets flushed however little they hold.
    pub(super) fn hand_over_params(&mut self, stage: u32, members: &[u32]) {
        let l = self.cluster.layout.clone();
        let schedule = self.s.parallel.schedule;
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
                .map(|_| expert_params_per_rank(self.t, m, &self.folding))
                .sum(),
            None => 0.0,
        };
        let layer_params = params;
        let (input, output) = self.holds_embeddings(stage);
        if input {
            params += vocab_params;
        }
        if output {
            params += vocab_params;
        }
        for &m in members {
            self.buckets[m as usize].params = params;
            self.buckets[m as usize].layer_params = layer_params;
            self.buckets[m as usize].expert_params = expert_params;
            self.flush_bucket(m);
            self.flush_expert_bucket(m);
        }
    }

    /// A layer's gradients of micro-batch `mb` are computed: FSDP
    /// reduce-scatters them itself; otherwise the last micro-batch's fill
    /// the DP bucket.
    pub(super) fn layer_grads_done(&mut self, layer: u32, mb: u32) {
        if self.sharding.per_layer_gradients() {
            let members = std::mem::take(&mut self.members);
            self.sharding
                .after_layer_grads(&mut self.g, &self.cluster, &members, layer, mb);
            self.members = members;
        } else if mb + 1 == self.micro_batches {
            self.grads_final(dense_params_at(self.t, self.tp, layer));
            if let Some(m) = self.t.moe.as_ref().filter(|m| m.is_moe_layer(layer)) {
                let experts = expert_params_per_rank(self.t, m, &self.folding);
                self.expert_grads_final(experts);
            }
        }
    }

    /// Gradients of `params` (per rank) are final: fill the DP bucket.
    pub(super) fn grads_final(&mut self, params: f64) {
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

    fn flush_bucket(&mut self, gpu: u32) {
        let bytes = std::mem::take(&mut self.buckets[gpu as usize].pending_bytes);
        if let Some(bucket) = self.bucket_ready(gpu, bytes) {
            self.buckets[gpu as usize].buckets.push(bucket);
        }
    }

    fn flush_expert_bucket(&mut self, gpu: u32) {
        let bytes = std::mem::take(&mut self.buckets[gpu as usize].expert_pending_bytes);
        if let Some(bucket) = self.bucket_ready(gpu, bytes) {
            self.buckets[gpu as usize].expert_buckets.push(bucket);
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
    pub(super) fn dp_reduction_and_optimizer(&mut self) {
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
                let reductions = if l.dp_group() > 1 {
                    let (kind, _) = self.sharding.bucket_collective();
                    self.reduce_buckets(&members, false, |cluster, g, size| {
                        cluster.dp_collective(g, &members, kind, size)
                    })
                } else {
                    Vec::new()
                };
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

    /// The expert-data-parallel degree: the ranks of a stage holding the
    /// same expert shard, tp * cp * dp / (ep * etp): the CP ranks join it.
    fn expert_data_parallel(&self) -> u32 {
        self.folding.edp()
    }

    /// The routed experts' gradient buckets of `stage`, each reduced over
    /// the expert-data-parallel group: the ranks of the stage holding the
    /// same expert shard, every (ep * etp)-th (`ExpertFolding::edp_group`,
    /// model.md section 4c). In order on the DP stream, launched as the
    /// dense buckets are.
    fn expert_reductions(&mut self, stage: u32) -> Vec<TaskId> {
        let l = self.cluster.layout.clone();
        let folding = self.folding;
        let edp = folding.edp();
        if self.t.moe.is_none() || edp <= 1 {
            return Vec::new();
        }
        // Each simulated GPU's group, its simulated members (CP rank 0: the
        // rest are their mirrors, model.md 7), each group once.
        let groups: Vec<Vec<u32>> = match l.fidelity {
            Fidelity::Reduced => vec![vec![self.cluster.gpu(stage, 0, 0)]],
            Fidelity::Full => {
                let mut groups: Vec<Vec<u32>> = Vec::new();
                for r in 0..l.replicas() {
                    for k in 0..l.tp_ranks() {
                        let members = self.cluster.expert_dp_members((stage, r, k), &folding);
                        if !groups.contains(&members) {
                            groups.push(members);
                        }
                    }
                }
                groups
            }
        };
        let per_node = folding.edp_per_node(l.gpus_per_node);
        let (kind, _) = self.sharding.bucket_collective();
        let mut out = Vec::new();
        for members in groups {
            out.extend(self.reduce_buckets(&members, true, |cluster, g, size| {
                cluster.group_collective(g, &members, kind, size, (edp, per_node))
            }));
        }
        out
    }

    /// The reductions of `members`' buckets (the routed experts' if
    /// `experts`), each the collective `place` lays over them, in order on
    /// the DP stream: launched when ready with DP overlap, after the last
    /// backward op without. Their owner's buckets give the sizes and the
    /// window: the backward compute after the first bucket is ready.
    fn reduce_buckets(
        &mut self,
        members: &[u32],
        experts: bool,
        place: impl Fn(&Cluster, &mut Graph, f64) -> Placed,
    ) -> Vec<TaskId> {
        let (_, op) = self.sharding.bucket_collective();
        let owner = members[0];
        let last_bwd = self.g.compute_order[owner as usize].len() as u32 - 1;
        let mut previous: Option<TaskId> = None;
        let mut out = Vec::new();
        for i in 0..self.buckets[owner as usize].of(experts).len() {
            let bucket = &self.buckets[owner as usize].of(experts)[i];
            let (size, from) = (bucket.bytes, bucket.window_from);
            let c = place(&self.cluster, &mut self.g, size);
            let meta = Meta::new(op, Phase::Step).chunk(i as u32);
            let id = self.g.placed_comm(members, Axis::Dp, c, meta);
            for &m in members {
                let dep = if self.s.overlap.dp {
                    self.buckets[m as usize].of(experts)[i].ready
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
            let expert_shards = self.sharding.optimizer_shards(self.expert_data_parallel());
            let params = b.params / self.sharding.optimizer_shards(l.dp_group())
                + b.expert_params / expert_shards;
            // With FSDP's fp8 gathers the step also reads each weight shard
            // for its scale, once per step (`fp8_casts`).
            let shards = self.roof.fp8_weight_shards;
            let scale_bytes = if self.roof.fp8() && shards > 1.0 {
                FP8_SCALE_BYTES_PER_PARAM * b.layer_params / shards
            } else {
                0.0
            };
            let cost = self
                .roof
                .memory(params * OPTIMIZER_BYTES_PER_PARAM + scale_bytes);
            self.g.compute(
                m,
                cost.time_s,
                cost.memory_s,
                cost.tiles,
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
        let id = self.g.placed_comm(&pair, Axis::Dp, c, meta);
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
