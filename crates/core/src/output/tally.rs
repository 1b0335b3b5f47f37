//! A run's additive sums, and the report's figures derived from them.
//!
//! Every figure of the report (model.md section 6) is a ratio of, or a
//! choice among, sums over the step: seconds per GPU and axis, link seconds
//! per class, FLOPs. Kept apart, the sums can be combined before the figures
//! are derived: `steady_state.rs` extrapolates them affinely in the
//! micro-batch count. A run's own tally gives exactly the figures the run
//! gives.

use crate::model::axis::Axis;
use crate::model::scenario::Scenario;
use crate::output::report::{AxisReport, HeaviestGpu, LinkReport, Report};
use crate::sim::link_log::{axis_pairs, pair_key, AXIS_PAIRS};
use crate::workload::cost::layer_cost::masked_attention_flops;

/// GPUs whose ends differ by at most this part of the step ended together
/// (see [`Tally::tied`]): far above the rounding of a step's sums, far below
/// anything the report shows.
const END_TIE: f64 = 1e-9;

/// `part / whole` clamped to 0..=1, 1 when there is no whole: the share of
/// an axis's communication, for an axis that moves nothing reads as fully
/// hidden (`AxisReport::hidden_share` keeps it out of words).
fn share(part_s: f64, whole_s: f64) -> f64 {
    if whole_s > 0.0 {
        (part_s / whole_s).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// One simulated GPU's sums over the step, seconds.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct GpuTally {
    /// The GPU's rank: HTA's figures are listed in rank order.
    pub rank: u32,
    /// When the GPU's last task ended.
    pub end_s: f64,
    /// Time its compute stream ran.
    pub compute_busy_s: f64,
    /// Time each axis had a collective in flight on it.
    pub comm_s: [f64; Axis::COUNT],
    /// Time its compute stream stood idle charged to each axis.
    pub exposed_s: [f64; Axis::COUNT],
    /// Time its compute stream stood idle charged to the bubble, the end
    /// of the step after its last task included: with the compute and the
    /// exposed time, the step.
    pub bubble_s: f64,
    /// Per axis: time a collective was in flight while the stream computed.
    pub under_compute_s: [f64; Axis::COUNT],
    /// Per axis: time a collective was in flight while the stream stood
    /// idle charged to something else (with `under_compute_s` and
    /// `exposed_s`, `comm_s`).
    pub under_idle_s: [f64; Axis::COUNT],
    /// Each axis's window (model.md 5): the compute that ran while one of
    /// its collectives might legally run.
    pub window_s: [f64; Axis::COUNT],
    /// How much longer each axis's collectives took than alone.
    pub contention_s: [f64; Axis::COUNT],
    /// HTA's communication union (zero when HTA is not tallied).
    pub hta_comm_s: f64,
    /// The part of it that compute kernels overlap.
    pub hta_overlapped_s: f64,
}

/// Where one simulated GPU's step went, seconds (model.md 5): its compute,
/// its idle time charged to each axis and to the bubble, and each axis's
/// communication in its three parts with its window. For tests that read
/// every GPU, not only the reported one ([`crate::gpu_steps`]), hence
/// behind the `reference` feature with it.
#[cfg(feature = "reference")]
#[derive(Clone, Debug, PartialEq)]
pub struct GpuStep {
    /// The GPU's rank.
    pub rank: u32,
    /// Time its compute stream ran.
    pub compute_s: f64,
    /// Idle time charged to each axis (tp, pp, dp).
    pub exposed_s: [f64; Axis::COUNT],
    /// Idle time charged to the bubble, until the step's end.
    pub bubble_s: f64,
    /// Time each axis had a collective in flight on it.
    pub comm_s: [f64; Axis::COUNT],
    /// Of `comm_s`, while the stream computed.
    pub under_compute_s: [f64; Axis::COUNT],
    /// Of `comm_s`, while the stream stood idle charged elsewhere.
    pub under_idle_s: [f64; Axis::COUNT],
    /// Each axis's window.
    pub window_s: [f64; Axis::COUNT],
}

#[cfg(feature = "reference")]
impl From<&GpuTally> for GpuStep {
    fn from(g: &GpuTally) -> Self {
        GpuStep {
            rank: g.rank,
            compute_s: g.compute_busy_s,
            exposed_s: g.exposed_s,
            bubble_s: g.bubble_s,
            comm_s: g.comm_s,
            under_compute_s: g.under_compute_s,
            under_idle_s: g.under_idle_s,
            window_s: g.window_s,
        }
    }
}

/// One link class's sums over its links.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct LinkTally {
    /// Time the links carried traffic, summed over the links.
    pub busy_s: f64,
    /// Time two or more axes shared them, summed over the links.
    pub shared_s: f64,
    /// Links of the class (a count, the same at every micro-batch count).
    pub count: usize,
    /// Per pair of axes (`link_log::axis_pairs` order), the time those
    /// two moved data on a link at once, summed over the links: additive,
    /// extrapolated like `shared_s`.
    #[serde(default)]
    pub pairs_s: [f64; AXIS_PAIRS],
}

impl LinkTally {
    /// Per pair of axes that moved data on these links at once, the part
    /// of their busy time they did (`"dp+ep"`: DP's and EP's codes in axis
    /// order), below `shared`; pairs that never met are left out.
    fn shared_by(&self) -> std::collections::BTreeMap<String, f64> {
        if self.busy_s <= 0.0 {
            return Default::default();
        }
        // Each pair's time is within the shared time, which is within the
        // busy time; an extrapolated sum may round past either.
        let shared = (self.shared_s / self.busy_s).clamp(0.0, 1.0);
        axis_pairs()
            .zip(self.pairs_s)
            .filter(|(_, pair_s)| *pair_s > 0.0)
            .map(|((a, b), pair_s)| (pair_key(a, b), (pair_s / self.busy_s).clamp(0.0, shared)))
            .collect()
    }
}

/// A run's additive sums (see the module's doc).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Tally {
    /// The step's length.
    pub step_s: f64,
    /// Per simulated GPU, in the graph's order.
    pub gpus: Vec<GpuTally>,
    /// NVLink, then the network.
    pub links: [LinkTally; 2],
    /// Model FLOPs of the whole step, every GPU represented counted.
    pub model_flops: f64,
    /// Executed FLOPs (recomputation included), likewise.
    pub executed_flops: f64,
    /// Whether HTA's sums were tallied.
    pub with_hta: bool,
}

impl GpuTally {
    /// The seconds the report reads of this GPU when it is the slowest.
    fn reported(&self) -> impl Iterator<Item = f64> + '_ {
        [self.end_s, self.compute_busy_s, self.bubble_s]
            .into_iter()
            .chain(self.comm_s)
            .chain(self.exposed_s)
            .chain(self.under_compute_s)
            .chain(self.under_idle_s)
            .chain(self.window_s)
            .chain(self.contention_s)
    }
}

impl Tally {
    /// Every sum, in a fixed order, each with the scale it is measured
    /// against: seconds against the step, link seconds against the step
    /// times the links of the class, FLOPs against themselves.
    pub fn values(&self) -> Vec<(f64, f64)> {
        let step = self.step_s.abs();
        let mut out = vec![(self.step_s, step)];
        for g in &self.gpus {
            out.extend(
                g.reported()
                    .chain([g.hta_comm_s, g.hta_overlapped_s])
                    .map(|v| (v, step)),
            );
        }
        for l in &self.links {
            let scale = step * l.count as f64;
            out.push((l.busy_s, scale));
            out.push((l.shared_s, scale));
            out.extend(l.pairs_s.map(|p| (p, scale)));
        }
        out.push((self.model_flops, self.model_flops.abs()));
        out.push((self.executed_flops, self.executed_flops.abs()));
        out
    }

    /// The same shape with the sums replaced, in [`Tally::values`]' order.
    pub fn with_values(&self, values: &[f64]) -> Tally {
        let mut v = values.iter().copied();
        let mut next = || v.next().expect("one value per sum");
        let step_s = next();
        let per_axis = |next: &mut dyn FnMut() -> f64| std::array::from_fn(|_| next());
        let gpus = self
            .gpus
            .iter()
            .map(|g| {
                let end_s = next();
                let compute_busy_s = next();
                let bubble_s = next();
                GpuTally {
                    rank: g.rank,
                    end_s,
                    compute_busy_s,
                    bubble_s,
                    comm_s: per_axis(&mut next),
                    exposed_s: per_axis(&mut next),
                    under_compute_s: per_axis(&mut next),
                    under_idle_s: per_axis(&mut next),
                    window_s: per_axis(&mut next),
                    contention_s: per_axis(&mut next),
                    hta_comm_s: next(),
                    hta_overlapped_s: next(),
                }
            })
            .collect();
        let links = self.links.map(|l| LinkTally {
            busy_s: next(),
            shared_s: next(),
            count: l.count,
            pairs_s: std::array::from_fn(|_| next()),
        });
        Tally {
            step_s,
            gpus,
            links,
            model_flops: next(),
            executed_flops: next(),
            with_hta: self.with_hta,
        }
    }

    /// This tally with `other`'s sums added (the same shape; the link
    /// counts are this one's).
    pub fn plus(&self, other: &Tally) -> Tally {
        let values: Vec<f64> = self
            .values()
            .iter()
            .zip(other.values())
            .map(|(&(a, _), (b, _))| a + b)
            .collect();
        self.with_values(&values)
    }

    /// Whether two tallies have the same shape: the same GPUs, links and
    /// sums, so that their values correspond one to one.
    pub fn same_shape(&self, other: &Tally) -> bool {
        self.with_hta == other.with_hta
            && self.gpus.len() == other.gpus.len()
            && self
                .gpus
                .iter()
                .zip(&other.gpus)
                .all(|(a, b)| a.rank == b.rank)
            && self
                .links
                .iter()
                .zip(&other.links)
                .all(|(a, b)| a.count == b.count)
    }

    /// Makes exactly equal the ends of GPUs that ended together in every one
    /// of `runs` (GPUs that finish in one collective; see [`Tally::tied`]):
    /// the run breaks their tie by the lowest index, and so must the
    /// extrapolated tally, whose ends carry rounding.
    pub fn tie_ends(&mut self, runs: &[Tally]) {
        for j in 0..self.gpus.len() {
            let tied = (0..j).find(|&i| runs.iter().all(|r| r.tied(i, j)));
            if let Some(i) = tied {
                self.gpus[j].end_s = self.gpus[i].end_s;
            }
        }
    }

    /// Whether GPUs `i` and `j` ended together: within [`END_TIE`] of the
    /// step, not only to the bit. GPUs that finish in one collective end at
    /// sums of the same durations added in different orders, so their ends
    /// may differ in the last bits, and differently from one engine to the
    /// other; the report must not read a different GPU for that.
    fn tied(&self, i: usize, j: usize) -> bool {
        (self.gpus[i].end_s - self.gpus[j].end_s).abs() <= self.end_tie_s()
    }

    /// How far apart, s, two GPUs' ends may be and still count as one
    /// ([`END_TIE`] of the step).
    fn end_tie_s(&self) -> f64 {
        END_TIE * self.step_s.abs()
    }

    /// The slowest GPU: the lowest index among those that end with the last
    /// (see [`Tally::tied`]).
    /// The GPU where axis `a`'s communication is largest (model.md 6):
    /// GPUs within the end tie of the largest count as equal, and the
    /// lowest index among them is taken, so that symmetric GPUs give one
    /// answer however rounding falls.
    fn heaviest(&self, a: usize) -> usize {
        let most = self
            .gpus
            .iter()
            .map(|g| g.comm_s[a])
            .fold(f64::NEG_INFINITY, f64::max);
        self.gpus
            .iter()
            .position(|g| g.comm_s[a] >= most - self.end_tie_s())
            .unwrap_or(0)
    }

    fn slowest(&self) -> usize {
        let last = self
            .gpus
            .iter()
            .map(|g| g.end_s)
            .fold(f64::NEG_INFINITY, f64::max);
        self.gpus
            .iter()
            .position(|g| g.end_s >= last - self.end_tie_s())
            .unwrap_or(0)
    }

    /// Whether the slowest GPU is unambiguous to `tolerance` (relative to
    /// the step): no other GPU ends within it of the slowest with different
    /// reported sums. Tallies that were computed, not run, carry rounding
    /// of that size, so a near-tie might be broken otherwise than the run
    /// would break it; GPUs alike in every reported sum may tie freely, and
    /// so may GPUs whose ends are exactly equal (see [`Tally::tie_ends`]).
    pub fn slowest_is_clear(&self, tolerance: f64) -> bool {
        let best = &self.gpus[self.slowest()];
        let within = tolerance * self.step_s.abs();
        let tie = self.end_tie_s();
        self.gpus.iter().all(|g| {
            // An exact tie is broken as the run breaks it: the lowest index.
            g.end_s == best.end_s
                || best.end_s - g.end_s > within + tie
                || g.reported()
                    .zip(best.reported())
                    .all(|(a, b)| (a - b).abs() <= within)
        })
    }

    /// The report's figures (model.md section 6). The baseline, the speedup,
    /// HTA's mean and the memory are the caller's; HTA per GPU only when
    /// tallied (empty otherwise).
    pub fn report(&self, s: &Scenario) -> Report {
        let step = self.step_s;
        let stats = &self.gpus[self.slowest()];
        let mut r = Report {
            step_time_ms: step * 1e3,
            compute_ms: stats.compute_busy_s * 1e3,
            ..Report::default()
        };
        for axis in Axis::ALL.into_iter().filter(|&a| s.has_axis(a)) {
            let a = axis.index();
            let comm = stats.comm_s[a];
            let exposed = stats.exposed_s[a];
            let heavy = &self.gpus[self.heaviest(a)];
            *r.axes.get_mut(axis) = AxisReport {
                comm_ms: comm * 1e3,
                exposed_ms: exposed * 1e3,
                hidden: share(stats.under_compute_s[a], comm),
                // Exposed time is charged only while one of the axis's
                // collectives is in flight (tests/single_charge.rs): the
                // clamp takes off rounding, a part in a billion at most.
                not_exposed: share(comm - exposed, comm),
                under_compute_ms: stats.under_compute_s[a] * 1e3,
                under_idle_ms: stats.under_idle_s[a] * 1e3,
                window_ms: stats.window_s[a] * 1e3,
                contention_ms: stats.contention_s[a] * 1e3,
                heaviest: HeaviestGpu {
                    gpu: heavy.rank,
                    comm_ms: heavy.comm_s[a] * 1e3,
                    under_compute_ms: heavy.under_compute_s[a] * 1e3,
                    exposed_ms: heavy.exposed_s[a] * 1e3,
                    under_idle_ms: heavy.under_idle_s[a] * 1e3,
                    hidden: share(heavy.under_compute_s[a], heavy.comm_s[a]),
                    window_ms: heavy.window_s[a] * 1e3,
                },
            };
        }
        for (l, out) in self
            .links
            .iter()
            .zip([&mut r.links.nvlink, &mut r.links.network])
        {
            *out = LinkReport {
                busy: if l.count > 0 && step > 0.0 {
                    l.busy_s / l.count as f64 / step
                } else {
                    0.0
                },
                shared: if l.busy_s > 0.0 {
                    l.shared_s / l.busy_s
                } else {
                    0.0
                },
                shared_by: l.shared_by(),
            };
        }
        let gpus = s.hardware.gpus() as f64;
        let per = |flops: f64| {
            if step > 0.0 {
                flops / gpus / step / 1e12
            } else {
                0.0
            }
        };
        r.model_tflops_per_gpu = per(self.model_flops);
        r.hardware_tflops_per_gpu = per(self.executed_flops);
        r.precision = s.precision();
        r.mfu = r.model_tflops_per_gpu / s.mfu_peak_tflops();
        r.causal_tflops_per_gpu = per(self.model_flops - masked_attention_flops(s));
        r.causal_mfu = r.causal_tflops_per_gpu / s.mfu_peak_tflops();
        // Charged instant by instant, once (model.md 5): not a remainder.
        r.bubble_fraction = if step > 0.0 {
            stats.bubble_s / step
        } else {
            0.0
        };
        if self.with_hta {
            let mut per: Vec<(u32, f64)> = self
                .gpus
                .iter()
                .map(|g| {
                    let ratio = if g.hta_comm_s > 0.0 {
                        g.hta_overlapped_s / g.hta_comm_s
                    } else {
                        0.0
                    };
                    (g.rank, ratio)
                })
                .collect();
            per.sort_by_key(|&(rank, _)| rank);
            r.hta_overlap_per_gpu = per.into_iter().map(|(_, ratio)| ratio).collect();
        }
        r
    }
}
