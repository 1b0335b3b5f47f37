//! Where the scenario's GPUs sit and which of them are simulated.

use crate::model::fidelity::Fidelity;
use crate::model::scenario::Scenario;

/// Where GPUs sit: TP fastest, then CP, then DP, then PP (Megatron's rank
/// order, tp-cp-dp-pp). The CP ranks of a group run the same program on
/// their share of each sequence (2 x cp load-balanced chunks, so causal
/// attention costs each the same): one stands for all, always, its ring
/// neighbours' links mapped onto its own (model.md section 7).
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    pub cp: u32,
    pub gpus_per_node: u32,
    pub fidelity: Fidelity,
}

impl Layout {
    pub fn new(s: &Scenario, fidelity: Fidelity) -> Self {
        Self {
            tp: s.parallel.tp,
            pp: s.parallel.pp,
            dp: s.parallel.dp,
            cp: s.parallel.cp,
            gpus_per_node: s.hardware.gpus_per_node,
            fidelity,
        }
    }

    /// The rank of TP rank `tp` of replica `dp` in `stage`, at CP rank 0.
    pub fn rank(&self, stage: u32, dp: u32, tp: u32) -> u32 {
        tp + self.tp * self.cp * (dp + self.dp * stage)
    }

    /// The index in its stage of TP rank `tp` of replica `dp`, at CP rank
    /// 0: TP fastest, then CP, then DP (as [`Layout::rank`] counts).
    pub fn stage_index(&self, dp: u32, tp: u32) -> u32 {
        tp + self.tp * self.cp * dp
    }

    /// The simulated (replica, TP rank) standing for the rank at `index`
    /// in its stage: its own, or at CP rank above 0 its CP rank 0's, which
    /// runs the same program (model.md 7).
    pub fn represented_by(&self, index: u32) -> (u32, u32) {
        (index / (self.tp * self.cp), index % self.tp)
    }

    /// Whether the rank at `index` in its stage is simulated (CP rank 0).
    pub fn simulated_index(&self, index: u32) -> bool {
        (index / self.tp).is_multiple_of(self.cp)
    }

    /// The global rank of the rank at `index` in `stage`.
    pub fn rank_at(&self, stage: u32, index: u32) -> u32 {
        index + self.tp * self.cp * self.dp * stage
    }

    /// Ranks that reduce each gradient: DP replicas times CP ranks.
    pub fn dp_group(&self) -> u32 {
        self.dp * self.cp
    }

    /// Whether a CP group spans nodes: its ring then crosses the NICs.
    pub fn cp_across_nodes(&self) -> bool {
        self.tp * self.cp > self.gpus_per_node
    }

    pub fn node(&self, rank: u32) -> u32 {
        rank / self.gpus_per_node
    }

    /// DP replicas and TP ranks that are simulated; the rest are mirrors.
    pub fn replicas(&self) -> u32 {
        match self.fidelity {
            Fidelity::Reduced => 1,
            Fidelity::Full => self.dp,
        }
    }

    pub fn tp_ranks(&self) -> u32 {
        match self.fidelity {
            Fidelity::Reduced => 1,
            Fidelity::Full => self.tp,
        }
    }

    /// Real GPUs each simulated GPU stands for (its CP ranks always).
    pub fn represents(&self) -> u32 {
        match self.fidelity {
            Fidelity::Reduced => self.tp * self.dp * self.cp,
            Fidelity::Full => self.cp,
        }
    }

    /// Members of a DP group (DP x CP ranks, model.md 4d) per node (k) and
    /// nodes it spans (N).
    pub fn dp_spread(&self) -> (u32, u32) {
        let stride = self.tp;
        let group = self.dp_group();
        let per_node = (self.gpus_per_node / stride).clamp(1, group);
        (per_node, group / per_node)
    }

    pub fn stages_share_node(&self, a: u32, b: u32) -> bool {
        self.node(self.rank(a, 0, 0)) == self.node(self.rank(b, 0, 0))
    }
}
