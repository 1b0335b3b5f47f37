//! The figures over ranks: the slowest GPU's times, as the simulated
//! report states times on its slowest GPU; HTA's overlap averaged over the
//! GPUs, as the report's `hta_overlap` is; and the ranks that kept the
//! others waiting.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::figures::{AxisFigures, GpuFigures, Transfer};
use crate::matching::Lateness;

/// A GPU that arrived last at collectives, with what it cost the others.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LateRank {
    /// Its position in the import's GPUs.
    pub gpu: usize,
    /// `distributedInfo.rank` of its file.
    pub rank: Option<u64>,
    /// Its device.
    pub device: i64,
    /// Collectives it arrived last at (its kernel the shortest of the
    /// collective's, while some other rank's ran longer): in its step window.
    pub last: usize,
    /// Matched collectives it took part in, in its step window.
    pub collectives: usize,
    /// The other ranks' wait on the collectives it arrived last at, summed
    /// over those ranks, ms per step: the idle it caused.
    pub idle_caused_ms: f64,
}

/// The figures over ranks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OverRanks {
    /// GPUs read.
    pub gpus: usize,
    /// The slowest GPU: its position in `gpus`.
    pub slowest: usize,
    /// Its step, ms.
    pub step_ms: f64,
    /// Its compute, ms.
    pub compute_ms: f64,
    /// Its communication, ms.
    pub comm_ms: f64,
    /// Its exposed communication, ms.
    pub exposed_ms: f64,
    /// Its hidden share.
    pub hidden: Option<f64>,
    /// Its axes.
    pub axes: BTreeMap<String, AxisFigures>,
    /// HTA's overlap, the mean over GPUs.
    pub overlap: f64,
    /// The lowest GPU's overlap.
    pub overlap_min: f64,
    /// The highest GPU's overlap.
    pub overlap_max: f64,
    /// Its transfer and wait.
    #[serde(flatten)]
    pub transfer: Transfer,
    /// Collectives matched across ranks, over the import.
    #[serde(default)]
    pub collectives_matched: usize,
    /// GPUs by how often they arrived last at a collective (most often
    /// first, then by the idle they caused): every GPU with a matched
    /// collective.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub late_ranks: Vec<LateRank>,
}

/// The figures over ranks of `gpus` (not empty), with each GPU's
/// lateness (`late`, by GPU) and the collectives matched.
pub(crate) fn over_ranks(gpus: &[GpuFigures], late: &[Lateness], matched: usize) -> OverRanks {
    let slowest = gpus
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.step_ms.total_cmp(&b.1.step_ms).then(b.0.cmp(&a.0)))
        .map_or(0, |(i, _)| i);
    let g = &gpus[slowest];
    let overlaps = gpus.iter().map(|g| g.overlap);
    let mut late_ranks: Vec<LateRank> = gpus
        .iter()
        .zip(late)
        .enumerate()
        .filter(|(_, (_, l))| l.collectives > 0)
        .map(|(i, (g, l))| LateRank {
            gpu: i,
            rank: g.rank,
            device: g.device,
            last: l.last,
            collectives: l.collectives,
            idle_caused_ms: l.idle_caused_us / 1e3 / f64::from(g.steps.max(1)),
        })
        .collect();
    late_ranks.sort_by(|a, b| {
        b.last
            .cmp(&a.last)
            .then(b.idle_caused_ms.total_cmp(&a.idle_caused_ms))
            .then(a.gpu.cmp(&b.gpu))
    });
    OverRanks {
        gpus: gpus.len(),
        slowest,
        step_ms: g.step_ms,
        compute_ms: g.compute_ms,
        comm_ms: g.comm_ms,
        exposed_ms: g.exposed_ms,
        hidden: g.hidden,
        axes: g.axes.clone(),
        overlap: overlap_core::hta::mean(&gpus.iter().map(|g| g.overlap).collect::<Vec<_>>()),
        overlap_min: overlaps.clone().fold(f64::INFINITY, f64::min),
        overlap_max: overlaps.fold(f64::NEG_INFINITY, f64::max),
        transfer: g.transfer.clone(),
        collectives_matched: matched,
        late_ranks,
    }
}
