//! How many NCCL channels a collective runs on. Each channel is one thread
//! block, so this is also the number of SMs the collective takes from
//! compute while it is in flight (model.md section 3).
//!
//! A per-call choice (algorithm, protocol, message size) belongs to the NCCL
//! cost model; until one decides it, these are fixed counts per kind of
//! call, each from a public figure.

/// What decides a call's channel count here: whether it is a point-to-point
/// send, and whether its ring crosses the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallKind {
    /// A ring collective confined to NVLink inside one node.
    NvlinkCollective,
    /// A ring collective with edges across nodes (NVLink and the NIC).
    NetworkCollective,
    /// A pipeline send/receive between two GPUs.
    PointToPoint,
}

impl CallKind {
    /// Index for per-kind counters.
    pub(crate) fn index(self) -> usize {
        match self {
            Self::NvlinkCollective => 0,
            Self::NetworkCollective => 1,
            Self::PointToPoint => 2,
        }
    }

    /// All kinds, in `index` order.
    pub(crate) const ALL: [CallKind; 3] = [
        Self::NvlinkCollective,
        Self::NetworkCollective,
        Self::PointToPoint,
    ];
}

/// Channels of a ring collective on NVSwitch: NCCL opens 8 to 32 channels on
/// NVLink systems (model.md section 3); the middle of that range.
pub(crate) const NVLINK_COLLECTIVE_CHANNELS: u32 = 16;

/// Channels of a collective that also crosses InfiniBand: DeepSeek-V3's
/// report (arXiv 2412.19437, section 3.2.2) saturates IB and NVLink together
/// with 20 of 132 SMs split into 10 communication channels.
pub(crate) const NETWORK_COLLECTIVE_CHANNELS: u32 = 10;

/// Channels of a point-to-point send: NCCL launches its minimum of 2 for a
/// single peer over one NIC (NCCL maintainers, NVIDIA/nccl issue 689).
pub(crate) const POINT_TO_POINT_CHANNELS: u32 = 2;

/// Channels (and SMs) one call of this kind takes.
pub(crate) fn channels(kind: CallKind) -> u32 {
    match kind {
        CallKind::NvlinkCollective => NVLINK_COLLECTIVE_CHANNELS,
        CallKind::NetworkCollective => NETWORK_COLLECTIVE_CHANNELS,
        CallKind::PointToPoint => POINT_TO_POINT_CHANNELS,
    }
}
