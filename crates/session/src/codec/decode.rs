//! Words back into a timeline, a bounded number of records at a time,
//! refusing a cut or foreign buffer rather than misreading it; a short
//! run's timeline is then drawn into the whole step (`Expansion`).

use overlap_core::periods::{Expansion, Repeat};
use overlap_core::timeline::{
    Algorithm, Axis, Direction, GpuLanes, Interval, Kernel, Lane, LinkClass, LinkLane, LinkSample,
    OpKind, Phase, Protocol,
};
use overlap_core::Timeline;

use super::layout::{
    axes_in, record_f64s, F64_PER_INTERVAL, F64_PER_SHORT, HEADER_F64, HEADER_U32, KERNEL_SHIFT,
    MAGIC, NO_GPU, OP_BITS, PHASE_SHIFT, SHORT_BIT, U32_PER_GPU, U32_PER_INTERVAL, U32_PER_LINK,
    VERSION, WINDOW_BIT,
};
use super::words::Words;

/// The kernel of [`kernel_code`]'s `code` (`None` for 0); an error for a
/// code past the last kernel.
pub(super) fn kernel_of(code: u32) -> Result<Option<Kernel>, DecodeError> {
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
