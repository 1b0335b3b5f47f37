//! The published results of ../shared/validation/published.md, simulated:
//! one function computes each preset's figure the way its paper measured it.

use crate::input::presets::{Preset, PRESETS};
use crate::simulate;

/// Relative tolerance of published.md.
pub const TOLERANCE: f64 = 0.10;

/// Chunk counts tried for "the best tp_chunks" (CoCoNet).
pub const CHUNK_CHOICES: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub id: &'static str,
    pub metric: &'static str,
    pub published: f64,
    pub simulated: f64,
    /// For speedups: the tp_chunks that gave it.
    pub note: String,
}

impl Comparison {
    pub fn relative_error(&self) -> f64 {
        (self.simulated - self.published) / self.published
    }

    pub fn within_tolerance(&self) -> bool {
        self.relative_error().abs() <= TOLERANCE
    }
}

/// The simulated counterpart of a preset's published figure.
pub fn compare(p: &Preset) -> Option<Comparison> {
    let fig = p.published?;
    let input = p.input();
    let (simulated, note) = match fig.metric {
        "speedup" => {
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
        "hardware_tflops_per_gpu" => {
            let r = simulate(&input.resolve().ok()?).report;
            (
                r.hardware_tflops_per_gpu,
                format!("MFU {:.1}%", r.mfu * 100.0),
            )
        }
        "step_time_s" => {
            let r = simulate(&input.resolve().ok()?).report;
            (
                r.step_time_ms / 1e3,
                format!("bubble {:.1}%", r.bubble_fraction * 100.0),
            )
        }
        _ => return None,
    };
    Some(Comparison {
        id: p.id,
        metric: fig.metric,
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

/// The overlap cases (published.md section 4): the interference model's
/// calibration figures, as a Markdown table.
pub fn overlap_table() -> String {
    crate::calibration::table()
}
