//! The CoCoNet micro-benchmark (Jangda et al. 2021): one GEMM, then the
//! AllReduce of its output over the TP group. With TP overlap the GEMM is
//! split into row chunks and chunk i's AllReduce runs while chunk i+1 computes.

use crate::collective::Collective;
use crate::model::axis::Axis;
use crate::model::fidelity::Fidelity;
use crate::model::op::{OpKind, Phase};
use crate::model::scenario::{MatmulAllreduce, Scenario};
use crate::workload::cost::roofline::{Roofline, SplitGemm};
use crate::workload::graph::cluster::Cluster;
use crate::workload::graph::task::Meta;
use crate::workload::graph::Graph;

/// Builds the step into `g`, an empty graph (see `workload::build_capped`).
pub(crate) fn build(mut g: Graph, s: &Scenario, mm: &MatmulAllreduce, fidelity: Fidelity) -> Graph {
    let cluster = Cluster::new(&mut g, s, fidelity);
    let roof = Roofline::of(&s.hardware, s.hardware_preset);
    let tp = s.parallel.tp;
    let chunks = if s.overlap.tp { s.overlap.tp_chunks } else { 1 };
    let gemm = SplitGemm {
        rows: f64::from(mm.m),
        inner: f64::from(mm.k),
        cols: f64::from(mm.n),
    };
    let cost = gemm.chunk(&roof, chunks);
    let output_bytes = 2.0 * f64::from(mm.m) * f64::from(mm.n) / f64::from(chunks);
    let kind = Collective::AllReduce;
    // CoCoNet's overlap runs the chunks' AllReduce as one fused kernel
    // (Jangda et al. 2021): NCCL's choice at the whole output's size, each
    // chunk a share of its bytes, and each chunk after the first one more
    // ring step (`pipelined_chunk_latency_s`). The published figures of
    // this micro-benchmark (published.md section 1) measure that kernel.
    let call = cluster
        .node_call(Axis::Tp, kind, tp, output_bytes * f64::from(chunks))
        .piece(chunks);
    let l = cluster.layout.clone();
    for replica in 0..l.replicas() {
        let members: Vec<u32> = (0..l.tp_ranks())
            .map(|k| cluster.gpu(0, replica, k))
            .collect();
        let pattern = cluster.nvlink_ring(&mut g, &members);
        // The chunks' AllReduces run in order on one communication stream.
        let mut previous = None;
        for i in 0..chunks {
            let meta = Meta::new(OpKind::Gemm, Phase::Forward).chunk(i);
            let computed: Vec<u32> = members
                .iter()
                .map(|&m| g.compute(m, cost.time_s, cost.memory_s, cost.tiles, cost.flops, meta))
                .collect();
            let id = g.comm(
                &members,
                Axis::Tp,
                pattern,
                call.wire_bytes,
                call.latency_s,
                meta.op(OpKind::AllReduce).call(&call),
            );
            for c in computed {
                g.dep(c, id);
            }
            if i > 0 {
                g.tasks[id as usize].set_latency_s(cluster.pipelined_chunk_latency_s());
            }
            if let Some(p) = previous.replace(id) {
                g.dep(p, id);
            }
            if i + 1 < chunks {
                let next = g.next_compute_index(members[0]);
                g.set_window(id, next, next);
            }
        }
    }
    g
}
