//! What an NVLS AllReduce achieves, apart from what NCCL predicts for it
//! (model.md 2b). tuning.cc gives NVLS 5/6 of NVLink at every size, which
//! chooses the algorithm well but overshoots the measured curve in the
//! middle (about 370 GB/s bus bandwidth at 16 MiB against a published 235).
//! The choice stays the tuner's (`super::choose`); the achieved time of the
//! chosen NVLS AllReduce comes from how NCCL 2.21.5 runs it:
//!
//! - it runs `NVLS_NCHANNELS` channels (16; src/transport/nvls.cc:232,
//!   src/enqueue.cc:1585-1587 "NVLS should not need more than 16 channels");
//! - each channel loops over `nHeads x chunkSize` elements per step
//!   (src/device/all_reduce.h:385, `loopCount = nvls->nHeads * chunkSize`;
//!   one head per rank in one node, src/graph/connect.cc:250);
//! - the chunk shrinks for small calls (src/enqueue.cc:1742-1750,
//!   `computeCollChunkInfo`): 128 KiB (`NVLS_CHUNKSIZE`,
//!   src/transport/nvls.cc:233), 64 KiB below 64 loops of all channels and
//!   heads, 32 KiB below 8, 16 KiB below 2.
//!
//! So a call of S bytes runs ceil(S / (channels x heads x chunk)) loops; each
//! costs a fixed synchronisation on top of its bytes at the peak rate. Three
//! constants are fitted (said so below) to the published all_reduce_perf
//! curve on 8 x H100 (Azure ND H100 v5, NCCL 2.18.5; published.md section
//! 10) at 1 MiB, 128 MiB and 8 GiB; 16 MiB and 1 GiB are held out and
//! checked (crates/core/tests/bus_bandwidth.rs).

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
/// fitted with the two above. NCCL's model says 5/6 (tuning.cc:216).
pub const NVLS_PEAK_ALG_PER_NVLINK: f64 = 0.8535;

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
/// model has one (NVLS AllReduce), unchanged otherwise.
pub(super) fn achieved(f: &Fabric, shape: &CallShape, call: CollectiveCall) -> CollectiveCall {
    if call.algorithm != Algorithm::Nvls
        || shape.kind != Collective::AllReduce
        || shape.size_bytes <= 0.0
    {
        return call;
    }
    let nvlink_scale = f.nvlink_latency_s / (super::tuner::NVLINK_REFERENCE_US * 1e-6);
    let latency_s = NVLS_ACHIEVED_LATENCY_US * 1e-6 * nvlink_scale;
    let loops = nvls_loops(shape.size_bytes, NVLINK_CHANNELS, shape.ranks);
    let transfer_s = loops * NVLS_LOOP_OVERHEAD_US * 1e-6
        + shape.size_bytes / (f.nvlink_bps * NVLS_PEAK_ALG_PER_NVLINK);
    CollectiveCall {
        latency_s,
        // The flow runs at NVLink's rate, as the tuner's NVLS candidate does.
        wire_bytes: transfer_s * f.nvlink_bps,
        time_s: latency_s + transfer_s,
        ..call
    }
}
