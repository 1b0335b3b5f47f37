//! The published results of ../shared/validation/published.md, simulated:
//! one function computes each preset's figure the way its paper measured it.

use crate::input::presets::{Preset, PublishedMetric, PRESETS};
use crate::output::metric::Metric;
use crate::simulate;

/// Relative tolerance of published.md.
pub const TOLERANCE: f64 = 0.10;

/// Chunk counts tried for "the best tp_chunks" (CoCoNet).
pub const CHUNK_CHOICES: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// A preset's published figure beside the simulated one.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The preset's id.
    pub id: &'static str,
    /// Which figure.
    pub metric: Metric,
    /// The paper's value, in the metric's unit.
    pub published: f64,
    /// The simulator's value, in the same unit.
    pub simulated: f64,
    /// What else a reader needs: for speedups the tp_chunks that gave it,
    /// for throughputs the MFU, for step times the bubble.
    pub note: String,
}

impl Comparison {
    /// (simulated - published) / published.
    pub fn relative_error(&self) -> f64 {
        (self.simulated - self.published) / self.published
    }

    /// Whether the relative error is within [`TOLERANCE`].
    pub fn within_tolerance(&self) -> bool {
        self.relative_error().abs() <= TOLERANCE
    }
}

/// The report's metric for a published figure.
pub fn metric(m: PublishedMetric) -> Metric {
    match m {
        PublishedMetric::Speedup => Metric::Speedup,
        PublishedMetric::HardwareTflopsPerGpu => Metric::HardwareTflops,
        PublishedMetric::StepTimeS => Metric::StepTimeS,
    }
}

/// The metric of a preset's published figure (`None`: it has none).
pub fn published_metric(p: &Preset) -> Option<Metric> {
    Some(metric(p.published?.metric))
}

/// The simulated counterpart of a preset's published figure.
pub fn compare(p: &Preset) -> Option<Comparison> {
    let fig = p.published?;
    let metric = published_metric(p)?;
    let input = p.input();
    let (simulated, note) = match metric {
        // CoCoNet reports its best chunking: so does the simulation.
        Metric::Speedup => {
            let mut best = (0.0, 1);
            for chunks in CHUNK_CHOICES {
                let mut i = input.clone();
                i.overlap.tp = Some(true);
                i.overlap.tp_chunks = Some(chunks);
                let s = i.resolve().ok()?;
                let speedup = simulate(&s).report.speedup;
                if speedup > best.0 {
                    best = (speedup, chunks);
                }
            }
            (best.0, format!("best at tp_chunks {}", best.1))
        }
        _ => {
            let r = simulate(&input.resolve().ok()?).report;
            let note = match metric {
                Metric::HardwareTflops | Metric::ModelTflops => {
                    format!("MFU {:.1}%", r.mfu * 100.0)
                }
                Metric::StepTime | Metric::StepTimeS => {
                    format!("bubble {:.1}%", r.bubble_fraction * 100.0)
                }
                _ => String::new(),
            };
            (metric.get(&r), note)
        }
    };
    Some(Comparison {
        id: p.id,
        metric,
        published: fig.value,
        simulated,
        note,
    })
}

/// Every published case, as a Markdown table.
pub fn table() -> String {
    let mut out = String::from(
        "| preset | figure | published | simulated | error | within 10% | note |\n|---|---|---|---|---|---|---|\n",
    );
    for p in PRESETS {
        if let Some(c) = compare(p) {
            out += &format!(
                "| {} | {} | {:.2} | {:.2} | {:+.1}% | {} | {} |\n",
                c.id,
                c.metric,
                c.published,
                c.simulated,
                c.relative_error() * 100.0,
                if c.within_tolerance() { "yes" } else { "no" },
                c.note
            );
        }
    }
    out
}
