//! The timeline as two flat word arrays (`f64` and `u32`), so that the
//! simulation worker can hand it to the page as two transferable buffers
//! instead of a serialised text. Every `f64` travels as its exact bits: the
//! page draws the same numbers the core computed.
//!
//! Layout. The `u32` words start with a header: `MAGIC`, `VERSION`, the GPU
//! count, `reduced`, the link count, the mask of axes any link sample
//! carries (bit `Axis::index`), and the periods and unit of its
//! [`Repeat`] (0 and 0 for a whole step's timeline); then per GPU its rank,
//! node, stage, dp_rank, tp_rank, represents and the lengths of its lanes
//! (compute, then one per axis); then per link its GPU (`NO_GPU` for the
//! network core), class, direction and sample count. The `f64` words start
//! with the step time, the [`Repeat`]'s three marks (zeros without one)
//! and each link's capacity. Then, lane after lane in that order, each
//! interval takes `U32_PER_INTERVAL` words and either `F64_PER_SHORT` (a
//! bar with no traffic: a compute op, [`is_short`]) or `F64_PER_INTERVAL`
//! words, as its flag word says; then each link's samples take one word for
//! their time and one per axis in the mask.
//!
//! Version 6 carries a short run's timeline and the [`Repeat`] that draws
//! the whole step from it (`overlap_core::periods`): on 1T a seventh of the
//! bars cross from the worker, and the decoder draws the rest, a GPU at a
//! time, as the last of its slices.
//!
//! Version 5 took about half of version 4's words on 1T (a compute bar,
//! two in three of its bars, carried seven `f64`s that are always zero or
//! its end; a sample, five rates of which two are ever non-zero there):
//! every word is written by the worker, copied to the page and read by the
//! decoder, so the timeline reaches the screen in about half the time.
//!
//! The encoder writes into any [`WordSink`] a bounded chunk at a time, so
//! that the worker fills the transferable typed arrays directly rather than
//! first growing its memory by the whole encoded timeline. The decoder is
//! resumable: the page decodes a large timeline a slice at a time, so that
//! no single task holds the main thread for long.

use overlap_core::periods::{Expansion, Repeat};
use overlap_core::timeline::{
    Algorithm, Axis, Direction, GpuLanes, Interval, Kernel, Lane, LinkClass, LinkLane, LinkSample,
    OpKind, Phase, Protocol,
};
use overlap_core::Timeline;

const MAGIC: u32 = 0x4F4C_5442; // "OLTB"
/// 5: short records for bars without traffic, samples of the axes with any;
/// 6: a short run's timeline and how it repeats.
const VERSION: u32 = 6;
const NO_GPU: u32 = u32::MAX;
/// MAGIC, VERSION, GPUs, reduced, links, axis mask, periods, unit.
const HEADER_U32: usize = 8;
/// The step time and the three marks.
const HEADER_F64: usize = 4;
/// rank, node, stage, dp_rank, tp_rank, represents, and each lane's length.
const U32_PER_GPU: usize = 6 + Lane::ALL.len();
const U32_PER_LINK: usize = 4;
/// id, owner, micro_batch, layer, chunk, and one flag word: the op, phase,
/// whether it has a window, whether its record is short and its NCCL
/// kernel ([`flags`]).
pub const U32_PER_INTERVAL: usize = 6;
/// start, end, bytes, achieved_gbps, contention, exposed, exposed_from,
/// window start, window end, flops.
pub const F64_PER_INTERVAL: usize = 10;
/// A short record: start, end, flops.
pub const F64_PER_SHORT: usize = 3;
/// Words the encoder buffers before handing them to its sink.
const CHUNK_WORDS: usize = 1 << 16;

/// Bits of the flag word: the op's code in the lowest, then its phase's,
/// the window and short bits, and the kernel's code above them.
const OP_BITS: u32 = 5;
const PHASE_SHIFT: u32 = OP_BITS;
const WINDOW_BIT: u32 = 1 << (PHASE_SHIFT + 2);
const SHORT_BIT: u32 = WINDOW_BIT << 1;
const KERNEL_SHIFT: u32 = PHASE_SHIFT + 4;
// An op kind and a phase travel as their places in `OpKind::ALL` and
// `Phase::ALL` (the core declares each once).
const _: () = assert!(OpKind::COUNT <= 1 << OP_BITS && Phase::COUNT <= 4);

/// The timeline as words, ready to become two typed arrays.
#[derive(Debug, Default, PartialEq)]
pub struct Encoded {
    pub f64s: Vec<f64>,
    pub u32s: Vec<u32>,
}

/// Reads words from wherever the encoded buffers live (Rust vectors in
/// tests, JavaScript typed arrays on the page), a run at a time.
pub trait Words {
    fn len_f64(&self) -> usize;
    fn len_u32(&self) -> usize;
    /// Copies `out.len()` words starting at `at` into `out`.
    fn read_f64(&self, at: usize, out: &mut [f64]);
    fn read_u32(&self, at: usize, out: &mut [u32]);
}

impl Words for Encoded {
    fn len_f64(&self) -> usize {
        self.f64s.len()
    }
    fn len_u32(&self) -> usize {
        self.u32s.len()
    }
    fn read_f64(&self, at: usize, out: &mut [f64]) {
        out.copy_from_slice(&self.f64s[at..at + out.len()]);
    }
    fn read_u32(&self, at: usize, out: &mut [u32]) {
        out.copy_from_slice(&self.u32s[at..at + out.len()]);
    }
}

/// Takes encoded words at given offsets: a vector in tests, the typed
/// arrays a worker posts.
pub trait WordSink {
    /// Writes `words` from `at` on.
    fn put_f64(&mut self, at: usize, words: &[f64]);
    fn put_u32(&mut self, at: usize, words: &[u32]);
}

impl WordSink for Encoded {
    fn put_f64(&mut self, at: usize, words: &[f64]) {
        self.f64s[at..at + words.len()].copy_from_slice(words);
    }
    fn put_u32(&mut self, at: usize, words: &[u32]) {
        self.u32s[at..at + words.len()].copy_from_slice(words);
    }
}

/// 0 for none, else 1 + algorithm x protocols + protocol, by their places
/// in `Algorithm::ALL` and `Protocol::ALL`.
fn kernel_code(k: Option<Kernel>) -> u32 {
    k.map_or(0, |k| {
        let a = Algorithm::ALL.iter().position(|&a| a == k.algorithm);
        let p = Protocol::ALL.iter().position(|&p| p == k.protocol);
        let (a, p) = (a.expect("in Algorithm::ALL"), p.expect("in Protocol::ALL"));
        (1 + a * Protocol::ALL.len() + p) as u32
    })
}

/// The kernel of [`kernel_code`]'s `code` (`None` for 0); an error for a
/// code past the last kernel.
fn kernel_of(code: u32) -> Result<Option<Kernel>, DecodeError> {
    let Some(i) = code.checked_sub(1) else {
        return Ok(None);
    };
    let per = Protocol::ALL.len();
    let unknown = || DecodeError(format!("unknown kernel code {code}"));
    let algorithm = *Algorithm::ALL.get(i as usize / per).ok_or_else(unknown)?;
    let protocol = Protocol::ALL[i as usize % per];
    Ok(Some(Kernel {
        algorithm,
        protocol,
    }))
}

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
fn is_short(iv: &Interval) -> bool {
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

fn axes_in(mask: u32) -> impl Iterator<Item = usize> {
    (0..Axis::COUNT).filter(move |a| mask & (1 << a) != 0)
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
fn lanes(t: &Timeline) -> impl Iterator<Item = &[Interval]> {
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

/// The f64 words of the record whose flag word is `w`.
fn record_f64s(w: u32) -> usize {
    if w & SHORT_BIT != 0 {
        F64_PER_SHORT
    } else {
        F64_PER_INTERVAL
    }
}

/// An interval's flag word (see [`OP_BITS`] and the bits after it).
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

/// Where the decoder is: which lane of which GPU, or which link, it fills next.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Cursor {
    Lane { gpu: usize, lane: Lane },
    Link(usize),
    Done,
}

/// Decodes an encoded timeline a bounded number of records at a time.
pub struct Decoder {
    timeline: Timeline,
    /// Lane lengths per GPU, by `Lane::index`, from the header.
    lane_lens: Vec<[usize; Lane::ALL.len()]>,
    sample_lens: Vec<usize>,
    at_f64: usize,
    at_u32: usize,
    cursor: Cursor,
    scratch_f64: Vec<f64>,
    scratch_u32: Vec<u32>,
    /// The axes the samples carry, from the header.
    sample_axes: u32,
    /// How the decoded short run draws the whole step, from the header.
    repeat: Option<Repeat>,
    /// The whole step being drawn, once the short run is decoded.
    expansion: Option<Box<Expansion>>,
}

/// Why a buffer could not be decoded (a worker of another build, or a cut buffer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError(pub String);

fn check(cond: bool, what: &str) -> Result<(), DecodeError> {
    if cond {
        Ok(())
    } else {
        Err(DecodeError(format!("timeline buffer: {what}")))
    }
}

impl Decoder {
    /// Reads the header; the intervals follow through [`Decoder::step`].
    pub fn new(words: &dyn Words) -> Result<Self, DecodeError> {
        check(
            words.len_u32() >= HEADER_U32 && words.len_f64() >= 1,
            "too short",
        )?;
        let mut head = [0u32; HEADER_U32];
        words.read_u32(0, &mut head);
        check(head[0] == MAGIC && head[1] == VERSION, "unknown format")?;
        let (gpus, links, mask) = (head[2] as usize, head[4] as usize, head[5]);
        check(mask < 1 << Axis::COUNT, "unknown axes")?;
        let header_u32 = HEADER_U32 + gpus * U32_PER_GPU + links * U32_PER_LINK;
        check(
            words.len_u32() >= header_u32 && words.len_f64() >= HEADER_F64 + links,
            "header cut short",
        )?;
        let mut u = vec![0u32; header_u32 - HEADER_U32];
        words.read_u32(HEADER_U32, &mut u);
        let mut f = vec![0f64; HEADER_F64 + links];
        words.read_f64(0, &mut f);
        let (periods, unit) = (head[6], head[7]);
        check((periods == 0) == (unit == 0), "a repeat without its unit")?;
        let repeat = (periods > 0).then_some(Repeat {
            marks_s: [f[1], f[2], f[3]],
            periods,
            unit,
        });
        let mut lane_lens = Vec::with_capacity(gpus);
        let mut gpu_lanes = Vec::with_capacity(gpus);
        for g in u.chunks_exact(U32_PER_GPU).take(gpus) {
            let lens: [usize; Lane::ALL.len()] = std::array::from_fn(|i| g[6 + i] as usize);
            lane_lens.push(lens);
            gpu_lanes.push(GpuLanes {
                rank: g[0],
                node: g[1],
                stage: g[2],
                dp_rank: g[3],
                tp_rank: g[4],
                represents: g[5],
                // Each lane takes its room when the decoder reaches it (`step`).
                compute: Vec::new(),
                comm: std::array::from_fn(|_| Vec::new()),
            });
        }
        let mut link_lanes = Vec::with_capacity(links);
        let mut sample_lens = Vec::with_capacity(links);
        for (i, l) in u[gpus * U32_PER_GPU..]
            .chunks_exact(U32_PER_LINK)
            .enumerate()
        {
            sample_lens.push(l[3] as usize);
            link_lanes.push(LinkLane {
                gpu: (l[0] != NO_GPU).then_some(l[0] as usize),
                class: if l[1] == 0 {
                    LinkClass::Nvlink
                } else {
                    LinkClass::Network
                },
                direction: if l[2] == 0 {
                    Direction::Out
                } else {
                    Direction::In
                },
                capacity_gbps: f[HEADER_F64 + i],
                samples: Vec::new(),
            });
        }
        let intervals: usize = lane_lens.iter().flatten().sum();
        let samples: usize = sample_lens.iter().sum();
        // Each interval's f64 words depend on its record; their sum is
        // checked as the decoder reaches them, and at the end.
        let per_sample = 1 + mask.count_ones() as usize;
        let f64_base = HEADER_F64 + links + samples * per_sample;
        check(
            words.len_u32() == header_u32 + intervals * U32_PER_INTERVAL
                && words.len_f64() >= f64_base + intervals * F64_PER_SHORT
                && words.len_f64() <= f64_base + intervals * F64_PER_INTERVAL,
            "length does not match its header",
        )?;
        let mut d = Self {
            timeline: Timeline {
                step_time_s: f[0],
                reduced: head[3] != 0,
                gpus: gpu_lanes,
                links: link_lanes,
            },
            lane_lens,
            sample_lens,
            at_f64: HEADER_F64 + links,
            at_u32: header_u32,
            cursor: Cursor::Lane {
                gpu: 0,
                lane: Lane::Compute,
            },
            scratch_f64: Vec::new(),
            scratch_u32: Vec::new(),
            sample_axes: mask,
            repeat,
            expansion: None,
        };
        d.skip_empty();
        Ok(d)
    }

    /// Moves the cursor past lanes and links that are already full.
    fn skip_empty(&mut self) {
        loop {
            let next = match self.cursor {
                Cursor::Lane { gpu, lane } => {
                    if gpu >= self.lane_lens.len() {
                        Cursor::Link(0)
                    } else if self.lane(gpu, lane).len() < self.lane_lens[gpu][lane.index()] {
                        return;
                    } else {
                        match Lane::from_index(lane.index() + 1) {
                            Some(next) => Cursor::Lane { gpu, lane: next },
                            None => Cursor::Lane {
                                gpu: gpu + 1,
                                lane: Lane::Compute,
                            },
                        }
                    }
                }
                Cursor::Link(i) => {
                    if i >= self.sample_lens.len() {
                        Cursor::Done
                    } else if self.timeline.links[i].samples.len() < self.sample_lens[i] {
                        return;
                    } else {
                        Cursor::Link(i + 1)
                    }
                }
                Cursor::Done => return,
            };
            self.cursor = next;
        }
    }

    fn lane(&self, gpu: usize, lane: Lane) -> &Vec<Interval> {
        let g = &self.timeline.gpus[gpu];
        match lane {
            Lane::Compute => &g.compute,
            Lane::Comm(axis) => &g.comm[axis.index()],
        }
    }

    /// Decodes up to `max_records` intervals or samples, or, once a short
    /// run's timeline is decoded, draws about as many bars of the whole
    /// step from it; true when the whole timeline is there.
    pub fn step(&mut self, words: &dyn Words, max_records: usize) -> Result<bool, DecodeError> {
        if let Some(expansion) = self.expansion.as_mut() {
            return Ok(expansion.step(max_records));
        }
        let mut budget = max_records.max(1);
        while budget > 0 {
            match self.cursor {
                Cursor::Done => break,
                Cursor::Lane { gpu, lane } => {
                    let left = self.lane_lens[gpu][lane.index()] - self.lane(gpu, lane).len();
                    let n = left.min(budget);
                    self.scratch_u32.resize(n * U32_PER_INTERVAL, 0);
                    words.read_u32(self.at_u32, &mut self.scratch_u32);
                    self.at_u32 += n * U32_PER_INTERVAL;
                    let f64s: usize = self
                        .scratch_u32
                        .chunks_exact(U32_PER_INTERVAL)
                        .map(|u| record_f64s(u[5]))
                        .sum();
                    self.read_f64(words, f64s)?;
                    // The lane's room, taken when its turn comes: taken for
                    // every lane at once, the whole timeline's (about 180 MB
                    // on 1T) grew the module's memory in the task that
                    // received it, 35 to 60 ms. Bars go straight into it.
                    let room = self.lane_lens[gpu][lane.index()];
                    let g = &mut self.timeline.gpus[gpu];
                    let decoded = match lane {
                        Lane::Compute => &mut g.compute,
                        Lane::Comm(axis) => &mut g.comm[axis.index()],
                    };
                    decoded.reserve_exact(room - decoded.len());
                    let mut f = &self.scratch_f64[..];
                    for u in self.scratch_u32.chunks_exact(U32_PER_INTERVAL) {
                        let w = u[5];
                        let op_code = w & ((1 << OP_BITS) - 1);
                        let op = *OpKind::ALL
                            .get(op_code as usize)
                            .ok_or_else(|| DecodeError(format!("unknown op code {op_code}")))?;
                        let phase_code = w >> PHASE_SHIFT & 3;
                        let phase = *Phase::ALL.get(phase_code as usize).ok_or_else(|| {
                            DecodeError(format!("unknown phase code {phase_code}"))
                        })?;
                        let kernel = kernel_of(w >> KERNEL_SHIFT)?;
                        let (rec, rest) = f.split_at(record_f64s(w));
                        f = rest;
                        // A short record is a compute bar: no traffic, its
                        // exposure ending where it ends, its FLOPs third.
                        let short = w & SHORT_BIT != 0;
                        check(
                            !short || (w & WINDOW_BIT == 0 && kernel.is_none()),
                            "a short record with traffic",
                        )?;
                        let mut bar = Interval {
                            id: u[0],
                            owner: u[1],
                            start_s: rec[0],
                            end_s: rec[1],
                            op,
                            phase,
                            micro_batch: u[2],
                            layer: u[3],
                            chunk: u[4],
                            bytes: 0.0,
                            kernel: None,
                            achieved_gbps: 0.0,
                            contention_s: 0.0,
                            exposed_s: 0.0,
                            exposed_from_s: rec[1],
                            window: None,
                            flops: rec[2],
                        };
                        if !short {
                            bar.bytes = rec[2];
                            bar.kernel = kernel;
                            bar.achieved_gbps = rec[3];
                            bar.contention_s = rec[4];
                            bar.exposed_s = rec[5];
                            bar.exposed_from_s = rec[6];
                            bar.window = (w & WINDOW_BIT != 0).then_some((rec[7], rec[8]));
                            bar.flops = rec[9];
                        }
                        decoded.push(bar);
                    }
                    budget -= n;
                }
                Cursor::Link(i) => {
                    let left = self.sample_lens[i] - self.timeline.links[i].samples.len();
                    let n = left.min(budget);
                    let mask = self.sample_axes;
                    let per_sample = 1 + mask.count_ones() as usize;
                    self.read_f64(words, n * per_sample)?;
                    let samples = self.scratch_f64.chunks_exact(per_sample).map(|s| {
                        let mut gbps = [0.0; Axis::COUNT];
                        for (slot, a) in axes_in(mask).enumerate() {
                            gbps[a] = s[1 + slot];
                        }
                        LinkSample { t_s: s[0], gbps }
                    });
                    let room = self.sample_lens[i];
                    let into = &mut self.timeline.links[i].samples;
                    into.reserve_exact(room - into.len());
                    into.extend(samples);
                    budget -= n;
                }
            }
            self.skip_empty();
        }
        if self.cursor == Cursor::Done {
            check(
                self.at_f64 == words.len_f64(),
                "length does not match its records",
            )?;
            let Some(repeat) = self.repeat else {
                return Ok(true);
            };
            // The whole step is drawn in the slices that follow.
            let short = std::mem::take(&mut self.timeline);
            self.expansion = Some(Box::new(
                Expansion::new(short, repeat)
                    .ok_or_else(|| DecodeError("timeline buffer: too many periods".into()))?,
            ));
        }
        Ok(false)
    }

    /// Reads the next `n` f64 words into the scratch buffer, refusing to
    /// read past the end.
    fn read_f64(&mut self, words: &dyn Words, n: usize) -> Result<(), DecodeError> {
        check(
            self.at_f64 + n <= words.len_f64(),
            "records run past its end",
        )?;
        self.scratch_f64.resize(n, 0.0);
        words.read_f64(self.at_f64, &mut self.scratch_f64);
        self.at_f64 += n;
        Ok(())
    }

    /// Whether the short run is decoded and the whole step is being drawn
    /// from it: a slice of drawing costs another time per bar than one of
    /// decoding.
    pub fn drawing(&self) -> bool {
        self.expansion.is_some()
    }

    /// The decoded timeline, once [`Decoder::step`] has returned true.
    pub fn finish(self) -> Timeline {
        match self.expansion {
            Some(expansion) => (*expansion).finish(),
            None => self.timeline,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_slices(e: &Encoded, slice: usize) -> Timeline {
        let mut d = Decoder::new(e).expect("header");
        while !d.step(e, slice).expect("step") {}
        d.finish()
    }

    fn sample_timeline() -> Timeline {
        let scenario = overlap_core::presets::find("contention")
            .expect("contention preset")
            .input()
            .resolve()
            .expect("valid preset");
        let mut t = overlap_core::simulate(&scenario).timeline;
        sort_lanes(&mut t);
        t
    }

    /// Bit for bit: JSON writes every f64 exactly, -0.0 as such.
    fn same_bits(a: &Timeline, b: &Timeline) -> bool {
        serde_json::to_string(a).unwrap() == serde_json::to_string(b).unwrap()
    }

    #[test]
    fn a_simulated_timeline_survives_encoding_bit_for_bit() {
        let t = sample_timeline();
        assert!(t.interval_count() > 100 && !t.links.is_empty());
        let e = encode(&t, None);
        assert_eq!(e.f64s.len(), encoded_len(&t).0);
        assert_eq!(e.u32s.len(), encoded_len(&t).1);
        assert!(same_bits(&decode_in_slices(&e, usize::MAX), &t));
    }

    #[test]
    fn every_axis_and_kernel_of_the_presets_survives_encoding() {
        // EP and CP lanes, queues, DualPipeV, inference: what each preset
        // puts in its bars and samples.
        for id in [
            "didactic",
            "coconet",
            "moe-didactic",
            "long-context-ring",
            "distributed-optimizer",
            "coconet-inference",
        ] {
            let scenario = overlap_core::presets::scenario(id).expect("preset");
            let mut t = overlap_core::simulate(&scenario).timeline;
            sort_lanes(&mut t);
            let e = encode(&t, None);
            assert!(same_bits(&decode_in_slices(&e, 1000), &t), "{id}");
        }
    }

    #[test]
    fn a_bar_unlike_a_compute_op_keeps_its_whole_record() {
        let mut t = sample_timeline();
        let short = |t: &Timeline| lanes(t).flatten().filter(|iv| is_short(iv)).count();
        let before = short(&t);
        assert!(before > 0);
        // Each of these breaks exactly one condition of a short record.
        let bars = &mut t.gpus[0].compute;
        bars[0].bytes = -0.0;
        bars[1].exposed_from_s = bars[1].start_s;
        bars[2].window = Some((0.0, 0.0));
        bars[3].contention_s = f64::MIN_POSITIVE;
        bars[4].kernel = Some(Kernel {
            algorithm: Algorithm::ALL[0],
            protocol: Protocol::ALL[0],
        });
        assert_eq!(short(&t), before - 5);
        // A rate of an axis no other sample has is sent too.
        let link = t.links.iter_mut().find(|l| !l.samples.is_empty()).unwrap();
        link.samples[0].gbps[Axis::COUNT - 1] = -0.0;
        let e = encode(&t, None);
        assert!(same_bits(&decode_in_slices(&e, 3), &t));
    }

    /// A short run's timeline and its repeat, decoded in slices, draw the
    /// whole step the core draws from them (1T's shape: 145.6B, whose
    /// timeline is made of one short run).
    #[test]
    fn a_repeating_timeline_decodes_to_the_whole_step() {
        let mut s = overlap_core::presets::scenario("megatron-145.6b").expect("preset");
        s.overlap.tp = true;
        s.overlap.pp = true;
        let mut run = overlap_core::Simulator::default().simulate_repeating(&s);
        let repeat = run.repeat.expect("145.6B repeats its steady period");
        sort_lanes(&mut run.timeline);
        let whole = overlap_core::periods::whole(run.timeline.clone(), repeat).unwrap();
        assert!(whole.interval_count() > 3 * run.timeline.interval_count());
        let e = encode(&run.timeline, Some(repeat));
        assert_eq!(
            (e.f64s.len(), e.u32s.len()),
            encoded_len(&run.timeline),
            "the short run's words alone"
        );
        assert!(same_bits(&decode_in_slices(&e, 5000), &whole));
        let expected_ms = run.report.step_time_ms;
        assert!((whole.step_time_s * 1e3 - expected_ms).abs() < 1e-9 * expected_ms);
        // A repeat with no unit is a foreign buffer.
        let mut e = e;
        e.u32s[7] = 0;
        assert!(Decoder::new(&e).is_err());
    }

    #[test]
    fn decoding_in_small_slices_gives_the_same_timeline() {
        let t = sample_timeline();
        let e = encode(&t, None);
        assert_eq!(decode_in_slices(&e, 7), t);
        assert_eq!(decode_in_slices(&e, 1), t);
    }

    #[test]
    fn every_op_kind_and_phase_round_trips_through_its_code() {
        for (i, op) in OpKind::ALL.iter().enumerate() {
            assert_eq!(op.index(), i);
        }
        for (i, p) in Phase::ALL.iter().enumerate() {
            assert_eq!(p.index(), i);
        }
        let mut codes = vec![kernel_code(None)];
        assert_eq!(kernel_of(0), Ok(None));
        for algorithm in Algorithm::ALL {
            for protocol in Protocol::ALL {
                let k = Some(Kernel {
                    algorithm,
                    protocol,
                });
                codes.push(kernel_code(k));
                assert_eq!(kernel_of(kernel_code(k)), Ok(k));
            }
        }
        assert_eq!(codes, (0..10).collect::<Vec<u32>>(), "dense codes from 0");
        assert!(kernel_of(10).is_err());
    }

    #[test]
    fn a_cut_or_foreign_buffer_is_refused_not_misread() {
        let t = sample_timeline();
        // A word short or over: refused by the header or once the records
        // are read, never misread.
        let decodes = |e: &Encoded| -> Result<Timeline, DecodeError> {
            let mut d = Decoder::new(e)?;
            while !d.step(e, 1000)? {}
            Ok(d.finish())
        };
        let mut e = encode(&t, None);
        e.f64s.pop();
        assert!(decodes(&e).is_err());
        let mut e = encode(&t, None);
        e.f64s.push(0.0);
        assert!(decodes(&e).is_err());
        let mut e = encode(&t, None);
        e.u32s.pop();
        assert!(Decoder::new(&e).is_err());
        let mut e = encode(&t, None);
        e.u32s[0] = 7;
        assert!(Decoder::new(&e).is_err());
        assert!(Decoder::new(&Encoded::default()).is_err());
    }
}
