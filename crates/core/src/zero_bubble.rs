//! The zero-bubble rows of ../shared/validation/published.md section 5
//! (Qi et al. 2024, arXiv 2401.10241, Tables 3-4), simulated: each row's
//! 1F1B preset run again with ZB-1p, ZB-2p and interleaved 1F1B with every
//! layer its own chunk (1F1B-I), and the throughput of each relative to 1F1B.

use crate::input::parse::ScenarioInput;
use crate::input::presets::find;
use crate::model::scenario::Schedule;
use crate::simulate;

/// Relative tolerance of the section: each ratio to 1F1B within 5%.
pub const TOLERANCE: f64 = 0.05;

/// The schedules compared with 1F1B, in the paper's column order.
pub const COMPARED: [Schedule; 3] = [
    Schedule::ZeroBubble1p,
    Schedule::ZeroBubble2p,
    Schedule::Interleaved,
];

/// One row of the paper's table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// The preset running the row's model with 1F1B.
    pub preset: &'static str,
    /// Model name in the paper.
    pub model: &'static str,
    /// Micro-batches per step.
    pub micro_batches: u32,
    /// Samples per GPU per second: 1F1B, then the schedules of [`COMPARED`].
    pub throughput: [f64; 4],
    /// Memory per GPU, GB: 1F1B and ZB-2p (the same for every micro-batch count).
    pub memory_gb: (f64, f64),
}

/// The four public rows, one a line as in the paper's tables: the preset,
/// the model, micro-batches, throughput (1F1B, ZB-1p, ZB-2p, 1F1B-I) and
/// memory (1F1B, ZB-2p). Kept one a line (rustfmt would spread each row
/// over seven), so the columns read as the tables print them.
#[rustfmt::skip]
pub const ROWS: [Row; 4] = [
    row("zb-1.5b-24", "1.5B", 24, [11.8, 12.9, 14.5, 13.1], (30.0, 59.0)),
    row("zb-1.5b-64", "1.5B", 64, [13.6, 14.2, 14.9, 13.9], (30.0, 59.0)),
    row("zb-6.2b-24", "6.2B", 24, [3.50, 3.88, 4.32, 4.01], (39.0, 70.0)),
    row("zb-6.2b-64", "6.2B", 64, [4.03, 4.20, 4.39, 4.19], (39.0, 70.0)),
];

/// A [`Row`] from its columns in the order of [`ROWS`].
const fn row(
    preset: &'static str,
    model: &'static str,
    micro_batches: u32,
    throughput: [f64; 4],
    memory_gb: (f64, f64),
) -> Row {
    Row {
        preset,
        model,
        micro_batches,
        throughput,
        memory_gb,
    }
}

/// A row as simulated.
#[derive(Clone, Debug, PartialEq)]
pub struct Simulated {
    /// The row of the paper.
    pub row: Row,
    /// Step time with 1F1B, ms.
    pub one_f_one_b_ms: f64,
    /// Throughput relative to 1F1B for each of [`COMPARED`]: published.
    pub published: [f64; 3],
    /// The same, simulated (1F1B step time / the schedule's step time).
    pub simulated: [f64; 3],
    /// Memory of the fullest GPU, GB: 1F1B and ZB-2p.
    pub memory_gb: (f64, f64),
}

impl Simulated {
    /// Relative error of each simulated ratio.
    pub fn errors(&self) -> [f64; 3] {
        std::array::from_fn(|i| (self.simulated[i] - self.published[i]) / self.published[i])
    }
}

/// The row's scenario with another schedule: interleaved takes one layer
/// per chunk, as the paper's 1F1B-I.
pub fn with_schedule(row: &Row, schedule: Schedule) -> ScenarioInput {
    let mut input = find(row.preset).expect("the row's preset exists").input();
    input.parallel.schedule = Some(schedule);
    if schedule == Schedule::Interleaved {
        let layers = input.workload.layers.expect("the presets give layers");
        let pp = input.parallel.pp.expect("the presets give pp");
        input.parallel.virtual_stages = Some(layers / pp);
    }
    input
}

/// Simulates the row with 1F1B and every compared schedule.
pub fn simulate_row(row: &Row) -> Simulated {
    let run = |schedule| {
        let s = with_schedule(row, schedule)
            .resolve()
            .expect("the zero-bubble rows are valid scenarios");
        simulate(&s).report
    };
    let base = run(Schedule::OneFOneB);
    let mut simulated = [0.0; 3];
    let mut zb2p_memory = 0.0;
    for (i, schedule) in COMPARED.into_iter().enumerate() {
        let r = run(schedule);
        simulated[i] = base.step_time_ms / r.step_time_ms;
        if schedule == Schedule::ZeroBubble2p {
            zb2p_memory = r.memory_gb.total;
        }
    }
    Simulated {
        row: *row,
        one_f_one_b_ms: base.step_time_ms,
        published: std::array::from_fn(|i| row.throughput[i + 1] / row.throughput[0]),
        simulated,
        memory_gb: (base.memory_gb.total, zb2p_memory),
    }
}

/// Every row, as a Markdown table: each ratio to 1F1B published and
/// simulated, and the memory of 1F1B and ZB-2p.
pub fn table() -> String {
    let mut out = String::from(
        "| preset | model | micro-batches | schedule | published vs 1F1B | simulated vs 1F1B | error | within 5% |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let mut memory = String::from(
        "\n| model | 1F1B published GB | 1F1B simulated GB | ZB-2p published GB | ZB-2p simulated GB | ZB-2p / 1F1B published | simulated |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for row in &ROWS {
        let r = simulate_row(row);
        let errors = r.errors();
        for (i, schedule) in COMPARED.into_iter().enumerate() {
            let name = if schedule == Schedule::Interleaved {
                "1f1b-i"
            } else {
                schedule.name()
            };
            out += &format!(
                "| {} | {} | {} | {} | {:.3} | {:.3} | {:+.1}% | {} |\n",
                row.preset,
                row.model,
                row.micro_batches,
                name,
                r.published[i],
                r.simulated[i],
                errors[i] * 100.0,
                if errors[i].abs() <= TOLERANCE {
                    "yes"
                } else {
                    "no"
                }
            );
        }
        if row.micro_batches == ROWS[0].micro_batches {
            let (p1, p2) = row.memory_gb;
            let (s1, s2) = r.memory_gb;
            memory += &format!(
                "| {} | {p1:.0} | {s1:.1} | {p2:.0} | {s2:.1} | {:.2} | {:.2} |\n",
                row.model,
                p2 / p1,
                s2 / s1
            );
        }
    }
    out + &memory
}
