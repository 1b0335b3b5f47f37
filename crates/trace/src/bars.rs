//! A measured job as bars to draw: one row per GPU stream, each kernel a
//! bar classed as compute, a copy, a set, or communication of an axis
//! ("unknown" where the trace does not say), over one profiler step.
//!
//! The step drawn is each GPU's first: from the start of its step window
//! (`figures::window_of`, the window the figures use) for the window's
//! length over its steps, so that it lies on one time axis with a
//! simulated step. Times are seconds from that start.
//!
//! The bars cross a worker boundary as two flat arrays ([`Measured::to_arrays`]
//! and [`Measured::from_arrays`]): `f64`s (start, end of wait, end) and
//! `u32`s (row, class) per bar.

use serde::{Deserialize, Serialize};

use overlap_core::Axis;

use crate::classify::Class;
use crate::figures::window_of;
use crate::read::{FileTrace, Kernel};
use crate::rules::Classifier;

/// What a bar is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarClass {
    /// A kernel no communication pattern matches.
    Compute,
    /// A copy on one GPU, or to or from the host.
    Memcpy,
    /// A memory set.
    Memset,
    /// A communication kernel of this axis (`None`: the trace does not say).
    Comm(Option<Axis>),
}

/// Every class, in the order of its code on the wire.
pub const BAR_CLASSES: [BarClass; 9] = [
    BarClass::Compute,
    BarClass::Memcpy,
    BarClass::Memset,
    BarClass::Comm(Some(Axis::Tp)),
    BarClass::Comm(Some(Axis::Pp)),
    BarClass::Comm(Some(Axis::Dp)),
    BarClass::Comm(Some(Axis::Ep)),
    BarClass::Comm(Some(Axis::Cp)),
    BarClass::Comm(None),
];

impl BarClass {
    /// Its code on the wire: its place in [`BAR_CLASSES`].
    pub fn code(self) -> u32 {
        BAR_CLASSES.iter().position(|&c| c == self).unwrap_or(0) as u32
    }

    /// The class of a code, if any.
    pub fn from_code(code: u32) -> Option<BarClass> {
        BAR_CLASSES.get(code as usize).copied()
    }
}

/// One row: a stream of one GPU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeasuredRow {
    /// Which GPU, by its position in the import's GPUs (`Imported::gpus`).
    pub gpu: u32,
    /// `distributedInfo.rank` of its file.
    pub rank: Option<u64>,
    /// Its device.
    pub device: i64,
    /// The stream.
    pub stream: i64,
}

/// One kernel, clipped to its GPU's first step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bar {
    /// Index into [`Measured::rows`].
    pub row: u32,
    /// Start, seconds from its GPU's step start.
    pub start_s: f64,
    /// The end of its wait for later ranks, seconds (`start_s` when it
    /// has none): a matched collective's kernel waits first and transfers
    /// its last part (`matching`).
    pub wait_until_s: f64,
    /// End, seconds.
    pub end_s: f64,
    /// What it is.
    pub class: BarClass,
}

/// The bars of an import.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measured {
    /// Rows by GPU (in the import's order), then stream.
    pub rows: Vec<MeasuredRow>,
    /// Bars by row, then start.
    pub bars: Vec<Bar>,
    /// The longest GPU's step drawn, seconds.
    pub span_s: f64,
}

/// The bars of `files` (as read, in any order): their GPUs in the order
/// [`crate::figures_of`] lists them.
pub fn bars_of(files: &[FileTrace]) -> Measured {
    bars_with(files, &Classifier::default())
}

/// As [`bars_of`], kernels classified by `classifier`.
pub fn bars_with(files: &[FileTrace], classifier: &Classifier) -> Measured {
    bars_from(&crate::analyse::analyse(files, classifier))
}

/// The bars of an analysed import.
pub(crate) fn bars_from(a: &crate::analyse::Analysed) -> Measured {
    let mut out = Measured::default();
    let mut gpu = 0u32;
    for (f, (file, id)) in a.order.iter().zip(&a.ids).enumerate() {
        for (device, indices) in &id.devices {
            let device = *device;
            let a_match = &a.matched;
            let kernels: Vec<&Kernel> =
                indices.iter().map(|&i| &file.kernels[i as usize]).collect();
            let (steps, from, to) = window_of(file, &kernels);
            let until = from + (to - from).max(0.0) / f64::from(steps.max(1));
            out.span_s = out.span_s.max((until - from) / 1e6);
            let mut streams: Vec<i64> = kernels.iter().map(|k| k.stream).collect();
            streams.sort_unstable();
            streams.dedup();
            let first_row = out.rows.len() as u32;
            for &stream in &streams {
                out.rows.push(MeasuredRow {
                    gpu,
                    rank: file.rank,
                    device,
                    stream,
                });
            }
            let start = out.bars.len();
            for (k, &ki) in kernels.iter().zip(indices) {
                let (a, b) = (k.ts_us.max(from), k.end_us.min(until));
                if b < a || (b == a && k.end_us > k.ts_us) {
                    continue;
                }
                let class = match id.classes[k.name as usize] {
                    Class::Compute => BarClass::Compute,
                    Class::Memcpy => BarClass::Memcpy,
                    Class::Memset => BarClass::Memset,
                    Class::Comm { .. } => BarClass::Comm(id.comm[ki as usize].and_then(|c| c.axis)),
                };
                let s = streams.binary_search(&k.stream).unwrap_or(0) as u32;
                // The wait: the kernel's time before its last `transfer` µs.
                let wait_end = match a_match.transfer_of(f, ki) {
                    Some(t) => (k.end_us - t).clamp(a, b),
                    None => a,
                };
                out.bars.push(Bar {
                    row: first_row + s,
                    start_s: (a - from) / 1e6,
                    wait_until_s: (wait_end - from) / 1e6,
                    end_s: (b - from) / 1e6,
                    class,
                });
            }
            out.bars[start..]
                .sort_by(|x, y| x.row.cmp(&y.row).then(x.start_s.total_cmp(&y.start_s)));
            gpu += 1;
        }
    }
    out
}

impl Measured {
    /// The bars as two flat arrays: (start, end of wait, end) seconds, and
    /// (row, class code), per bar.
    pub fn to_arrays(&self) -> (Vec<f64>, Vec<u32>) {
        let mut f = Vec::with_capacity(3 * self.bars.len());
        let mut u = Vec::with_capacity(2 * self.bars.len());
        for b in &self.bars {
            f.extend([b.start_s, b.wait_until_s, b.end_s]);
            u.extend([b.row, b.class.code()]);
        }
        (f, u)
    }

    /// Reads back what [`Measured::to_arrays`] wrote, with its rows and span.
    pub fn from_arrays(
        rows: Vec<MeasuredRow>,
        span_s: f64,
        f64s: &[f64],
        u32s: &[u32],
    ) -> Result<Measured, String> {
        if 2 * f64s.len() != 3 * u32s.len() || !u32s.len().is_multiple_of(2) {
            return Err(format!(
                "the measured bars' arrays disagree: {} times and {} codes",
                f64s.len(),
                u32s.len()
            ));
        }
        let mut bars = Vec::with_capacity(f64s.len() / 2);
        for (t, c) in f64s.chunks_exact(3).zip(u32s.chunks_exact(2)) {
            let class = BarClass::from_code(c[1])
                .ok_or_else(|| format!("a measured bar of unknown class {}", c[1]))?;
            if c[0] as usize >= rows.len() {
                return Err(format!("a measured bar on row {} of {}", c[0], rows.len()));
            }
            bars.push(Bar {
                row: c[0],
                start_s: t[0],
                wait_until_s: t[1],
                end_s: t[2],
                class,
            });
        }
        Ok(Measured { rows, bars, span_s })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_has_its_own_code() {
        for (i, c) in BAR_CLASSES.iter().enumerate() {
            assert_eq!(c.code(), i as u32);
            assert_eq!(BarClass::from_code(i as u32), Some(*c));
        }
        assert_eq!(BarClass::from_code(BAR_CLASSES.len() as u32), None);
    }

    #[test]
    fn the_arrays_read_back_bit_for_bit_and_refuse_nonsense() {
        let m = Measured {
            rows: vec![MeasuredRow {
                gpu: 0,
                rank: Some(3),
                device: 1,
                stream: 7,
            }],
            bars: vec![Bar {
                row: 0,
                start_s: 0.1 + 0.2,
                wait_until_s: 0.31,
                end_s: 1.0 / 3.0,
                class: BarClass::Comm(Some(Axis::Dp)),
            }],
            span_s: 2.5,
        };
        let (f, u) = m.to_arrays();
        assert_eq!(
            Measured::from_arrays(m.rows.clone(), 2.5, &f, &u),
            Ok(m.clone())
        );
        assert!(Measured::from_arrays(m.rows.clone(), 2.5, &f[..2], &u).is_err());
        assert!(Measured::from_arrays(m.rows.clone(), 2.5, &f, &[0, 99]).is_err());
        assert!(Measured::from_arrays(m.rows, 2.5, &f, &[1, 0]).is_err());
    }
}
