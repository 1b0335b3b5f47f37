//! A step's timeline from a shorter run of the same step: the steady
//! state's period repeated.
//!
//! Past the pipeline's fill, one more unit of micro-batches adds one
//! identical period to every lane (`steady_state`'s module doc). A run at
//! `m` micro-batches that marks three instants one period apart
//! (`workload::build::schedule::period_marks`) therefore holds everything the run
//! at `m + n * unit` draws: what starts before the third mark is the same;
//! the period between the second and third marks recurs `n` more times,
//! each `period_s` later with its micro-batches `unit` higher; and what
//! starts after the third mark (the drain, the DP buckets, the optimizer)
//! comes `n` periods later.
//!
//! That is checked on the run, not assumed ([`Repeat::holds_for`]): the
//! two marked periods must repeat bar for bar on every lane (the same ops,
//! micro-batches `unit` apart, times one period apart) and sample for
//! sample on every link; otherwise there is no repeated timeline and the
//! caller simulates the step in full.
//!
//! The short timeline and its [`Repeat`] are what the page's worker sends
//! (a seventh of the words on 1T); [`Expansion`] draws the whole step from
//! them a GPU at a time, so that the page can do it in slices.
//!
//! An op belongs to the period its first bar starts in, so that the bars a
//! collective draws on each of its GPUs stay one op (one id) in every copy.

use crate::model::op::NONE;
use crate::output::timeline::{GpuLanes, Interval, LinkLane, Timeline};
use crate::sim::link_log::LinkSample;

/// How far the differences may disagree, relative to the extrapolated sum:
/// the disagreement times the units extrapolated must stay under this part
/// of the sum. A sum far below its scale (the step, for seconds) is held to
/// `steady_state::FLOOR` of the scale instead, so that rounding of a near-zero sum does
/// not refuse a step. Both well below the 1e-9 to which the figures must
/// equal the full simulation's (`tests/steady_state.rs`).
///
/// A repeated timeline's bars are held to it too: each of the `n` copies
/// carries the two periods' disagreement once, so a bar's time may differ
/// by this part of the whole step divided by `n`.
pub const TOLERANCE: f64 = 1e-10;

/// How many units in the last place of its scale a sum's differences may
/// show while the sum stays the same at every count: its terms are
/// differences of event times of the scale's size, each rounded, so a
/// constant sum can differ between runs by a few such units (2e-14 s on the
/// 1T step's 27 s runs, about six).
pub const ROUNDING_ULPS: f64 = 64.0;

/// How a short run's timeline stands for the whole step's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Repeat {
    /// The run's three period marks, seconds from the step's start: the
    /// second period, from the second mark to the third, is the one repeated.
    pub marks_s: [f64; 3],
    /// How many more times it recurs in the whole step.
    pub periods: u32,
    /// Micro-batches per period.
    pub unit: u32,
}

/// Which part of the short run an op or a sample belongs to, by its start.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Part {
    /// Before the first mark: kept.
    Before,
    /// The first marked period, `[marks[0], marks[1])`: also kept, and
    /// compared with the second.
    First,
    /// The second marked period, `[marks[1], marks[2])`: kept, and repeated.
    Second,
    /// From the third mark on: moved `n` periods later.
    After,
}

impl Repeat {
    /// The period's length, seconds.
    pub fn period_s(&self) -> f64 {
        self.marks_s[2] - self.marks_s[1]
    }

    /// The whole step's time, seconds, from the short run's.
    pub fn step_time_s(&self, short_step_s: f64) -> f64 {
        short_step_s + f64::from(self.periods) * self.period_s()
    }

    fn part_of(&self, start_s: f64) -> Part {
        if start_s < self.marks_s[0] {
            Part::Before
        } else if start_s < self.marks_s[1] {
            Part::First
        } else if start_s < self.marks_s[2] {
            Part::Second
        } else {
            Part::After
        }
    }

    /// Whether the two marked periods of `short` repeat bar for bar and
    /// sample for sample, and the copies' ids fit in 32 bits.
    pub(crate) fn holds_for(&self, short: &Timeline) -> bool {
        let period_s = self.period_s();
        let step_s = self.step_time_s(short.step_time_s);
        let tolerance_s = TOLERANCE * step_s / f64::from(self.periods.max(1))
            + ROUNDING_ULPS * f64::EPSILON * short.step_time_s;
        if period_s.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
            || (self.marks_s[1] - self.marks_s[0] - period_s).abs() > tolerance_s
        {
            return false;
        }
        let parts = self.op_parts(short);
        if id_stride(parts.len(), self.periods).is_none() {
            return false;
        }
        let same = Same {
            period_s,
            unit: self.unit,
            tolerance_s,
        };
        let part = |bar: &Interval| parts[bar.id as usize];
        let bars = short.gpus.iter().flat_map(GpuLanes::lanes).all(|lane| {
            let first = lane.iter().filter(|b| part(b) == Part::First);
            let second = lane.iter().filter(|b| part(b) == Part::Second);
            first.clone().count() == second.clone().count()
                && first.zip(second).all(|(a, b)| same.bars(a, b))
        });
        bars && short.links.iter().all(|link| {
            let of = |p: Part| {
                link.samples
                    .iter()
                    .filter(move |s| self.part_of(s.t_s) == p)
            };
            of(Part::First).count() == of(Part::Second).count()
                && of(Part::First)
                    .zip(of(Part::Second))
                    .all(|(a, b)| same.samples(a, b))
        })
    }

    /// The part each op belongs to, by the start of its first bar on any
    /// lane, indexed by id (the engine's task ids, dense).
    fn op_parts(&self, short: &Timeline) -> Vec<Part> {
        let ops = short
            .gpus
            .iter()
            .flat_map(GpuLanes::lanes)
            .flatten()
            .map(|b| b.id as usize + 1)
            .max()
            .unwrap_or(0);
        let mut first_start_s = vec![f64::INFINITY; ops];
        for bar in short.gpus.iter().flat_map(GpuLanes::lanes).flatten() {
            let at = &mut first_start_s[bar.id as usize];
            *at = at.min(bar.start_s);
        }
        first_start_s.into_iter().map(|s| self.part_of(s)).collect()
    }
}

/// Ids of the copy `j` are `j` times this above the short run's: its `ops`
/// ids (one more than its largest, [`Repeat::op_parts`]'s length). `None`
/// when the last copy's would not fit in 32 bits.
fn id_stride(ops: usize, periods: u32) -> Option<u32> {
    let ops = u64::try_from(ops).ok()?;
    ((u64::from(periods) + 1) * ops <= u64::from(u32::MAX)).then_some(ops as u32)
}

/// The whole step's timeline from `short`, whose two periods were found to
/// repeat ([`Repeat::holds_for`]), at once; `None` when the copies' ids
/// would not fit in 32 bits.
pub fn whole(short: Timeline, repeat: Repeat) -> Option<Timeline> {
    let mut expansion = Expansion::new(short, repeat)?;
    while !expansion.step(usize::MAX) {}
    Some(expansion.finish())
}

/// The whole step's timeline drawn from a short one, a GPU at a time,
/// then a link at a time.
pub struct Expansion {
    short: Timeline,
    repeat: Repeat,
    parts: Vec<Part>,
    id_stride: u32,
    /// The whole step's GPUs so far.
    gpus: Vec<GpuLanes>,
    /// The whole step's links so far, once every GPU is drawn.
    links: Vec<LinkLane>,
}

impl Expansion {
    /// Begins drawing the step `short` and `repeat` stand for; `None` when
    /// the copies' ids would not fit in 32 bits.
    pub fn new(short: Timeline, repeat: Repeat) -> Option<Self> {
        let parts = repeat.op_parts(&short);
        let id_stride = id_stride(parts.len(), repeat.periods)?;
        Some(Self {
            parts,
            gpus: Vec::with_capacity(short.gpus.len()),
            links: Vec::with_capacity(short.links.len()),
            short,
            repeat,
            id_stride,
        })
    }

    /// Draws whole GPUs, then whole links, until about `max_records` bars
    /// and samples are drawn (one GPU or link at least); true when the
    /// step is drawn.
    pub fn step(&mut self, max_records: usize) -> bool {
        let mut drawn = 0;
        while drawn < max_records.max(1) {
            if self.gpus.len() < self.short.gpus.len() {
                let short = &mut self.short.gpus[self.gpus.len()];
                let compute = std::mem::take(&mut short.compute);
                let comm = std::mem::take(&mut short.comm);
                let gpu = GpuLanes {
                    compute: self.lane(&compute),
                    comm: std::array::from_fn(|axis| self.lane(&comm[axis])),
                    ..self.short.gpus[self.gpus.len()].clone_without_lanes()
                };
                drawn += gpu.lanes().map(<[Interval]>::len).sum::<usize>();
                self.gpus.push(gpu);
            } else if self.links.len() < self.short.links.len() {
                let samples = std::mem::take(&mut self.short.links[self.links.len()].samples);
                let link = LinkLane {
                    samples: self.samples(&samples),
                    ..self.short.links[self.links.len()].clone_without_samples()
                };
                drawn += link.samples.len();
                self.links.push(link);
            } else {
                return true;
            }
        }
        self.gpus.len() == self.short.gpus.len() && self.links.len() == self.short.links.len()
    }

    /// The whole step's timeline, once [`Expansion::step`] returned true.
    pub fn finish(self) -> Timeline {
        Timeline {
            step_time_s: self.repeat.step_time_s(self.short.step_time_s),
            reduced: self.short.reduced,
            gpus: self.gpus,
            links: self.links,
        }
    }

    fn lane(&self, lane: &[Interval]) -> Vec<Interval> {
        let part = |b: &Interval| self.parts[b.id as usize];
        let periods = self.repeat.periods;
        let second: Vec<&Interval> = lane.iter().filter(|b| part(b) == Part::Second).collect();
        let mut out = Vec::with_capacity(lane.len() + periods as usize * second.len());
        out.extend(lane.iter().filter(|b| part(b) != Part::After).cloned());
        for j in 1..=periods {
            out.extend(second.iter().map(|b| self.bar(b, j)));
        }
        out.extend(
            lane.iter()
                .filter(|b| part(b) == Part::After)
                .map(|b| self.bar(b, periods)),
        );
        // An op's bars on other GPUs may start a little after its first:
        // the lane is put back in time order where that moved one.
        if !out.is_sorted_by(|a, b| a.start_s <= b.start_s) {
            out.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        }
        out
    }

    fn samples(&self, samples: &[LinkSample]) -> Vec<LinkSample> {
        let of = |p: Part| {
            samples
                .iter()
                .filter(move |s| self.repeat.part_of(s.t_s) == p)
        };
        let periods = self.repeat.periods;
        let second: Vec<&LinkSample> = of(Part::Second).collect();
        let mut out = Vec::with_capacity(samples.len() + periods as usize * second.len());
        out.extend(
            samples
                .iter()
                .filter(|s| self.repeat.part_of(s.t_s) != Part::After)
                .cloned(),
        );
        for j in 1..=periods {
            out.extend(second.iter().map(|s| self.sample(s, j)));
        }
        out.extend(of(Part::After).map(|s| self.sample(s, periods)));
        out
    }

    /// A bar `j` periods later.
    fn bar(&self, bar: &Interval, j: u32) -> Interval {
        let later_s = f64::from(j) * self.repeat.period_s();
        Interval {
            id: bar.id + j * self.id_stride,
            start_s: bar.start_s + later_s,
            end_s: bar.end_s + later_s,
            exposed_from_s: bar.exposed_from_s + later_s,
            window: bar.window.map(|(from, to)| (from + later_s, to + later_s)),
            micro_batch: if bar.micro_batch == NONE {
                NONE
            } else {
                bar.micro_batch + j * self.repeat.unit
            },
            ..bar.clone()
        }
    }

    /// A sample `j` periods later.
    fn sample(&self, sample: &LinkSample, j: u32) -> LinkSample {
        LinkSample {
            t_s: sample.t_s + f64::from(j) * self.repeat.period_s(),
            ..*sample
        }
    }
}

/// What "the same one period later" means for a bar and a sample.
struct Same {
    period_s: f64,
    unit: u32,
    tolerance_s: f64,
}

impl Same {
    fn time(&self, a: f64, b: f64) -> bool {
        (b - a - self.period_s).abs() <= self.tolerance_s
    }

    /// A quantity that does not move with time (bytes, rates, durations).
    fn value(&self, a: f64, b: f64) -> bool {
        (a - b).abs() <= TOLERANCE * a.abs().max(b.abs()) + self.tolerance_s
    }

    fn bars(&self, a: &Interval, b: &Interval) -> bool {
        let micro_batch = if a.micro_batch == NONE {
            b.micro_batch == NONE
        } else {
            b.micro_batch == a.micro_batch + self.unit
        };
        let window = match (a.window, b.window) {
            (None, None) => true,
            (Some(x), Some(y)) => self.time(x.0, y.0) && self.time(x.1, y.1),
            _ => false,
        };
        micro_batch
            && window
            && a.owner == b.owner
            && a.op == b.op
            && a.phase == b.phase
            && a.layer == b.layer
            && a.chunk == b.chunk
            && a.kernel == b.kernel
            && self.time(a.start_s, b.start_s)
            && self.time(a.end_s, b.end_s)
            && self.time(a.exposed_from_s, b.exposed_from_s)
            && self.value(a.bytes, b.bytes)
            && self.value(a.achieved_gbps, b.achieved_gbps)
            && self.value(a.contention_s, b.contention_s)
            && self.value(a.exposed_s, b.exposed_s)
            && self.value(a.flops, b.flops)
    }

    fn samples(&self, a: &LinkSample, b: &LinkSample) -> bool {
        self.time(a.t_s, b.t_s) && a.gbps.iter().zip(&b.gbps).all(|(x, y)| self.value(*x, *y))
    }
}
