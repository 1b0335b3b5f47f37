//! CoCoNet's sliced pipeline boundary (Jangda et al. 2021; model.md
//! section 5). Megatron's scatter/gather reduces a stage's output across
//! its TP group (AllReduce), sends each rank's 1/t slice over its own NIC,
//! and gathers the slices on the receiving node, one step after another.
//! CoCoNet replaces the AllReduce with a ReduceScatter (each rank needs only
//! the slice it sends) and cuts all three steps into `overlap.pp_chunks`
//! pieces that run pipelined: piece j is sent while piece j + 1 is reduced
//! and piece j - 1 gathered, so NVLink and the NIC carry traffic at once
//! (and contend wherever they share a GPU's HBM and SMs).
//!
//! Forward boundaries take this form; backward ones keep scatter/gather.
//! The three steps run on the PP communication stream. A piece's slice
//! sends wait for its reduction, not for a compute op, so they take no
//! place of their own in the sender's hardware queues (`queues`).

use crate::collective::Collective;
use crate::model::axis::Axis;
use crate::model::op::OpKind;
use crate::workload::graph::cluster::Cluster;
use crate::workload::graph::task::{Meta, TaskId};
use crate::workload::graph::Graph;

/// One end of a boundary: a TP group on one node.
pub(crate) struct Group {
    /// Its simulated GPUs.
    pub members: Vec<u32>,
    /// Its NVLink ring.
    pub pattern: u32,
    /// The TP degree (ranks the collectives span).
    pub tp: u32,
    /// Bytes of the whole activation the boundary moves.
    pub activation_bytes: f64,
    /// Pieces the boundary is cut into.
    pub pieces: u32,
}

/// The group's collective of `kind` in pieces, each after the one before
/// (one stream). Pieces after the first flow through the same pipelined
/// ring and add one step of latency each.
fn in_pieces(
    g: &mut Graph,
    cluster: &Cluster,
    group: &Group,
    kind: Collective,
    meta: Meta,
) -> Vec<TaskId> {
    let op = match kind {
        Collective::ReduceScatter => OpKind::ReduceScatter,
        _ => OpKind::AllGather,
    };
    let call = cluster.node_call(
        Axis::Pp,
        kind,
        group.tp,
        group.activation_bytes / f64::from(group.pieces),
    );
    let mut ids: Vec<TaskId> = Vec::with_capacity(group.pieces as usize);
    for j in 0..group.pieces {
        let latency_s = if j == 0 {
            call.latency_s
        } else {
            cluster.pipelined_chunk_latency_s()
        };
        let id = g.comm(
            &group.members,
            Axis::Pp,
            group.pattern,
            call.wire_bytes,
            latency_s,
            meta.op(op).chunk(j).call(&call),
        );
        if let Some(&before) = ids.last() {
            g.dep(before, id);
        }
        ids.push(id);
    }
    ids
}

/// The sending end: the ReduceScatter of the stage's output in pieces, after
/// the GEMM that produced it, and each rank's slice sends after their piece.
/// Rank k's piece j is the send `first_sends[k] + j` (created up front, in
/// a row). Returns the reduction's pieces.
pub(crate) fn reduce_scatter_and_send(
    g: &mut Graph,
    cluster: &Cluster,
    group: &Group,
    first_sends: &[TaskId],
    meta: Meta,
) -> Vec<TaskId> {
    let reductions = in_pieces(g, cluster, group, Collective::ReduceScatter, meta);
    for &m in &group.members {
        if let Some(last) = g.last_compute(m) {
            g.dep(last, reductions[0]);
        }
    }
    for &first in first_sends {
        for (j, &reduced) in reductions.iter().enumerate() {
            let send = first + j as TaskId;
            g.dep(reduced, send);
            if j > 0 {
                g.dep(send - 1, send);
            }
        }
    }
    reductions
}

/// The receiving end: the AllGather of the slices in pieces, piece j after
/// every rank's piece-j send. Returns the gather's pieces.
pub(crate) fn gather(
    g: &mut Graph,
    cluster: &Cluster,
    group: &Group,
    first_sends: &[TaskId],
    meta: Meta,
) -> Vec<TaskId> {
    let gathers = in_pieces(g, cluster, group, Collective::AllGather, meta);
    for &first in first_sends {
        for (j, &gathered) in gathers.iter().enumerate() {
            g.dep(first + j as TaskId, gathered);
        }
    }
    gathers
}
