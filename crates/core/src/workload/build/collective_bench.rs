//! One collective over every GPU of the hardware (`workload.kind:
//! "collective"`), as nccl-tests runs it: the call NCCL's tuning model
//! picks for its size (`collective_cost`), laid out on the cluster's links
//! as a DP collective over all the GPUs, and nothing else in the step.

use crate::model::axis::Axis;
use crate::model::fidelity::Fidelity;
use crate::model::op::{OpKind, Phase};
use crate::model::scenario::{CollectiveBench, CollectiveOp, Scenario};
use crate::workload::graph::cluster::Cluster;
use crate::workload::graph::task::Meta;
use crate::workload::graph::Graph;

pub(crate) fn build(mut g: Graph, s: &Scenario, c: &CollectiveBench, fidelity: Fidelity) -> Graph {
    let cluster = Cluster::new(&mut g, s, fidelity);
    let call = cluster.bench_call(c.collective, c.bytes);
    let l = &cluster.layout;
    let members: Vec<u32> = (0..l.replicas()).map(|r| cluster.gpu(0, r, 0)).collect();
    let placed = cluster.dp_placed(&mut g, &members, call);
    let op = match c.collective {
        CollectiveOp::AllReduce => OpKind::AllReduce,
        CollectiveOp::ReduceScatter => OpKind::ReduceScatter,
        // An all-to-all copies as an all-gather does; the op list has no
        // kind of its own for it.
        CollectiveOp::AllGather | CollectiveOp::AllToAll => OpKind::AllGather,
    };
    g.placed_comm(&members, Axis::Dp, placed, Meta::new(op, Phase::Forward));
    g
}
