//! "Measured vs simulated": an imported profiler trace
//! (`overlap_trace`) drawn above the current scenario's
//! timeline on one time axis, as a [`DisplayList`] in [`Role`]s like the
//! simulated timeline's, so that the canvas and the SVG writer paint it;
//! the two sides' figures as rows; and one sentence that says where they
//! differ most.
//!
//! Both sides share one time axis, zoomed and panned together
//! ([`TimeWindow`]). The measured side has a lane per GPU stream, each
//! GPU's lanes one block (its rank, then a lane per stream): compute in the compute
//! colour, communication in its axis's colour where the trace says the
//! axis ([`Role::UnknownComm`] where it does not), copies and sets muted
//! and half as tall; where a collective was matched across ranks, the
//! part of each rank's kernel spent waiting for later ranks is striped
//! over its colour ([`Shape::Wait`]), apart from the exposed hatch. The simulated side has each drawn GPU's compute lane and its
//! communication lanes that hold anything, with the exposed part of each
//! collective hatched.
//! Bars that fall within half a pixel of the bar drawn before them on
//! their row are merged into it, so a row holds about one rectangle per
//! pixel however many kernels it has.

use overlap_core::timeline::{Axis, Interval, Phase, Timeline};
use overlap_core::Report;
use overlap_trace::bars::{Bar, BarClass, Measured, MeasuredRow};
use overlap_trace::compare::{compare, step_mismatch, Compared, Figure, Unit};
use overlap_trace::{gpu_label, Imported};

use crate::display_list::{text_width_px, Align, DisplayList, Rect, Shape};
use crate::format;
use crate::palette::Role;
use crate::time_window::TimeWindow;

/// The gutter left of the rows, for their labels, px.
pub const LEFT_PX: f64 = 150.0;
/// The gutter on a narrow screen (a phone), px, with shorter labels.
pub const NARROW_LEFT_PX: f64 = 78.0;
/// Pictures narrower than this take the narrow gutter, px.
pub const NARROW_BELOW_PX: f64 = 600.0;
/// Space right of the rows, px.
const RIGHT_PX: f64 = 12.0;
/// The time axis strip, px.
const AXIS_PX: f64 = 22.0;
/// A heading above each side, px.
const HEADING_PX: f64 = 22.0;
/// A row, px, and the gap below it.
const ROW_PX: f64 = 14.0;
const ROW_GAP_PX: f64 = 3.0;
/// The extra gap between two GPUs' lanes, px, so that each rank's streams
/// read as one block.
const GPU_GAP_PX: f64 = 5.0;
/// Measured rows drawn at most (the figures cover every GPU): more would
/// be a wall of streams taller than a screen.
pub const MAX_MEASURED_ROWS: usize = 32;
/// Simulated GPUs drawn at most, for the same reason.
pub const MAX_SIMULATED_GPUS: usize = 4;
/// A simulated collective wider than this gets its exposed part hatched, px.
const HATCH_MIN_PX: f64 = 3.0;
/// Space kept free between two tick labels, px.
const TICK_GAP_PX: f64 = 10.0;

/// The colour of a measured bar.
pub fn bar_role(class: BarClass) -> Role {
    match class {
        BarClass::Compute => Role::Phase(Phase::Forward),
        BarClass::Memcpy | BarClass::Memset => Role::Muted,
        BarClass::Comm(Some(axis)) => Role::Axis(axis),
        BarClass::Comm(None) => Role::UnknownComm,
    }
}

/// Where a bar of `role` sits in its row: (offset from the row's top, height).
/// Copies and sets are muted and half as tall, so that they read apart from
/// compute, whose grey is near theirs, without colour.
fn bar_span(role: Role) -> (f64, f64) {
    if role == Role::Muted {
        (ROW_PX / 2.0, ROW_PX / 2.0)
    } else {
        (0.0, ROW_PX)
    }
}

/// A measured row's label: "rank 3 GPU 0 · s7", or "r3 · s7" when `short`.
pub fn row_label(row: &MeasuredRow, short: bool) -> String {
    match (row.rank, short) {
        (Some(r), false) => format!("rank {r} GPU {} · s{}", row.device, row.stream),
        (None, false) => format!("GPU {} · s{}", row.device, row.stream),
        (Some(r), true) => format!("r{r} · s{}", row.stream),
        (None, true) => format!("g{} · s{}", row.device, row.stream),
    }
}

/// The top of each measured lane drawn, px below the first one's: a lane
/// per stream, [`GPU_GAP_PX`] more between two GPUs, at most
/// [`MAX_MEASURED_ROWS`].
pub fn lane_tops(rows: &[MeasuredRow]) -> Vec<f64> {
    let mut y = 0.0;
    let mut out = Vec::with_capacity(rows.len().min(MAX_MEASURED_ROWS));
    for (i, row) in rows.iter().enumerate().take(MAX_MEASURED_ROWS) {
        if i > 0 && rows[i - 1].gpu != row.gpu {
            y += GPU_GAP_PX;
        }
        out.push(y);
        y += ROW_PX + ROW_GAP_PX;
    }
    out
}

/// The span of the picture's time axis, seconds: the longer of the
/// measured step and the simulated one.
pub fn span_s(measured: &Measured, sim: Option<&Timeline>) -> f64 {
    sim.map_or(0.0, |t| t.step_time_s)
        .max(measured.span_s)
        .max(1e-9)
}

/// The waiting part of a bar, seconds, inside `window`: from its start to
/// the end of its wait, if it waited at all.
pub fn wait_span(bar: &Bar, window: &TimeWindow) -> Option<(f64, f64)> {
    if bar.wait_until_s <= bar.start_s {
        return None;
    }
    window
        .clip(bar.start_s, bar.wait_until_s)
        .filter(|(a, b)| b > a)
}

/// Adds bars to one row, merging those within half a pixel of the one
/// before; true when some were merged.
fn row_bars(
    list: &mut DisplayList,
    y: f64,
    x_of: &dyn Fn(f64) -> f64,
    bars: impl Iterator<Item = (f64, f64, Role)>,
) -> bool {
    let mut merged = false;
    let mut cur: Option<(f64, f64, Role)> = None;
    let flush = |list: &mut DisplayList, c: (f64, f64, Role)| {
        let (top, h) = bar_span(c.2);
        list.rect(c.2, c.0, y + top, (c.1 - c.0).max(1.0), h);
    };
    for (a, b, role) in bars {
        let (x0, x1) = (x_of(a), x_of(b));
        match cur {
            Some((c0, c1, r)) if r == role && x0 <= c1 + 0.5 => cur = Some((c0, c1.max(x1), r)),
            // Inside the pixels already painted (a rectangle is at least a
            // pixel wide): the bar before stands for it.
            Some((c0, c1, _)) if x1 <= c1.max(c0 + 1.0) => {
                merged = true;
            }
            _ => {
                if let Some(c) = cur {
                    flush(list, c);
                }
                cur = Some((x0, x1, role));
            }
        }
    }
    if let Some(c) = cur {
        flush(list, c);
    }
    merged
}

/// The rows of the simulated side: (GPU, lane index 0 for compute or 1 +
/// the axis's index) for the first [`MAX_SIMULATED_GPUS`] GPUs, their
/// empty communication lanes left out.
fn simulated_rows(t: &Timeline) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (g, gpu) in t.gpus.iter().enumerate().take(MAX_SIMULATED_GPUS) {
        out.push((g, 0));
        for axis in Axis::ALL {
            if !gpu.comm[axis.index()].is_empty() {
                out.push((g, 1 + axis.index()));
            }
        }
    }
    out
}

/// The simulated side's caption and timeline.
pub struct Simulated<'a> {
    /// What it is ("Simulated: 1F1B, TP 2, DP 4").
    pub caption: String,
    /// Its timeline.
    pub timeline: &'a Timeline,
}

/// The picture, `width` px wide: the time axis over `window` (the whole
/// of [`span_s`] when `None`), the measured lanes under their heading,
/// then the simulated rows under theirs, then a legend.
pub fn draw(
    measured: &Measured,
    figures: &Imported,
    sim: Option<&Simulated>,
    width: f64,
    window: Option<TimeWindow>,
) -> DisplayList {
    let short = width < NARROW_BELOW_PX;
    let left = if short { NARROW_LEFT_PX } else { LEFT_PX };
    let right = (width - RIGHT_PX).max(left + 40.0);
    let span = span_s(measured, sim.map(|s| s.timeline));
    let win = window.map_or(TimeWindow::full(span), |w| w.clamped(span));
    let x_of = |t: f64| win.x_of(t, left, right);
    let clip = |(a, b, role): (f64, f64, Role)| win.clip(a, b).map(|(a, b)| (a, b, role));
    let tops = lane_tops(&measured.rows);
    let m_rows = tops.len();
    let s_rows = sim.map_or(Vec::new(), |s| simulated_rows(s.timeline));
    let row_h = ROW_PX + ROW_GAP_PX;
    let m_top = AXIS_PX + HEADING_PX;
    let s_heading = m_top + tops.last().map_or(0.0, |t| t + row_h) + 4.0;
    let s_top = s_heading + HEADING_PX;
    let bottom = if sim.is_some() {
        s_top + s_rows.len() as f64 * row_h
    } else {
        s_heading
    };
    let height = bottom + 6.0 + legend_layout(left, right).1 as f64 * LEGEND_LINE_PX;
    let mut list = DisplayList::new(right + RIGHT_PX, height);
    list.rect(Role::Background, 0.0, 0.0, list.width, list.height);
    ticks(&mut list, &win, &x_of, left, right, bottom);

    // The measured side.
    let gpus = figures.gpus.len();
    let hidden_rows = measured.rows.len() - m_rows;
    let mut heading = format!(
        "Measured: {} GPU{} from {} file{}, first profiled step",
        gpus,
        if gpus == 1 { "" } else { "s" },
        figures.files.len(),
        if figures.files.len() == 1 { "" } else { "s" },
    );
    if short {
        heading = format!("Measured: {gpus} GPU{}", if gpus == 1 { "" } else { "s" });
    }
    if !win.is_full(span) {
        heading += &format!(
            ", {} to {} of {}",
            format::ms(win.from_s * 1e3),
            format::ms(win.to_s * 1e3),
            format::ms(span * 1e3)
        );
    }
    if hidden_rows > 0 && !short {
        heading += &format!(" ({hidden_rows} more streams not drawn; the figures count them)");
    }
    list.text(
        Role::Text,
        4.0,
        AXIS_PX + HEADING_PX / 2.0,
        Align::Start,
        heading,
    );
    let mut first = 0;
    for (r, row) in measured.rows.iter().enumerate().take(m_rows) {
        let y = m_top + tops[r];
        list.rect(Role::Lane, left, y, right - left, ROW_PX);
        label(&mut list, left, y, row_label(row, short));
        // Bars are sorted by row: this row's are the next run.
        let end = first + measured.bars[first..].partition_point(|b| b.row as usize == r);
        let bars = &measured.bars[first..end];
        let drawn = bars
            .iter()
            .filter_map(|b| clip((b.start_s, b.end_s, bar_role(b.class))));
        list.merged |= row_bars(&mut list, y, &x_of, drawn);
        // Each rank's wait, striped over its bars, merged as they are.
        let mut waits: Option<(f64, f64)> = None;
        for (a, b) in bars.iter().filter_map(|b| wait_span(b, &win)) {
            let (x0, x1) = (x_of(a), x_of(b).max(x_of(a) + 1.0));
            waits = match waits {
                Some((c0, c1)) if x0 <= c1 + 0.5 => Some((c0, c1.max(x1))),
                Some(c) => {
                    wait_shape(&mut list, y, c);
                    Some((x0, x1))
                }
                None => Some((x0, x1)),
            };
        }
        if let Some(c) = waits {
            wait_shape(&mut list, y, c);
        }
        first = end;
    }

    // The simulated side.
    if let Some(s) = sim {
        list.text(
            Role::Text,
            4.0,
            s_heading + HEADING_PX / 2.0,
            Align::Start,
            s.caption.clone(),
        );
        for (i, &(g, lane)) in s_rows.iter().enumerate() {
            let y = s_top + i as f64 * row_h;
            let gpu = &s.timeline.gpus[g];
            list.rect(Role::Lane, left, y, right - left, ROW_PX);
            let (bars, name): (&[Interval], &str) = if lane == 0 {
                (&gpu.compute, "compute")
            } else {
                (&gpu.comm[lane - 1], Axis::ALL[lane - 1].label())
            };
            let text = if short {
                format!("g{} {}", gpu.rank, if lane == 0 { "comp" } else { name })
            } else {
                format!("GPU {} {name}", gpu.rank)
            };
            label(&mut list, left, y, text);
            let axis = (lane > 0).then(|| Axis::ALL[lane - 1]);
            let role = |iv: &Interval| match axis {
                Some(a) => Role::Axis(a),
                None => Role::Phase(iv.phase),
            };
            list.merged |= row_bars(
                &mut list,
                y,
                &x_of,
                bars.iter()
                    .filter_map(|iv| clip((iv.start_s, iv.end_s, role(iv)))),
            );
            if axis.is_some() {
                for iv in bars.iter().filter(|iv| iv.exposed_s > 0.0) {
                    let Some((a, b)) = win.clip(iv.exposed_from_s, iv.end_s) else {
                        continue;
                    };
                    let (x0, x1) = (x_of(a), x_of(b));
                    if x1 - x0 >= HATCH_MIN_PX {
                        list.shapes.push(Shape::Hatch {
                            rect: Rect {
                                x: x0,
                                y,
                                w: x1 - x0,
                                h: ROW_PX,
                            },
                        });
                    }
                }
            }
        }
    }
    legend(&mut list, bottom + 6.0, left, right);
    list
}

/// A wait span from x0 to x1 on the lane at `y`.
fn wait_shape(list: &mut DisplayList, y: f64, (x0, x1): (f64, f64)) {
    list.shapes.push(Shape::Wait {
        rect: Rect {
            x: x0,
            y,
            w: x1 - x0,
            h: ROW_PX,
        },
    });
}

fn label(list: &mut DisplayList, left: f64, y: f64, text: String) {
    list.shapes.push(Shape::Text {
        x: left - 6.0,
        y: y + ROW_PX / 2.0,
        text: text.into(),
        fill: Role::Muted,
        align: Align::End,
        clip: Some(Rect {
            x: 0.0,
            y,
            w: left - 4.0,
            h: ROW_PX,
        }),
    });
}

/// Tick marks and labels along the top over the window, grid lines down
/// to `bottom`.
fn ticks(
    list: &mut DisplayList,
    win: &TimeWindow,
    x_of: &dyn Fn(f64) -> f64,
    left: f64,
    right: f64,
    bottom: f64,
) {
    let step = format::nice_step(win.width_s(), ((right - left) / 90.0).max(2.0));
    let mut free_from = f64::NEG_INFINITY;
    let mut k = (win.from_s / step).ceil();
    loop {
        let t = k * step;
        if t > win.to_s + win.width_s() * 1e-9 || k * step > win.from_s + 201.0 * step {
            break;
        }
        let x = x_of(t).round() + 0.5;
        list.rect(Role::Grid, x, AXIS_PX - 4.0, 1.0, bottom - AXIS_PX + 4.0);
        let text = format::tick(t, step);
        let w = text_width_px(&text);
        let (align, x0) = if x + w / 2.0 > right {
            (Align::End, x - w)
        } else {
            (Align::Middle, x - w / 2.0)
        };
        if x0 >= free_from {
            free_from = x0 + w + TICK_GAP_PX;
            list.text(Role::Muted, x, AXIS_PX / 2.0 - 1.0, align, text);
        }
        k += 1.0;
    }
}

/// A legend entry's swatch.
#[derive(Clone, Copy, PartialEq)]
enum Swatch {
    /// A bar of this colour.
    Fill(Role),
    /// The hatch of an exposed span.
    Exposed,
    /// The stripes of a rank's wait, over a communication bar.
    Wait,
}

/// What each colour means: a swatch and a word each, wrapped to `right`.
const LEGEND: [(Swatch, &str); 13] = [
    (
        Swatch::Fill(Role::Phase(Phase::Forward)),
        "compute (measured), forward",
    ),
    (Swatch::Fill(Role::Phase(Phase::Backward)), "backward"),
    (Swatch::Fill(Role::Phase(Phase::Step)), "optimizer step"),
    (Swatch::Fill(Role::Axis(Axis::Tp)), "TP"),
    (Swatch::Fill(Role::Axis(Axis::Pp)), "PP"),
    (Swatch::Fill(Role::Axis(Axis::Dp)), "DP"),
    (Swatch::Fill(Role::Axis(Axis::Ep)), "EP"),
    (Swatch::Fill(Role::Axis(Axis::Cp)), "CP"),
    (Swatch::Fill(Role::UnknownComm), "axis unknown"),
    (Swatch::Fill(Role::Muted), "copy or set"),
    (Swatch::Wait, "waiting for later ranks (measured)"),
    (Swatch::Exposed, "exposed (simulated)"),
    (Swatch::Fill(Role::Lane), "idle"),
];
/// A legend line, px.
const LEGEND_LINE_PX: f64 = 18.0;

/// Where each legend entry goes: (x, line) per entry, and the lines used.
fn legend_layout(left: f64, right: f64) -> (Vec<(f64, usize)>, usize) {
    let left = left.min(LEFT_PX / 2.0);
    let mut x = left;
    let mut line = 0;
    let mut out = Vec::with_capacity(LEGEND.len());
    for (_, text) in LEGEND {
        let w = 12.0 + 4.0 + text_width_px(text) + 14.0;
        if x + w > right + RIGHT_PX && x > left {
            line += 1;
            x = left;
        }
        out.push((x, line));
        x += w;
    }
    (out, line + 1)
}

fn legend(list: &mut DisplayList, top: f64, left: f64, right: f64) {
    let (places, _) = legend_layout(left, right);
    for ((role, text), (x, line)) in LEGEND.into_iter().zip(places) {
        let y = top + 8.0 + line as f64 * LEGEND_LINE_PX;
        let swatch = Rect {
            x,
            y: y - 5.0,
            w: 12.0,
            h: 10.0,
        };
        match role {
            Swatch::Fill(role) => {
                let (top, h) = bar_span(role);
                let scale = swatch.h / ROW_PX;
                list.rect(role, swatch.x, swatch.y + top * scale, swatch.w, h * scale);
            }
            Swatch::Exposed => list.shapes.push(Shape::Hatch { rect: swatch }),
            Swatch::Wait => {
                list.rect(Role::Axis(Axis::Tp), swatch.x, swatch.y, swatch.w, swatch.h);
                list.shapes.push(Shape::Wait { rect: swatch });
            }
        }
        if role == Swatch::Fill(Role::Lane) {
            list.shapes.push(Shape::Outline {
                rect: swatch,
                stroke: Role::Grid,
                width: 1.0,
            });
        }
        list.text(Role::Text, x + 16.0, y, Align::Start, text);
    }
}

/// The two sides' figures, as the page lists them: (label, measured,
/// simulated), each written with its unit; "–" where a side has none.
pub fn rows(m: &Imported, r: &Report) -> Vec<(String, String, String)> {
    let shown = |v: Option<f64>, unit: Unit| match (v, unit) {
        (None, _) => "–".to_string(),
        (Some(v), Unit::Ms) => format::ms(v),
        (Some(v), Unit::Share) => format::pct(v),
    };
    compare(m, r)
        .into_iter()
        .map(|c| {
            let label = c.label.trim_end_matches(" ms").to_string();
            (label, shown(c.measured, c.unit), shown(c.simulated, c.unit))
        })
        .collect()
}

/// What a row is called in the sentence.
fn called(c: &Compared) -> String {
    match &c.figure {
        Figure::Compute => "compute".to_string(),
        Figure::Exposed => "exposed communication".to_string(),
        Figure::AxisExposed(a) => format!("{} exposed", a.label()),
        _ => c.label.clone(),
    }
}

/// Where the two differ most, in one sentence: of the parts of the step
/// (compute and each axis's exposed communication; exposed communication
/// as a whole when the trace leaves some of it on an axis the simulator
/// has not), the one with the largest gap, and the two steps beside it.
pub fn sentence(m: &Imported, r: &Report) -> String {
    let all = compare(m, r);
    let by_axis = !all
        .iter()
        .any(|c| matches!(c.figure, Figure::OtherExposed(_)));
    let step = all.iter().find(|c| c.figure == Figure::Step);
    let parts = all.iter().filter(|c| match c.figure {
        Figure::Compute => true,
        Figure::Exposed => !by_axis,
        Figure::AxisExposed(_) => by_axis,
        _ => false,
    });
    let gap = |c: &&Compared| (c.measured.unwrap_or(0.0) - c.simulated.unwrap_or(0.0)).abs();
    let steps = step.map_or(String::new(), |s| {
        format!(
            " (step: measured {}, simulated {})",
            format::ms(s.measured.unwrap_or(0.0)),
            format::ms(s.simulated.unwrap_or(0.0))
        )
    });
    // The first of equal gaps: compute, then the axes in lane order.
    let Some(most) = parts.fold(None::<&Compared>, |best, c| match best {
        Some(b) if gap(&b) >= gap(&c) => Some(b),
        _ => Some(c),
    }) else {
        return String::new();
    };
    // A gap under 1% of the simulated step is within the export's rounding
    // and the profiler's own overhead: the two agree.
    let tolerance = 0.01 * r.step_time_ms;
    if gap(&most) <= tolerance {
        return format!(
            "Measured and simulated agree within {} on compute and on exposed communication{steps}.",
            format::ms(tolerance)
        );
    }
    let what = called(most);
    format!(
        "They differ most in {what}: measured {what} {}, simulated {}{steps}.",
        format::ms(most.measured.unwrap_or(0.0)),
        format::ms(most.simulated.unwrap_or(0.0))
    )
}

/// What the page says under the figures, a sentence each: a measured step
/// far from the simulated one; on the slowest measured GPU, how much of its
/// communication was transfer and how much waiting for later ranks; the
/// ranks that arrived last most often; and what the import could not say
/// (collectives not matched, communication not recognised).
pub fn notes(m: &Imported, r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(warning) = step_mismatch(m, r) {
        out.push(capitalised(&warning) + ".");
    }
    let o = &m.over_ranks;
    if let (Some(t), Some(w)) = (o.transfer.transfer_ms, o.transfer.wait_ms) {
        let slow = &m.gpus[o.slowest];
        out.push(format!(
            "On the slowest GPU ({}), {} of its {} of communication is transfer and {} waiting for later ranks: each collective matched across its ranks, its shortest kernel the transfer.",
            gpu_label(slow.rank, slow.device),
            format::ms(t),
            format::ms(o.comm_ms),
            format::ms(w)
        ));
    }
    let late: Vec<String> = o
        .late_ranks
        .iter()
        .filter(|l| l.last > 0)
        .take(3)
        .map(|l| {
            format!(
                "{} ({} of {} collectives; the others waited {} per step on it)",
                gpu_label(l.rank, l.device),
                l.last,
                l.collectives,
                format::ms(l.idle_caused_ms)
            )
        })
        .collect();
    if !late.is_empty() {
        out.push(format!("Arrived last most often: {}.", late.join("; ")));
    }
    out.extend(m.messages.iter().map(|s| capitalised(s) + "."));
    out
}

/// A sentence's first letter in capitals.
fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
