//! The timeline's word layout: the header's and each record's words, the
//! bits of a bar's flag word and its kernel's code. The encoder and the
//! decoder both read it; see the codec's own doc for the order of the words.

use overlap_core::timeline::{Algorithm, Axis, Kernel, Lane, OpKind, Phase, Protocol};

pub(super) const MAGIC: u32 = 0x4F4C_5442; // "OLTB"
/// 5: short records for bars without traffic, samples of the axes with any;
/// 6: a short run's timeline and how it repeats.
pub(super) const VERSION: u32 = 6;
pub(super) const NO_GPU: u32 = u32::MAX;
/// MAGIC, VERSION, GPUs, reduced, links, axis mask, periods, unit.
pub(super) const HEADER_U32: usize = 8;
/// The step time and the three marks.
pub(super) const HEADER_F64: usize = 4;
/// rank, node, stage, dp_rank, tp_rank, represents, and each lane's length.
pub(super) const U32_PER_GPU: usize = 6 + Lane::ALL.len();
pub(super) const U32_PER_LINK: usize = 4;
/// id, owner, micro_batch, layer, chunk, and one flag word: the op, phase,
/// whether it has a window, whether its record is short and its NCCL
/// kernel (`encode`'s `flags`).
pub const U32_PER_INTERVAL: usize = 6;
/// start, end, bytes, achieved_gbps, contention, exposed, exposed_from,
/// window start, window end, flops.
pub const F64_PER_INTERVAL: usize = 10;
/// A short record: start, end, flops.
pub const F64_PER_SHORT: usize = 3;
/// Words the encoder buffers before handing them to its sink.
pub(super) const CHUNK_WORDS: usize = 1 << 16;

/// Bits of the flag word: the op's code in the lowest, then its phase's,
/// the window and short bits, and the kernel's code above them.
pub(super) const OP_BITS: u32 = 5;
pub(super) const PHASE_SHIFT: u32 = OP_BITS;
pub(super) const WINDOW_BIT: u32 = 1 << (PHASE_SHIFT + 2);
pub(super) const SHORT_BIT: u32 = WINDOW_BIT << 1;
pub(super) const KERNEL_SHIFT: u32 = PHASE_SHIFT + 4;
// An op kind and a phase travel as their places in `OpKind::ALL` and
// `Phase::ALL` (the core declares each once).
const _: () = assert!(OpKind::COUNT <= 1 << OP_BITS && Phase::COUNT <= 4);

/// 0 for none, else 1 + algorithm x protocols + protocol, by their places
/// in `Algorithm::ALL` and `Protocol::ALL`.
pub(super) fn kernel_code(k: Option<Kernel>) -> u32 {
    k.map_or(0, |k| {
        let a = Algorithm::ALL.iter().position(|&a| a == k.algorithm);
        let p = Protocol::ALL.iter().position(|&p| p == k.protocol);
        let (a, p) = (a.expect("in Algorithm::ALL"), p.expect("in Protocol::ALL"));
        (1 + a * Protocol::ALL.len() + p) as u32
    })
}

/// The axes of a sample mask, by `Axis::index`.
pub(super) fn axes_in(mask: u32) -> impl Iterator<Item = usize> {
    (0..Axis::COUNT).filter(move |a| mask & (1 << a) != 0)
}

/// The f64 words of the record whose flag word is `w`.
pub(super) fn record_f64s(w: u32) -> usize {
    if w & SHORT_BIT != 0 {
        F64_PER_SHORT
    } else {
        F64_PER_INTERVAL
    }
}
