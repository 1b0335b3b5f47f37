//! A timeline into words: its records sized up front (`encoded_len`), then
//! written a bounded chunk at a time into any [`WordSink`].

use overlap_core::periods::Repeat;
use overlap_core::timeline::{Axis, Direction, GpuLanes, Interval, LinkClass};
use overlap_core::Timeline;

use super::layout::{
    axes_in, kernel_code, CHUNK_WORDS, F64_PER_INTERVAL, F64_PER_SHORT, HEADER_F64, HEADER_U32,
    KERNEL_SHIFT, MAGIC, NO_GPU, PHASE_SHIFT, SHORT_BIT, U32_PER_GPU, U32_PER_INTERVAL,
    U32_PER_LINK, VERSION, WINDOW_BIT,
};
use super::words::{Encoded, WordSink};

/// Sorts every lane by start time, as the page's scene wants them: done in
/// the worker, the page's own check then finds them sorted and only scans.
pub fn sort_lanes(t: &mut Timeline) {
    let by_start = |a: &Interval, b: &Interval| a.start_s.total_cmp(&b.start_s);
    for g in &mut t.gpus {
        if !g.compute.windows(2).all(|w| w[0].start_s <= w[1].start_s) {
            g.compute.sort_by(by_start);
        }
        for lane in &mut g.comm {
            if !lane.windows(2).all(|w| w[0].start_s <= w[1].start_s) {
                lane.sort_by(by_start);
            }
        }
    }
    for link in &mut t.links {
        if !link.samples.windows(2).all(|w| w[0].t_s <= w[1].t_s) {
            link.samples.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        }
    }
}

/// Whether a bar's record can be short: it moved no bytes and has no
/// window, kernel or exposed time, its exposure running from its end (a
/// compute op). Compared bit for bit, so that decoding gives back exactly
/// these words.
pub(super) fn is_short(iv: &Interval) -> bool {
    let zero = |x: f64| x.to_bits() == 0;
    zero(iv.bytes)
        && zero(iv.achieved_gbps)
        && zero(iv.contention_s)
        && zero(iv.exposed_s)
        && iv.exposed_from_s.to_bits() == iv.end_s.to_bits()
        && iv.window.is_none()
        && iv.kernel.is_none()
}

/// The axes any link sample carries a rate for (bit `Axis::index`): a rate
/// of another axis is zero in every sample and is not sent.
fn sample_axes(t: &Timeline) -> u32 {
    let mut mask = 0;
    for s in t.links.iter().flat_map(|l| &l.samples) {
        for (a, g) in s.gbps.iter().enumerate() {
            if g.to_bits() != 0 {
                mask |= 1 << a;
            }
        }
    }
    mask
}

/// How many words an encoded timeline takes: (`f64`s, `u32`s).
pub fn encoded_len(t: &Timeline) -> (usize, usize) {
    let intervals = t.interval_count();
    let short = lanes(t).flatten().filter(|iv| is_short(iv)).count();
    let samples: usize = t.links.iter().map(|l| l.samples.len()).sum();
    let per_sample = 1 + sample_axes(t).count_ones() as usize;
    let f64s = HEADER_F64
        + t.links.len()
        + short * F64_PER_SHORT
        + (intervals - short) * F64_PER_INTERVAL
        + samples * per_sample;
    let u32s = HEADER_U32
        + t.gpus.len() * U32_PER_GPU
        + t.links.len() * U32_PER_LINK
        + intervals * U32_PER_INTERVAL;
    (f64s, u32s)
}

/// Every lane in the encoded order: per GPU, compute then each axis.
pub(super) fn lanes(t: &Timeline) -> impl Iterator<Item = &[Interval]> {
    t.gpus.iter().flat_map(GpuLanes::lanes)
}

/// Words on their way to a sink, handed over a chunk at a time.
struct Chunked<'a> {
    sink: &'a mut dyn WordSink,
    f: Vec<f64>,
    u: Vec<u32>,
    at_f: usize,
    at_u: usize,
}

impl Chunked<'_> {
    fn flush(&mut self) {
        self.sink.put_f64(self.at_f, &self.f);
        self.sink.put_u32(self.at_u, &self.u);
        self.at_f += self.f.len();
        self.at_u += self.u.len();
        self.f.clear();
        self.u.clear();
    }

    fn maybe_flush(&mut self) {
        if self.f.len() >= CHUNK_WORDS || self.u.len() >= CHUNK_WORDS {
            self.flush();
        }
    }
}

/// Encodes a timeline, and how it repeats when it is a short run's, into vectors.
pub fn encode(t: &Timeline, repeat: Option<Repeat>) -> Encoded {
    let (f64s, u32s) = encoded_len(t);
    let mut e = Encoded {
        f64s: vec![0.0; f64s],
        u32s: vec![0; u32s],
    };
    encode_into(t, repeat, &mut e);
    e
}

/// Encodes a timeline, and how it repeats when it is a short run's
/// (`overlap_core::Simulator::simulate_repeating`), into `sink`, which
/// holds [`encoded_len`]'s words.
pub fn encode_into(t: &Timeline, repeat: Option<Repeat>, sink: &mut dyn WordSink) {
    let mask = sample_axes(t);
    let mut c = Chunked {
        sink,
        f: Vec::with_capacity(CHUNK_WORDS + F64_PER_INTERVAL.max(1 + Axis::COUNT)),
        u: Vec::with_capacity(CHUNK_WORDS + U32_PER_GPU.max(U32_PER_INTERVAL)),
        at_f: 0,
        at_u: 0,
    };
    c.u.extend([
        MAGIC,
        VERSION,
        t.gpus.len() as u32,
        u32::from(t.reduced),
        t.links.len() as u32,
        mask,
        repeat.map_or(0, |r| r.periods),
        repeat.map_or(0, |r| r.unit),
    ]);
    for g in &t.gpus {
        c.u.extend([
            g.rank,
            g.node,
            g.stage,
            g.dp_rank,
            g.tp_rank,
            g.represents,
            g.compute.len() as u32,
        ]);
        c.u.extend(g.comm.iter().map(|lane| lane.len() as u32));
        c.maybe_flush();
    }
    for l in &t.links {
        c.u.extend([
            l.gpu.map(|g| g as u32).unwrap_or(NO_GPU),
            match l.class {
                LinkClass::Nvlink => 0,
                LinkClass::Network => 1,
            },
            match l.direction {
                Direction::Out => 0,
                Direction::In => 1,
            },
            l.samples.len() as u32,
        ]);
        c.maybe_flush();
    }
    c.f.push(t.step_time_s);
    c.f.extend(repeat.map_or([0.0; 3], |r| r.marks_s));
    for l in &t.links {
        c.f.push(l.capacity_gbps);
        c.maybe_flush();
    }
    for iv in lanes(t).flatten() {
        let short = is_short(iv);
        c.u.extend([
            iv.id,
            iv.owner,
            iv.micro_batch,
            iv.layer,
            iv.chunk,
            flags(iv, short),
        ]);
        if short {
            c.f.extend([iv.start_s, iv.end_s, iv.flops]);
        } else {
            let (w0, w1) = iv.window.unwrap_or((0.0, 0.0));
            c.f.extend([
                iv.start_s,
                iv.end_s,
                iv.bytes,
                iv.achieved_gbps,
                iv.contention_s,
                iv.exposed_s,
                iv.exposed_from_s,
                w0,
                w1,
                iv.flops,
            ]);
        }
        c.maybe_flush();
    }
    for s in t.links.iter().flat_map(|l| &l.samples) {
        c.f.push(s.t_s);
        c.f.extend(axes_in(mask).map(|a| s.gbps[a]));
        c.maybe_flush();
    }
    c.flush();
}

/// An interval's flag word (see `OP_BITS` and the bits after it).
fn flags(iv: &Interval, short: bool) -> u32 {
    let mut w = iv.op.index() as u32 | (iv.phase.index() as u32) << PHASE_SHIFT;
    if iv.window.is_some() {
        w |= WINDOW_BIT;
    }
    if short {
        w |= SHORT_BIT;
    }
    w | kernel_code(iv.kernel) << KERNEL_SHIFT
}
