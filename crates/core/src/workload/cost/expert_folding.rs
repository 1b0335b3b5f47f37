//! Megatron-LM's MoE parallel folding (model.md 4c): which ranks of a
//! pipeline stage form each expert group. The experts renumber a stage's
//! tp x cp x dp ranks in their own order, expert TP fastest, then EP,
//! then expert DP (megatron/core/parallel_state.py:886-895, the expert
//! RankGenerator over `tp-cp-ep-dp-pp` with tp = etp and cp = 1: the CP
//! ranks fold into EP and expert DP like any other); a rank keeps its
//! place in the stage, so the dense order's index (TP fastest, then CP,
//! then DP, `Layout::rank`) is also its expert-order index.
//!
//! Groups, for the rank at stage index i:
//! - expert TP: the etp consecutive ranks around i (`get_ranks('tp')`);
//! - EP: every etp-th rank of the ep x etp consecutive ones
//!   (`get_ranks('ep')`), among which an NCCL all-to-all runs;
//! - TP x EP: those ep x etp consecutive ranks (`get_ranks('tp-ep')`),
//!   among which DeepEP runs (token_dispatcher.py:1836-1842);
//! - expert DP: every (ep x etp)-th rank of the stage
//!   (`get_ranks('dp')`), which reduces the experts' gradients.

use crate::model::scenario::Scenario;

/// The expert groups of a stage of `stage_ranks` ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpertFolding {
    /// Expert-parallel degree.
    pub ep: u32,
    /// Expert tensor-parallel degree.
    pub etp: u32,
    /// Ranks of one stage: tp x cp x dp.
    pub stage_ranks: u32,
}

impl ExpertFolding {
    /// The scenario's folding.
    pub fn of(s: &Scenario) -> Self {
        Self {
            ep: s.parallel.ep,
            etp: s.parallel.etp,
            stage_ranks: s.parallel.tp * s.parallel.cp * s.parallel.dp,
        }
    }

    /// Ranks of a TP x EP block: the ranks the experts of a layer span once.
    pub fn block(&self) -> u32 {
        self.ep * self.etp
    }

    /// The expert-data-parallel degree: ranks of a stage holding the same
    /// expert shard, tp x cp x dp / (ep x etp) (parallel_state.py:880).
    pub fn edp(&self) -> u32 {
        self.stage_ranks / self.block()
    }

    /// Stage indices of the EP group of the rank at stage index `i`.
    pub fn ep_group(&self, i: u32) -> Vec<u32> {
        let start = i - i % self.block() + i % self.etp;
        (0..self.ep).map(|j| start + j * self.etp).collect()
    }

    /// Stage indices of the TP x EP group of the rank at `i`.
    pub fn tp_ep_group(&self, i: u32) -> Vec<u32> {
        let start = i - i % self.block();
        (start..start + self.block()).collect()
    }

    /// Stage indices of the expert-TP group of the rank at `i`.
    pub fn etp_group(&self, i: u32) -> Vec<u32> {
        let start = i - i % self.etp;
        (start..start + self.etp).collect()
    }

    /// Stage indices of the expert-data-parallel group of the rank at `i`.
    pub fn edp_group(&self, i: u32) -> Vec<u32> {
        let first = i % self.block();
        (0..self.edp()).map(|j| first + j * self.block()).collect()
    }

    /// Members of an expert-DP group per node: every (ep x etp)-th rank,
    /// so gpus_per_node / (ep x etp) of them share a node (at least one,
    /// at most the group).
    pub fn edp_per_node(&self, gpus_per_node: u32) -> u32 {
        (gpus_per_node / self.block()).clamp(1, self.edp())
    }
}
