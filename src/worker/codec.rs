//! The timeline as two flat word arrays (`f64` and `u32`), so that the
//! simulation worker can hand it to the page as two transferable buffers
//! instead of a serialised text. Every `f64` travels as its exact bits: the
//! page draws the same numbers the core computed.
//!
//! Layout. The `u32` words start with a header: `MAGIC`, `VERSION`, the GPU
//! count, `reduced`, the link count; then per GPU its rank, node, stage,
//! dp_rank, tp_rank, represents and the lengths of its four lanes (compute,
//! TP, PP, DP); then per link its GPU (`NO_GPU` for the network core), class,
//! direction and sample count. The `f64` words start with the step time and
//! each link's capacity. Then, lane after lane in that order, each interval
//! takes `U32_PER_INTERVAL` and `F64_PER_INTERVAL` words; then each link's
//! samples take `F64_PER_SAMPLE` words each.
//!
//! The decoder is resumable: the page decodes a large timeline a slice at a
//! time, so that no single task holds the main thread for long.

use overlap_core::timeline::{
    Algorithm, Axis, Direction, GpuLanes, Interval, Kernel, Lane, LinkClass, LinkLane, LinkSample,
    OpKind, Phase, Protocol,
};
use overlap_core::Timeline;

const MAGIC: u32 = 0x4F4C_5442; // "OLTB"
                                // 4: a lane and a rate per axis, EP and CP included.
const VERSION: u32 = 4;
const NO_GPU: u32 = u32::MAX;
/// rank, node, stage, dp_rank, tp_rank, represents, and each lane's length.
const U32_PER_GPU: usize = 6 + Lane::ALL.len();
const U32_PER_LINK: usize = 4;
/// id, owner, op, phase, micro_batch, layer, chunk, and one word for
/// whether it has a window (bit 0) and its NCCL kernel (the bits above:
/// [`kernel_code`]).
pub const U32_PER_INTERVAL: usize = 8;
/// start, end, bytes, achieved_gbps, contention, exposed, exposed_from,
/// window start, window end, flops.
pub const F64_PER_INTERVAL: usize = 10;
/// t_s and one rate per axis.
const F64_PER_SAMPLE: usize = 1 + Axis::COUNT;

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

fn op_code(op: OpKind) -> u32 {
    match op {
        OpKind::Qkv => 0,
        OpKind::Attention => 1,
        OpKind::Proj => 2,
        OpKind::MlpUp => 3,
        OpKind::MlpDown => 4,
        OpKind::Logits => 5,
        OpKind::MlpDownBackward => 6,
        OpKind::MlpUpDgrad => 7,
        OpKind::MlpUpWgrad => 8,
        OpKind::AttentionBackward => 9,
        OpKind::QkvDgrad => 10,
        OpKind::QkvWgrad => 11,
        OpKind::LogitsBackward => 12,
        OpKind::Optimizer => 13,
        OpKind::Gemm => 14,
        OpKind::AllReduce => 15,
        OpKind::ReduceScatter => 16,
        OpKind::AllGather => 17,
        OpKind::Send => 18,
        OpKind::EmbeddingAllReduce => 19,
        OpKind::Router => 20,
        OpKind::Experts => 21,
        OpKind::SharedExperts => 22,
        OpKind::ExpertsDgrad => 23,
        OpKind::ExpertsWgrad => 24,
        OpKind::SharedExpertsBackward => 25,
        OpKind::Dispatch => 26,
        OpKind::Combine => 27,
    }
}

/// Every op kind, indexed by its code.
const OPS: [OpKind; 28] = [
    OpKind::Qkv,
    OpKind::Attention,
    OpKind::Proj,
    OpKind::MlpUp,
    OpKind::MlpDown,
    OpKind::Logits,
    OpKind::MlpDownBackward,
    OpKind::MlpUpDgrad,
    OpKind::MlpUpWgrad,
    OpKind::AttentionBackward,
    OpKind::QkvDgrad,
    OpKind::QkvWgrad,
    OpKind::LogitsBackward,
    OpKind::Optimizer,
    OpKind::Gemm,
    OpKind::AllReduce,
    OpKind::ReduceScatter,
    OpKind::AllGather,
    OpKind::Send,
    OpKind::EmbeddingAllReduce,
    OpKind::Router,
    OpKind::Experts,
    OpKind::SharedExperts,
    OpKind::ExpertsDgrad,
    OpKind::ExpertsWgrad,
    OpKind::SharedExpertsBackward,
    OpKind::Dispatch,
    OpKind::Combine,
];

fn phase_code(p: Phase) -> u32 {
    match p {
        Phase::Forward => 0,
        Phase::Recompute => 1,
        Phase::Backward => 2,
        Phase::Step => 3,
    }
}

const PHASES: [Phase; 4] = [
    Phase::Forward,
    Phase::Recompute,
    Phase::Backward,
    Phase::Step,
];

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

/// Encodes a whole timeline.
pub fn encode(t: &Timeline) -> Encoded {
    let intervals = t.interval_count();
    let samples: usize = t.links.iter().map(|l| l.samples.len()).sum();
    let mut u = Vec::with_capacity(
        5 + t.gpus.len() * U32_PER_GPU
            + t.links.len() * U32_PER_LINK
            + intervals * U32_PER_INTERVAL,
    );
    let mut f = Vec::with_capacity(
        1 + t.links.len() + intervals * F64_PER_INTERVAL + samples * F64_PER_SAMPLE,
    );
    u.extend([
        MAGIC,
        VERSION,
        t.gpus.len() as u32,
        u32::from(t.reduced),
        t.links.len() as u32,
    ]);
    for g in &t.gpus {
        u.extend([
            g.rank,
            g.node,
            g.stage,
            g.dp_rank,
            g.tp_rank,
            g.represents,
            g.compute.len() as u32,
        ]);
        u.extend(g.comm.iter().map(|lane| lane.len() as u32));
    }
    for l in &t.links {
        u.extend([
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
    }
    f.push(t.step_time_s);
    f.extend(t.links.iter().map(|l| l.capacity_gbps));
    for g in &t.gpus {
        for iv in g.compute.iter().chain(g.comm.iter().flatten()) {
            let (w0, w1) = iv.window.unwrap_or((0.0, 0.0));
            u.extend([
                iv.id,
                iv.owner,
                op_code(iv.op),
                phase_code(iv.phase),
                iv.micro_batch,
                iv.layer,
                iv.chunk,
                u32::from(iv.window.is_some()) | kernel_code(iv.kernel) << 1,
            ]);
            f.extend([
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
    }
    for l in &t.links {
        for s in &l.samples {
            f.push(s.t_s);
            f.extend(s.gbps);
        }
    }
    Encoded { f64s: f, u32s: u }
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
    pub fn new(words: &impl Words) -> Result<Self, DecodeError> {
        check(words.len_u32() >= 5 && words.len_f64() >= 1, "too short")?;
        let mut head = [0u32; 5];
        words.read_u32(0, &mut head);
        check(head[0] == MAGIC && head[1] == VERSION, "unknown format")?;
        let (gpus, links) = (head[2] as usize, head[4] as usize);
        let header_u32 = 5 + gpus * U32_PER_GPU + links * U32_PER_LINK;
        check(
            words.len_u32() >= header_u32 && words.len_f64() > links,
            "header cut short",
        )?;
        let mut u = vec![0u32; header_u32 - 5];
        words.read_u32(5, &mut u);
        let mut f = vec![0f64; 1 + links];
        words.read_f64(0, &mut f);
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
                capacity_gbps: f[1 + i],
                samples: Vec::new(),
            });
        }
        let intervals: usize = lane_lens.iter().flatten().sum();
        let samples: usize = sample_lens.iter().sum();
        check(
            words.len_u32() == header_u32 + intervals * U32_PER_INTERVAL
                && words.len_f64()
                    == 1 + links + intervals * F64_PER_INTERVAL + samples * F64_PER_SAMPLE,
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
            at_f64: 1 + links,
            at_u32: header_u32,
            cursor: Cursor::Lane {
                gpu: 0,
                lane: Lane::Compute,
            },
            scratch_f64: Vec::new(),
            scratch_u32: Vec::new(),
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

    fn lane_mut(&mut self, gpu: usize, lane: Lane) -> &mut Vec<Interval> {
        let g = &mut self.timeline.gpus[gpu];
        match lane {
            Lane::Compute => &mut g.compute,
            Lane::Comm(axis) => &mut g.comm[axis.index()],
        }
    }

    /// Decodes up to `max_records` intervals or samples; true when the
    /// whole timeline is decoded.
    pub fn step(&mut self, words: &impl Words, max_records: usize) -> Result<bool, DecodeError> {
        let mut budget = max_records.max(1);
        while budget > 0 {
            match self.cursor {
                Cursor::Done => return Ok(true),
                Cursor::Lane { gpu, lane } => {
                    let left = self.lane_lens[gpu][lane.index()] - self.lane(gpu, lane).len();
                    let n = left.min(budget);
                    self.scratch_u32.resize(n * U32_PER_INTERVAL, 0);
                    self.scratch_f64.resize(n * F64_PER_INTERVAL, 0.0);
                    words.read_u32(self.at_u32, &mut self.scratch_u32);
                    words.read_f64(self.at_f64, &mut self.scratch_f64);
                    self.at_u32 += n * U32_PER_INTERVAL;
                    self.at_f64 += n * F64_PER_INTERVAL;
                    let mut decoded = Vec::with_capacity(n);
                    for (u, f) in self
                        .scratch_u32
                        .chunks_exact(U32_PER_INTERVAL)
                        .zip(self.scratch_f64.chunks_exact(F64_PER_INTERVAL))
                    {
                        let op = *OPS
                            .get(u[2] as usize)
                            .ok_or_else(|| DecodeError(format!("unknown op code {}", u[2])))?;
                        let phase = *PHASES
                            .get(u[3] as usize)
                            .ok_or_else(|| DecodeError(format!("unknown phase code {}", u[3])))?;
                        decoded.push(Interval {
                            id: u[0],
                            owner: u[1],
                            start_s: f[0],
                            end_s: f[1],
                            op,
                            phase,
                            micro_batch: u[4],
                            layer: u[5],
                            chunk: u[6],
                            bytes: f[2],
                            kernel: kernel_of(u[7] >> 1)?,
                            achieved_gbps: f[3],
                            contention_s: f[4],
                            exposed_s: f[5],
                            exposed_from_s: f[6],
                            window: (u[7] & 1 != 0).then_some((f[7], f[8])),
                            flops: f[9],
                        });
                    }
                    // The lane's room, taken when its turn comes: taken for
                    // every lane at once, the whole timeline's (about 180 MB
                    // on 1T) grew the module's memory in the task that
                    // received it, 35 to 60 ms.
                    let room = self.lane_lens[gpu][lane.index()];
                    let into = self.lane_mut(gpu, lane);
                    into.reserve_exact(room - into.len());
                    into.extend(decoded);
                    budget -= n;
                }
                Cursor::Link(i) => {
                    let left = self.sample_lens[i] - self.timeline.links[i].samples.len();
                    let n = left.min(budget);
                    self.scratch_f64.resize(n * F64_PER_SAMPLE, 0.0);
                    words.read_f64(self.at_f64, &mut self.scratch_f64);
                    self.at_f64 += n * F64_PER_SAMPLE;
                    let samples =
                        self.scratch_f64
                            .chunks_exact(F64_PER_SAMPLE)
                            .map(|s| LinkSample {
                                t_s: s[0],
                                gbps: std::array::from_fn(|a| s[1 + a]),
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
        Ok(self.cursor == Cursor::Done)
    }

    /// The decoded timeline, once [`Decoder::step`] has returned true.
    pub fn finish(self) -> Timeline {
        self.timeline
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

    #[test]
    fn a_simulated_timeline_survives_encoding_bit_for_bit() {
        let t = sample_timeline();
        assert!(t.interval_count() > 100 && !t.links.is_empty());
        let e = encode(&t);
        assert_eq!(decode_in_slices(&e, usize::MAX), t);
    }

    #[test]
    fn decoding_in_small_slices_gives_the_same_timeline() {
        let t = sample_timeline();
        let e = encode(&t);
        assert_eq!(decode_in_slices(&e, 7), t);
        assert_eq!(decode_in_slices(&e, 1), t);
    }

    #[test]
    fn every_op_kind_and_phase_round_trips_through_its_code() {
        for (i, op) in OPS.iter().enumerate() {
            assert_eq!(op_code(*op) as usize, i);
        }
        for (i, p) in PHASES.iter().enumerate() {
            assert_eq!(phase_code(*p) as usize, i);
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
        let mut e = encode(&t);
        e.f64s.pop();
        assert!(Decoder::new(&e).is_err());
        let mut e = encode(&t);
        e.u32s[0] = 7;
        assert!(Decoder::new(&e).is_err());
        assert!(Decoder::new(&Encoded::default()).is_err());
    }
}
