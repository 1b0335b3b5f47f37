//! Pipeline parallelism's sends between virtual stages: every send of the
//! step created up front, one per TP rank, micro-batch and direction, so
//! that the sender's and the receiver's programs, built stage by stage,
//! both refer to it; the receiving end's wait (after the TP group gathers
//! the activation, with scatter/gather); and each send's window, the
//! sender's next step. A sliced boundary's ReduceScatter, piece sends and
//! AllGather come from `pp_boundary`.
//!
//! A send larger than NCCL's staging buffer rendezvous with its receive
//! (model.md 4): it moves only once the receiver has posted the matching
//! receive at its own point of the schedule.

use super::Builder;
use crate::collective::Collective;
use crate::model::axis::Axis;
use crate::model::op::{OpKind, Phase};
use crate::model::scenario::{Mode, Schedule};
use crate::workload::build::pp_boundary::{self, Group};
use crate::workload::build::schedule::{Pass, Step};
use crate::workload::graph::task::{Meta, TaskId};

/// NCCL's staging slots per connection (`NCCL_STEPS`, NCCL 2.21.5
/// src/include/device.h:22): a sender runs at most this many chunks ahead of
/// a receiver that has not posted its receive (src/transport/p2p.cc:720).
const NCCL_STEPS: f64 = 8.0;
/// NCCL's point-to-point chunk between GPUs of one node over NVLink
/// (`NCCL_P2P_NVL_CHUNKSIZE`, 512 KiB) and across nodes
/// (`NCCL_P2P_NET_CHUNKSIZE`, 128 KiB), its defaults in NCCL 2.21.5
/// src/init.cc:549-566.
const P2P_NVL_CHUNK_BYTES: f64 = 512.0 * 1024.0;
const P2P_NET_CHUNK_BYTES: f64 = 128.0 * 1024.0;
/// Channels NCCL gives one peer for point-to-point: the fewest over every
/// pair of the communicator, rounded up to a power of two (NCCL 2.21.5
/// src/graph/paths.cc:705-763): 2 per NIC for a peer across nodes, 2 per
/// NVLink's worth of bandwidth over NVLink. A pipeline that crosses nodes
/// gets 2 for every peer, its NVLink ones too. One inside a node gets more
/// (up to the communicator's channels), which this lower count leaves out:
/// there some sends are held that NCCL would stage (docs/validation.md,
/// known gaps).
const P2P_CHANNELS_PER_PEER: f64 = 2.0;

/// Bytes a send may stage at a receiver that has not posted its receive:
/// every channel's slots for the peer, each one chunk.
fn staging_bytes(same_node: bool) -> f64 {
    let chunk = if same_node {
        P2P_NVL_CHUNK_BYTES
    } else {
        P2P_NET_CHUNK_BYTES
    };
    P2P_CHANNELS_PER_PEER * NCCL_STEPS * chunk
}

/// Where a pipeline send leaves and arrives (`Builder::ends`).
struct SendEnds {
    from_stage: u32,
    /// The sender's model chunk.
    chunk: u32,
    to_stage: u32,
    same_node: bool,
}

impl Builder<'_> {
    /// Whether pipeline activations travel as 1/t slices gathered on arrival.
    fn gathers_on_arrival(&self) -> bool {
        self.s.parallel.scatter_gather && self.tp > 1 && !self.t.sequence_parallel
    }

    /// Bytes of one send, per TP rank: the whole activation, or its 1/t
    /// slice when sequence parallelism shards it or scatter/gather splits it
    /// for the trip.
    fn send_bytes(&self) -> f64 {
        let full = self.cost.activation_bytes;
        if self.t.sequence_parallel || (self.s.parallel.scatter_gather && self.tp > 1) {
            full / f64::from(self.tp)
        } else {
            full
        }
    }

    /// Where the send of one TP rank's group from virtual stage `from_vs`
    /// in the direction of `pass` sits in `sends`.
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
    pub(super) fn create_sends(&mut self) {
        let l = self.cluster.layout.clone();
        let vst = self.virtual_stages_total();
        let train = self.t.mode == Mode::Train;
        let mut pattern_cache = rustc_hash::FxHashMap::default();
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
                                    let ends = self.ends(from_vs, to_vs);
                                    let from = self.cluster.gpu(ends.from_stage, replica, k);
                                    let to = self.cluster.gpu(ends.to_stage, replica, k);
                                    let same_node = ends.same_node;
                                    let (pattern, latency) =
                                        *pattern_cache.entry((from, to)).or_insert_with(|| {
                                            self.cluster.send(&mut self.g, from, to, same_node)
                                        });
                                    let phase = match pass {
                                        Pass::Forward => Phase::Forward,
                                        _ => Phase::Backward,
                                    };
                                    let meta =
                                        Meta::new(OpKind::Send, phase).mb(mb).chunk(ends.chunk);
                                    // A sliced boundary's sends, one per piece, in a row.
                                    let pieces = self.pieces(pass);
                                    let piece_bytes = self.piece_bytes(pass);
                                    let mut send = || {
                                        self.g.comm(
                                            &[from, to],
                                            Axis::Pp,
                                            pattern,
                                            piece_bytes,
                                            latency,
                                            meta,
                                        )
                                    };
                                    let first = send();
                                    for _ in 1..pieces {
                                        send();
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

    /// The gradient of `mb` arriving at the first stage of the first replica
    /// marks a period of the steady state (`Graph::period_marks`) when `mb`
    /// is one of the marked micro-batches: its pipeline send is marked.
    pub(super) fn mark_period(&mut self, replica: u32, vs: u32, mb: u32) {
        if replica == 0 && vs == 0 && self.period_marks.is_some_and(|k| k.contains(&mb)) {
            let send = self.sends[self.send_index(0, 0, 1, mb, Pass::Backward)];
            self.g.period_marks.push(send);
        }
    }

    /// The receiving end of a pipeline send: the next op waits for the data
    /// (gathered across the TP group first, with scatter/gather).
    pub(super) fn receive(
        &mut self,
        replica: u32,
        from_vs: u32,
        mb: u32,
        pass: Pass,
        phase: Phase,
    ) {
        let sends: Vec<TaskId> = (0..self.members.len() as u32)
            .map(|k| self.sends[self.send_index(replica, k, from_vs, mb, pass)])
            .collect();
        if self.rendezvous(from_vs, pass) {
            for (i, &first) in sends.iter().enumerate() {
                if let Some(posted) = self.posted[i] {
                    for id in first..first + self.pieces(pass) {
                        self.g.dep(posted, id);
                    }
                }
            }
        }
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
                .node_call(Axis::Pp, kind, self.tp, self.cost.activation_bytes);
            let meta = Meta::new(OpKind::AllGather, phase).mb(mb).call(&call);
            let id = self.g.comm(
                &members,
                Axis::Pp,
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

    /// The sending end: each TP rank's send (or a sliced boundary's
    /// pieces) after the step's last op, blocking the compute stream
    /// without PP overlap; its window opens at the sender's next op.
    pub(super) fn send(&mut self, replica: u32, from_vs: u32, mb: u32, pass: Pass) {
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
                    // The send follows the stream's last kernel; a stage of
                    // the embedding alone (`pipeline_layout`) may send
                    // before any (its lookup is not modelled as a kernel).
                    if let Some(last) = self.g.last_compute(m) {
                        self.g.dep(last, id);
                    }
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

    /// Whether the stage's `program` runs Megatron-LM's interleaved steady
    /// state, a forward and a backward per iteration with their sends and
    /// receives in one call: interleaved 1F1B without PP overlap, unless
    /// every forward is a warmup one (fewer micro-batches than the
    /// pipeline fills), which sends each forward's output at once and
    /// posts each backward's receive before it (schedules.py:1616-1673,
    /// 1960-1975 at d98e8a6).
    pub(super) fn pairs_steps(&self, program: &[Step]) -> bool {
        let first_backward = program.iter().position(|s| s.pass != Pass::Forward);
        self.s.parallel.schedule == Schedule::Interleaved
            && !self.s.overlap.pp
            && first_backward.is_some_and(|b| program[b..].iter().any(|s| s.pass == Pass::Forward))
    }

    /// Whether forward `step` sends its output together with the backward
    /// `next` after it: interleaved 1F1B without PP overlap runs an
    /// iteration's forward and backward, then sends both outputs in one
    /// call (Megatron-LM's `send_forward_backward_recv_forward_backward`,
    /// schedules.py:1900-1942 at d98e8a6); a forward not followed by a
    /// backward (the warmup's) sends at once (:1633-1673).
    pub(super) fn sends_with_next(&self, step: Step, next: Option<Step>) -> bool {
        self.pairs_steps
            && step.pass == Pass::Forward
            && next.is_some_and(|n| n.pass == Pass::Backward)
    }

    /// Whether the sends from virtual stage `from_vs` in the direction of
    /// `pass` exceed NCCL's staging buffer, so that each moves only once
    /// its receiver has posted the receive. With PP overlap the sender does
    /// not wait on its send, and the receiver posts ahead
    /// (`overlap_p2p_comm`, schedules.py:1794-1866): the data moves as
    /// soon as it is sent, and the receiver waits for it where it needs it.
    /// Only Megatron-LM's own schedules (GPipe, 1F1B, interleaved) post
    /// receives as `post_receives` places them. DualPipe's code holds its
    /// sends too (each chunk's sends batched with the next chunk's
    /// receives, all waited on before it computes: DualPipe 3da1bbe,
    /// dualpipev.py:187-222, 279-285), but the programs built here for the
    /// zero-bubble and V schedules are not its calls one for one, and held
    /// that way would wait on themselves: their sends move as soon as they
    /// are sent (docs/validation.md, known gaps).
    fn rendezvous(&self, from_vs: u32, pass: Pass) -> bool {
        let to_vs = match pass {
            Pass::Forward => from_vs + 1,
            _ => from_vs - 1,
        };
        let megatrons = matches!(
            self.s.parallel.schedule,
            Schedule::Gpipe | Schedule::OneFOneB | Schedule::Interleaved
        );
        megatrons
            && !self.s.overlap.pp
            && self.piece_bytes(pass) > staging_bytes(self.ends(from_vs, to_vs).same_node)
    }

    /// The stages a send from virtual stage `from_vs` to `to_vs` leaves and
    /// reaches, the sender's chunk, and whether they share a node.
    fn ends(&self, from_vs: u32, to_vs: u32) -> SendEnds {
        let (l, schedule) = (&self.cluster.layout, self.s.parallel.schedule);
        let (from_stage, chunk) = schedule.stage_and_chunk(from_vs, l.pp);
        let to_stage = schedule.stage_and_chunk(to_vs, l.pp).0;
        SendEnds {
            from_stage,
            chunk,
            to_stage,
            same_node: l.stages_share_node(from_stage, to_stage),
        }
    }

    /// Bytes of each send crossing in direction `pass` (each piece's, on a
    /// sliced boundary).
    fn piece_bytes(&self, pass: Pass) -> f64 {
        self.send_bytes() / f64::from(self.pieces(pass))
    }

    /// Where each member posts the receives of `step`, about to be built
    /// after `previous` (`posted`), as Megatron-LM's schedules call them
    /// without PP overlap (schedules.py at d98e8a6):
    /// - 1F1B posts a receive just before the step that consumes it, in one
    ///   batched call with the send before it (:2344, 2416, 2446, 2466), so
    ///   after the member's last kernel;
    /// - interleaved 1F1B's steady state (`pairs_steps`) runs a forward and
    ///   a backward, then posts both next receives in one call
    ///   (`send_forward_backward_recv_forward_backward`, :1900-1942; the
    ///   warmup's last forward posts the first backward's, :1655-1673): a
    ///   backward right after a forward had its receive posted where the
    ///   forward's was.
    ///
    /// With PP overlap no send waits for its receive (`rendezvous`).
    pub(super) fn post_receives(&mut self, step: Step, previous: Option<Step>) {
        let batched = self.pairs_steps
            && step.pass == Pass::Backward
            && previous.is_some_and(|p| p.pass == Pass::Forward);
        if batched {
            return;
        }
        for i in 0..self.members.len() {
            self.posted[i] = self.g.last_compute(self.members[i]);
        }
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
    pub(super) fn close_windows(&mut self) {
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
}
