//! The simulated GPUs, their links and the network core, and how each
//! collective is laid out on them: its call from the library that runs it
//! (`collective::Libraries`), its link usage pattern and its bytes.

use crate::collective::nccl::{CallShape, CollectiveCall, Fabric};
use crate::collective::{Collective, Libraries};
use crate::model::axis::Axis;
use crate::model::fidelity::Fidelity;
use crate::model::link::{Direction, LinkClass};
use crate::model::scenario::{CollectiveOp, Scenario};
use crate::workload::cost::efficiency::NIC_EFFICIENCY;
use crate::workload::cost::layout::Layout;
use crate::workload::graph::task::{CallUse, GpuInfo, Placed, ResourceInfo, Usage};
use crate::workload::graph::Graph;

/// The simulated GPUs and their four links (and the network core), built once per graph.
pub(crate) struct Cluster {
    pub layout: Layout,
    /// Simulated GPU id by (stage, replica, tp rank).
    ids: Vec<u32>,
    core: Option<u32>,
    nvlink_latency_s: f64,
    network_latency_s: f64,
    /// The links as the libraries' cost models see them.
    fabric: Fabric,
    /// The libraries that run the step's collectives.
    libraries: Libraries,
    /// The call per distinct library and call shape met so far: a step
    /// issues the same few calls hundreds of thousands of times, and NCCL's
    /// `choose` weighs every algorithm and protocol for each.
    calls: std::cell::RefCell<Vec<(CallKey, CollectiveCall)>>,
}

/// A library (its place in `Libraries`) and a call shape, exactly (the
/// size by its bits), as the memo's key.
type CallKey = (usize, Collective, u32, u32, u64);

/// Most call shapes `Cluster` remembers.
const MEMO_CALLS: usize = 64;

const NVL_OUT: u32 = 0;
const NVL_IN: u32 = 1;
const NIC_OUT: u32 = 2;
const NIC_IN: u32 = 3;

impl Cluster {
    pub fn new(g: &mut Graph, s: &Scenario, fidelity: Fidelity) -> Self {
        let layout = Layout::new(s, fidelity);
        let hw = &s.hardware;
        g.peak_tflops = hw.peak_tflops;
        g.hbm_gbps = hw.hbm_gbps;
        g.max_connections = hw.max_connections;
        let fabric = Fabric::of_scenario(s);
        let mut ids = Vec::new();
        for stage in 0..layout.pp {
            for dp in 0..layout.replicas() {
                for tp in 0..layout.tp_ranks() {
                    let rank = layout.rank(stage, dp, tp);
                    let id = g.add_gpu(GpuInfo {
                        rank,
                        node: layout.node(rank),
                        stage,
                        dp_rank: dp,
                        tp_rank: tp,
                        represents: layout.represents(),
                    });
                    ids.push(id);
                    // The rates NCCL's rings reach on the links (`collective_cost`).
                    let (nvlink, nic) = (fabric.nvlink_bps / 1e9, fabric.nic_bps / 1e9);
                    let links = [
                        (LinkClass::Nvlink, Direction::Out, nvlink),
                        (LinkClass::Nvlink, Direction::In, nvlink),
                        (LinkClass::Network, Direction::Out, nic),
                        (LinkClass::Network, Direction::In, nic),
                    ];
                    for (class, direction, gbps) in links {
                        g.add_resource(ResourceInfo {
                            gpu: Some(id as usize),
                            class,
                            direction,
                            capacity_bps: gbps * 1e9,
                        });
                    }
                }
            }
        }
        // The network core matters only when it is oversubscribed. Its
        // capacity is what all NICs could send, divided by the oversubscription.
        let core = (hw.oversubscription > 1.0 && hw.nodes > 1).then(|| {
            g.add_resource(ResourceInfo {
                gpu: None,
                class: LinkClass::Network,
                direction: Direction::Out,
                capacity_bps: hw.nic_gbps * 1e9 * NIC_EFFICIENCY * hw.gpus() as f64
                    / hw.oversubscription,
            })
        });
        Self {
            layout,
            ids,
            core,
            nvlink_latency_s: fabric.nvlink_latency_s,
            network_latency_s: fabric.network_latency_s,
            fabric,
            libraries: g.libraries.clone(),
            calls: Default::default(),
        }
    }

    /// The call of `axis`'s library for a collective of `ranks` GPUs
    /// inside one node (a TP group), each holding `size_bytes`.
    pub fn node_call(
        &self,
        axis: Axis,
        kind: Collective,
        ranks: u32,
        size_bytes: f64,
    ) -> CollectiveCall {
        self.call(
            axis,
            CallShape {
                kind,
                ranks,
                per_node: ranks,
                size_bytes,
            },
        )
    }

    /// The call `axis`'s library runs for this shape
    /// (`Libraries::for_call`), worked out once per library and shape.
    pub fn call(&self, axis: Axis, shape: CallShape) -> CollectiveCall {
        let library = self.libraries.index_for(axis, shape.kind);
        let key = (
            library,
            shape.kind,
            shape.ranks,
            shape.per_node,
            shape.size_bytes.to_bits(),
        );
        let mut calls = self.calls.borrow_mut();
        if let Some(&(_, call)) = calls.iter().find(|(k, _)| *k == key) {
            return call;
        }
        let call = self
            .libraries
            .for_call(axis, shape.kind)
            .call(&self.fabric, &shape);
        // A step has a few distinct shapes; past that the memo stops growing,
        // so that a scan of it stays short.
        if calls.len() < MEMO_CALLS {
            calls.push((key, call));
        }
        call
    }

    /// The rates `axis`'s library reaches for an all-to-all of `shape`,
    /// and those of the links themselves (the network's capacities).
    pub fn all_to_all_rates(
        &self,
        axis: Axis,
        shape: CallShape,
    ) -> (crate::collective::LinkRates, crate::collective::LinkRates) {
        let library = self.libraries.for_call(axis, shape.kind);
        let links = crate::collective::LinkRates {
            nvlink_bps: self.fabric.nvlink_bps,
            nic_bps: self.fabric.nic_bps,
        };
        (library.all_to_all_rates(&self.fabric, &shape), links)
    }

    /// The library that runs calls of `kind` on `axis`.
    pub fn library(
        &self,
        axis: Axis,
        kind: Collective,
    ) -> &dyn crate::collective::CollectiveLibrary {
        self.libraries.for_call(axis, kind)
    }

    pub fn gpu(&self, stage: u32, replica: u32, tp: u32) -> u32 {
        let l = &self.layout;
        self.ids[((stage * l.replicas() + replica) * l.tp_ranks() + tp) as usize]
    }

    fn res(gpu: u32, which: u32) -> u32 {
        gpu * 4 + which
    }

    /// A ring among GPUs of one node: each member sends on its NVLink out and
    /// receives on its NVLink in.
    pub fn nvlink_ring(&self, g: &mut Graph, members: &[u32]) -> u32 {
        let usage = members
            .iter()
            .flat_map(|&m| {
                [
                    Usage {
                        resource: Self::res(m, NVL_OUT),
                        weight: 1.0,
                    },
                    Usage {
                        resource: Self::res(m, NVL_IN),
                        weight: 1.0,
                    },
                ]
            })
            .collect();
        g.add_pattern(usage)
    }

    /// A DP collective across `members` (one per replica, or the representative).
    /// Spanning N nodes with k members each, NCCL runs k rings, one per
    /// rail: each GPU then carries one ring's inter-node edge on its NIC and
    /// k - 1 rings' intra-node edges on NVLink, so every GPU's links carry
    /// the same load. That symmetry is what lets one GPU stand for all.
    /// NCCL's algorithm and protocol choice (`collective_cost`) sets the
    /// latency and the bytes on the wire; a tree uses the same links.
    /// Returns where and how it runs ([`Placed`]) for a buffer of
    /// `size_bytes`.
    /// The collective is `kind`: an AllReduce of the gradients, or the
    /// sharded optimizers' ReduceScatter and AllGather, which cross the
    /// same links.
    pub fn dp_collective(
        &self,
        g: &mut Graph,
        members: &[u32],
        kind: Collective,
        size_bytes: f64,
    ) -> Placed {
        let spread = self.layout.dp_spread();
        let ranks = self.layout.dp_group();
        self.spread_collective(g, members, Axis::Dp, kind, ranks, spread, size_bytes)
    }

    /// `axis`'s call of `kind` over `ranks` ranks spread `(k, nodes)`,
    /// laid out for each of `members` ([`Cluster::spread_placed`]).
    #[allow(clippy::too_many_arguments)] // a call's whole shape, and where it runs
    fn spread_collective(
        &self,
        g: &mut Graph,
        members: &[u32],
        axis: Axis,
        kind: Collective,
        ranks: u32,
        (k, nodes): (u32, u32),
        size_bytes: f64,
    ) -> Placed {
        let call = self.call(
            axis,
            CallShape {
                kind,
                ranks,
                per_node: k,
                size_bytes,
            },
        );
        self.spread_placed(g, members, call, (k, nodes))
    }

    /// The call of a one-collective workload over every DP rank.
    pub fn bench_call(&self, op: CollectiveOp, size_bytes: f64) -> CollectiveCall {
        let (k, _) = self.layout.dp_spread();
        self.call(
            Axis::Dp,
            CallShape {
                kind: op.into(),
                ranks: self.layout.dp_group(),
                per_node: k,
                size_bytes,
            },
        )
    }

    /// `call` laid out across `members` as [`Cluster::dp_collective`] lays
    /// a DP collective out.
    pub fn dp_placed(&self, g: &mut Graph, members: &[u32], call: CollectiveCall) -> Placed {
        self.spread_placed(g, members, call, self.layout.dp_spread())
    }

    /// Members of a CP group per node (k) and nodes it spans (N): CP ranks
    /// sit next to the TP ranks, inside a node where tp x cp fits one.
    fn cp_spread(&self) -> (u32, u32) {
        let l = &self.layout;
        let per_node = (l.gpus_per_node / l.tp).clamp(1, l.cp);
        (per_node, l.cp / per_node)
    }

    /// A collective of `ranks` GPUs, `per_node` in each node (the expert
    /// gradients' reduction over the expert-data-parallel group), laid out
    /// as a DP collective is, one ring per rail.
    pub fn group_collective(
        &self,
        g: &mut Graph,
        members: &[u32],
        kind: Collective,
        size_bytes: f64,
        (ranks, per_node): (u32, u32),
    ) -> Placed {
        let spread = (per_node, ranks / per_node);
        self.spread_collective(g, members, Axis::Dp, kind, ranks, spread, size_bytes)
    }

    /// A collective of the CP group of each of `members` (Llama 3's K/V
    /// all-gather, the reduce-scatter of their gradients), each rank
    /// holding `size_bytes`, laid out as a DP collective is.
    pub fn cp_collective(
        &self,
        g: &mut Graph,
        members: &[u32],
        kind: Collective,
        size_bytes: f64,
    ) -> Placed {
        let spread = self.cp_spread();
        let ranks = self.layout.cp;
        self.spread_collective(g, members, Axis::Cp, kind, ranks, spread, size_bytes)
    }

    /// One step of ring attention for each of `members`: it sends a K/V
    /// block to its ring neighbour and receives one from the other. Every
    /// rank does the same, so a member's own out and in links stand for
    /// the pair (model.md 7): NVLink when the CP group fits a node; across
    /// nodes the step moves in lock step at the pace of its NIC edges.
    /// Returns the pattern and the latency of a step.
    pub fn cp_ring_step(&self, g: &mut Graph, members: &[u32]) -> (u32, f64) {
        if !self.layout.cp_across_nodes() {
            return (self.nvlink_ring(g, members), self.nvlink_latency_s);
        }
        let usage = members
            .iter()
            .flat_map(|&m| self.send_usage(m, m, false).0)
            .collect();
        (g.add_pattern(merge(usage)), self.network_latency_s)
    }

    /// `call` laid out across `members`, `k` of its ranks in each of
    /// `nodes` nodes (see [`Cluster::dp_collective`]).
    fn spread_placed(
        &self,
        g: &mut Graph,
        members: &[u32],
        call: CollectiveCall,
        (k, nodes): (u32, u32),
    ) -> Placed {
        if nodes <= 1 {
            return Placed {
                pattern: self.nvlink_ring(g, members),
                bytes: call.wire_bytes,
                latency_s: call.latency_s,
                kernel: call.trace_kernel(),
                call: CallUse::of(&call),
            };
        }
        let mut usage = Vec::new();
        // Every GPU a simulated one stands for crosses the core.
        let core_weight = f64::from(self.layout.represents());
        for &m in members {
            if k > 1 {
                let w = f64::from(k - 1);
                usage.push(Usage {
                    resource: Self::res(m, NVL_OUT),
                    weight: w,
                });
                usage.push(Usage {
                    resource: Self::res(m, NVL_IN),
                    weight: w,
                });
            }
            usage.push(Usage {
                resource: Self::res(m, NIC_OUT),
                weight: 1.0,
            });
            usage.push(Usage {
                resource: Self::res(m, NIC_IN),
                weight: 1.0,
            });
            if let Some(core) = self.core {
                usage.push(Usage {
                    resource: core,
                    weight: core_weight,
                });
            }
        }
        Placed {
            pattern: g.add_pattern(merge(usage)),
            bytes: call.wire_bytes / f64::from(k),
            latency_s: call.latency_s,
            kernel: call.trace_kernel(),
            call: CallUse::of(&call),
        }
    }

    /// A point-to-point send between pipeline stages; returns pattern and latency.
    pub fn send(&self, g: &mut Graph, from: u32, to: u32, same_node: bool) -> (u32, f64) {
        let (usage, latency) = self.send_usage(from, to, same_node);
        (g.add_pattern(usage), latency)
    }

    /// An AllReduce between two GPUs of different pipeline stages (the tied
    /// embedding's gradient, `embedding_sync`): a ring of two, each sending
    /// to the other on the links a pipeline send between them takes (NVLink
    /// in one node, else the NICs and the network core). NCCL's algorithm
    /// and protocol choice for two ranks sets the latency and the bytes on
    /// the wire. Returns where and how it runs, as [`Cluster::dp_collective`]
    /// does.
    pub fn pair_all_reduce(
        &self,
        g: &mut Graph,
        a: u32,
        b: u32,
        same_node: bool,
        size_bytes: f64,
    ) -> Placed {
        let mut usage = self.send_usage(a, b, same_node).0;
        usage.extend(self.send_usage(b, a, same_node).0);
        let call = self.call(
            Axis::Dp,
            CallShape {
                kind: Collective::AllReduce,
                ranks: 2,
                per_node: if same_node { 2 } else { 1 },
                size_bytes,
            },
        );
        Placed {
            pattern: g.add_pattern(merge(usage)),
            bytes: call.wire_bytes,
            latency_s: call.latency_s,
            kernel: call.trace_kernel(),
            call: CallUse::of(&call),
        }
    }

    /// The links a send from `from` to `to` crosses, and its latency.
    fn send_usage(&self, from: u32, to: u32, same_node: bool) -> (Vec<Usage>, f64) {
        if same_node {
            let usage = vec![
                Usage {
                    resource: Self::res(from, NVL_OUT),
                    weight: 1.0,
                },
                Usage {
                    resource: Self::res(to, NVL_IN),
                    weight: 1.0,
                },
            ];
            return (usage, self.nvlink_latency_s);
        }
        let mut usage = vec![
            Usage {
                resource: Self::res(from, NIC_OUT),
                weight: 1.0,
            },
            Usage {
                resource: Self::res(to, NIC_IN),
                weight: 1.0,
            },
        ];
        if let Some(core) = self.core {
            let w = f64::from(self.layout.represents());
            usage.push(Usage {
                resource: core,
                weight: w,
            });
        }
        (usage, self.network_latency_s)
    }

    pub fn nvlink_latency_s(&self) -> f64 {
        self.nvlink_latency_s
    }

    /// Latency of a chunk's collective after the first inside a node: the
    /// chunks of one GEMM flow through one pipelined ring (CoCoNet fuses
    /// them into one kernel), so a ring of n ranks moving c chunks takes
    /// 2(n - 1) + c - 1 steps, not c x 2(n - 1): each further chunk adds
    /// one NVLink step.
    pub fn pipelined_chunk_latency_s(&self) -> f64 {
        self.nvlink_latency_s
    }

    pub fn network_latency_s(&self) -> f64 {
        self.network_latency_s
    }

    /// The simulated GPU standing for the rank at `index` in `stage`
    /// (`Layout::represented_by`: at CP rank above 0, its CP rank 0's).
    fn gpu_standing_for(&self, stage: u32, index: u32) -> u32 {
        let (replica, tp) = self.layout.represented_by(index);
        self.gpu(stage, replica, tp)
    }

    /// The simulated GPUs an EP all-to-all of GPU (`stage`, `replica`,
    /// `tp_rank`) sends to over one link class (`across`: the NIC), for
    /// `Fidelity::Full`; empty in the reduced simulation, whose mirrors'
    /// links are the representative's own. `group` is the all-to-all's
    /// ranks as indices in the stage (TP fastest, then CP, then DP: its
    /// expert group, `ExpertFolding`), the GPU's own among them. `same_index`:
    /// across nodes, only the GPU of the same index in its node (DeepEP).
    pub fn ep_peers(
        &self,
        (stage, replica, tp_rank): (u32, u32, u32),
        group: &[u32],
        across: bool,
        same_index: bool,
    ) -> Vec<u32> {
        let l = &self.layout;
        if l.fidelity == Fidelity::Reduced {
            return Vec::new();
        }
        let local = l.stage_index(replica, tp_rank);
        let node_of = |local: u32| l.node(l.rank_at(stage, local));
        let gpn = l.gpus_per_node;
        // A peer at a CP rank above 0 is its CP rank 0's mirror: its in-link
        // is that GPU's (model.md 7), which so carries, over the CP ranks,
        // what each real rank receives.
        group
            .iter()
            .copied()
            .filter(|&j| j != local)
            .filter(|&j| (node_of(j) != node_of(local)) == across)
            .filter(|&j| !(across && same_index) || (j % gpn == local % gpn))
            .map(|j| self.gpu_standing_for(stage, j))
            .collect()
    }

    /// The simulated members of the expert-data-parallel group of GPU
    /// (`stage`, `replica`, `tp_rank`) under `folding`: every (ep x
    /// etp)-th rank of the stage, those at CP rank 0 (the rest are their
    /// mirrors, model.md 7); in the reduced simulation the representative
    /// alone.
    pub fn expert_dp_members(
        &self,
        (stage, replica, tp_rank): (u32, u32, u32),
        folding: &crate::workload::cost::expert_folding::ExpertFolding,
    ) -> Vec<u32> {
        let l = &self.layout;
        if l.fidelity == Fidelity::Reduced {
            return vec![self.gpu(stage, 0, 0)];
        }
        folding
            .edp_group(l.stage_index(replica, tp_rank))
            .into_iter()
            .filter(|&j| l.simulated_index(j))
            .map(|j| self.gpu_standing_for(stage, j))
            .collect()
    }

    /// The link usage pattern of one rank's share of an EP all-to-all on
    /// one link class: its own out-link carries a transfer to each of
    /// `pairs` peers, and each peer's in-link one (per (source,
    /// destination) pair). `peers` are those peers' simulated GPUs
    /// (`ep_peers`); with none (the reduced simulation) the mirrors' in-links
    /// are the representative's own, which then carries all `pairs`.
    pub fn ep_pattern(
        &self,
        g: &mut Graph,
        gpu: u32,
        pairs: u32,
        peers: &[u32],
        across: bool,
    ) -> u32 {
        let (out, into) = if across {
            (NIC_OUT, NIC_IN)
        } else {
            (NVL_OUT, NVL_IN)
        };
        let weight = f64::from(pairs);
        let mut usage = vec![Usage {
            resource: Self::res(gpu, out),
            weight,
        }];
        if peers.is_empty() {
            usage.push(Usage {
                resource: Self::res(gpu, into),
                weight,
            });
        }
        usage.extend(peers.iter().map(|&p| Usage {
            resource: Self::res(p, into),
            weight: 1.0,
        }));
        if let (true, Some(core)) = (across, self.core) {
            let represents = match self.layout.fidelity {
                Fidelity::Reduced => f64::from(self.layout.represents()),
                Fidelity::Full => 1.0,
            };
            usage.push(Usage {
                resource: core,
                weight: weight * represents,
            });
        }
        g.add_pattern(merge(usage))
    }
}

/// One entry per resource, weights added.
fn merge(mut usage: Vec<Usage>) -> Vec<Usage> {
    usage.sort_by_key(|u| u.resource);
    let mut out: Vec<Usage> = Vec::with_capacity(usage.len());
    for u in usage {
        match out.last_mut() {
            Some(last) if last.resource == u.resource => last.weight += u.weight,
            _ => out.push(u),
        }
    }
    out
}
