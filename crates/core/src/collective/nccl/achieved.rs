//! What an NVLS call achieves, apart from what NCCL predicts for it
//! (model.md 2b). tuning.cc gives NVLS 5/6 of NVLink at every size, which
//! chooses the algorithm well but overshoots the measured AllReduce curve in
//! the middle (about 370 GB/s bus bandwidth at 16 MiB against a published
//! 235). The choice stays the tuner's (`super::choose`); the achieved time of
//! a chosen (or forced) NVLS AllReduce, AllGather or ReduceScatter comes from
//! how NCCL 2.21.5 runs it:
//!
//! - it runs `NVLS_NCHANNELS` channels (16; src/transport/nvls.cc:232,
//!   src/enqueue.cc:1585-1587 "NVLS should not need more than 16 channels");
//! - each channel loops over `nHeads x chunkSize` elements per step
//!   (src/device/all_reduce.h:385, `loopCount = nvls->nHeads * chunkSize`;
//!   one head per rank in one node, src/graph/connect.cc:250). AllGather and
//!   ReduceScatter run the same loop: their plan is `addCollnetCollToPlan`'s,
//!   `nLoop = nBytes / (nChannels x nHeads x chunkSize)` (src/enqueue.cc:281,
//!   pattern `ncclPatternNvls`, src/enqueue.cc:251-252), `nBytes` the whole
//!   buffer (src/include/info.h:84, "count is per rank");
//! - the chunk shrinks for small calls (src/enqueue.cc:1742-1750,
//!   `computeCollChunkInfo`): 128 KiB (`NVLS_CHUNKSIZE`,
//!   src/transport/nvls.cc:233), 64 KiB below 64 loops of all channels and
//!   heads, 32 KiB below 8, 16 KiB below 2;
//! - what each GPU's NVLink carries, per an NCCL maintainer (sjeaugey in
//!   NVIDIA/nccl issue 1083, and nccl-tests issue 212 / PR 239: NVLS
//!   AllReduce "algbw = busbw x n / (n+1)"): a ReduceScatter of S bytes
//!   sends S and receives S/n, an AllGather sends S/n and receives S, an
//!   AllReduce (the two in turn) moves S (n+1)/n each way. The busier
//!   direction bounds the call, which is why NVLS AllGather and
//!   ReduceScatter are slower than the ring's (n-1)/n each way, and why
//!   NCCL's tuner never picks them in one node.
//!
//! So a call of S bytes runs ceil(S / (channels x heads x chunk)) loops; each
//! costs a fixed synchronisation on top of its busier direction's bytes at a
//! peak per-direction rate. Three constants are fitted (said so below) to the
//! published all_reduce_perf curve on 8 x H100 (Azure ND H100 v5, NCCL
//! 2.18.5; published.md section 10) at 1 MiB, 128 MiB and 8 GiB; 16 MiB and
//! 1 GiB are held out and checked (crates/core/tests/bus_bandwidth.rs).
//! AllGather and ReduceScatter take the same constants, fitting nothing more:
//! their curves are predictions, checked against the published NVLS
//! AllGather (nccl issue 1506) and ReduceScatter rings (nccl issue 1047).

use crate::collective::call::{Algorithm, CallShape, Collective, CollectiveCall, Fabric};

use super::tuner::NVLINK_CHANNELS;

/// NCCL 2.21.5 `NVLS_CHUNKSIZE` default, bytes (src/transport/nvls.cc:233).
pub(super) const NVLS_CHUNK_BYTES: f64 = 128.0 * 1024.0;

/// enqueue.cc:1748-1750: the chunk steps down to 64, 32 and 16 KiB while the
/// call is smaller than 64, 8 and 2 loops of `channels x heads x chunk`.
const NVLS_CHUNK_STEPS: [(f64, f64); 3] = [(64.0, 65536.0), (8.0, 32768.0), (2.0, 16384.0)];

/// Fit: the latency an NVLS AllReduce achieves, us, fitted to the published
/// curve's 1 MiB, 128 MiB and 8 GiB points (published.md section 10). NCCL's
/// own prediction is 25 (tuning.cc hwLat NVLS), used for the choice only.
pub const NVLS_ACHIEVED_LATENCY_US: f64 = 30.44;

/// Fit: the synchronisation each loop of an NVLS AllReduce adds, us, fitted
/// with the latency above to the same three points.
pub const NVLS_LOOP_OVERHEAD_US: f64 = 8.237;

/// Fit: the NVLS AllReduce's algorithm bandwidth between loops, as a share
/// of the fabric's NCCL NVLink bandwidth (316.5 GB/s of 370.8 on DGX H100),
/// fitted with the two above at the published curve's 8 ranks. NCCL's model
/// says 5/6 (tuning.cc:216).
pub const NVLS_PEAK_ALG_PER_NVLINK: f64 = 0.8535;

/// Ranks of the published curve the constants above are fitted on (8 x H100).
const NVLS_FIT_RANKS: f64 = 8.0;

/// The per-direction rate between loops, as a share of NVLink, that the fit
/// implies: its AllReduce moved S (n+1)/n each way at n = 8 in the time the
/// algorithm bandwidth gives S, so 0.8535 x 9/8 = 0.960 (356 GB/s of 370.8
/// on DGX H100). Derived, not fitted again.
pub const NVLS_PEAK_LINK_SHARE: f64 =
    NVLS_PEAK_ALG_PER_NVLINK * (NVLS_FIT_RANKS + 1.0) / NVLS_FIT_RANKS;

/// Bytes the busier direction of each GPU's NVLink carries in an NVLS call
/// of `size_bytes` over `ranks` (sjeaugey, NVIDIA/nccl issue 1083 and
/// nccl-tests PR 239): S (n+1)/n for an AllReduce, S for an AllGather
/// (received) or a ReduceScatter (sent). `None` for what NVLS does not run.
pub fn nvls_link_bytes(kind: Collective, ranks: u32, size_bytes: f64) -> Option<f64> {
    let n = f64::from(ranks.max(1));
    match kind {
        Collective::AllReduce => Some(size_bytes * (n + 1.0) / n),
        Collective::AllGather | Collective::ReduceScatter => Some(size_bytes),
        _ => None,
    }
}

/// NCCL's chunk for an NVLS call of `size_bytes` over `heads` heads and
/// `channels` channels (enqueue.cc:1742-1750).
pub(super) fn nvls_chunk_bytes(size_bytes: f64, channels: u32, heads: u32) -> f64 {
    let concurrent = f64::from(channels) * f64::from(heads);
    let mut chunk = NVLS_CHUNK_BYTES;
    for (loops, smaller) in NVLS_CHUNK_STEPS {
        if size_bytes < loops * concurrent * chunk && chunk > smaller {
            chunk = smaller;
        }
    }
    chunk
}

/// The loops an NVLS call runs: each moves `channels x heads x chunk` bytes
/// (all_reduce.h:385, 432).
pub(super) fn nvls_loops(size_bytes: f64, channels: u32, heads: u32) -> f64 {
    let per_loop =
        f64::from(channels) * f64::from(heads) * nvls_chunk_bytes(size_bytes, channels, heads);
    (size_bytes / per_loop).ceil().max(1.0)
}

/// The call as it runs: the tuner's choice with the achieved time where the
/// model has one (NVLS AllReduce, AllGather and ReduceScatter), unchanged
/// otherwise.
pub(super) fn achieved(f: &Fabric, shape: &CallShape, call: CollectiveCall) -> CollectiveCall {
    if call.algorithm != Algorithm::Nvls || shape.size_bytes <= 0.0 {
        return call;
    }
    let Some(link_bytes) = nvls_link_bytes(shape.kind, shape.ranks, shape.size_bytes) else {
        return call;
    };
    let nvlink_scale = f.nvlink_latency_s / (super::tuner::NVLINK_REFERENCE_US * 1e-6);
    let latency_s = NVLS_ACHIEVED_LATENCY_US * 1e-6 * nvlink_scale;
    let loops = nvls_loops(shape.size_bytes, NVLINK_CHANNELS, shape.ranks);
    // The busier direction's bytes at the per-direction rate, written as the
    // fitted AllReduce's time scaled by the bytes' ratio to its own (exactly
    // the fit at its 8 ranks).
    let fit_link_bytes = shape.size_bytes * (NVLS_FIT_RANKS + 1.0) / NVLS_FIT_RANKS;
    let transfer_s = loops * NVLS_LOOP_OVERHEAD_US * 1e-6
        + shape.size_bytes / (f.nvlink_bps * NVLS_PEAK_ALG_PER_NVLINK)
            * (link_bytes / fit_link_bytes);
    CollectiveCall {
        latency_s,
        // The flow runs at NVLink's rate, as the tuner's NVLS candidate does.
        wire_bytes: transfer_s * f.nvlink_bps,
        time_s: latency_s + transfer_s,
        ..call
    }
}
