//! Level of detail: which bars of a lane are visible, and which are so narrow
//! that drawing them one by one would be wasted work. Narrow neighbours are
//! merged into one run per pixel span, so a lane costs at most about one
//! rectangle per pixel however many operations the step holds.

use std::ops::Range;

use overlap_core::timeline::{Axis, Interval};

/// One thing to paint on a lane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Piece {
    /// A bar wide enough to draw on its own.
    Bar {
        /// Index into the lane.
        index: usize,
        /// Left edge, px.
        x0: f64,
        /// Right edge, px.
        x1: f64,
    },
    /// Several narrow bars merged: the first one's index, how many, pixel span,
    /// and the share of their time that left compute waiting.
    Merged {
        /// Index into the lane of the first bar.
        first: usize,
        /// How many bars.
        count: usize,
        /// Left edge, px.
        x0: f64,
        /// Right edge, px.
        x1: f64,
        /// Exposed time over busy time of the merged bars, 0..1: the share
        /// of the piece's height drawn with the exposed pattern.
        exposed_share: f64,
    },
}

/// Link bandwidth as drawable columns: each sample that spans a pixel or
/// more becomes its own column; samples narrower than a pixel are averaged
/// over the pixel they fall in (time-weighted). `x_of` maps a time to x;
/// `emit(x, width, gbps)` receives the columns left to right.
pub fn link_columns(
    samples: &[overlap_core::timeline::LinkSample],
    win: (f64, f64),
    step_s: f64,
    (left, right): (f64, f64),
    x_of: impl Fn(f64) -> f64,
    mut emit: impl FnMut(f64, f64, [f64; Axis::COUNT]),
) {
    if samples.is_empty() {
        return;
    }
    let start = samples
        .partition_point(|x| x.t_s <= win.0)
        .saturating_sub(1);
    // Pixel, time-weighted bandwidth and weight of the column being averaged.
    let mut column: Option<(f64, [f64; Axis::COUNT], f64)> = None;
    let flush = |column: &mut Option<(f64, [f64; Axis::COUNT], f64)>,
                 emit: &mut dyn FnMut(f64, f64, [f64; Axis::COUNT])| {
        if let Some((px, g, w)) = column.take() {
            emit(px, 1.0, g.map(|v| v / w));
        }
    };
    for i in start..samples.len() {
        let t0 = samples[i].t_s;
        let t1 = samples.get(i + 1).map(|n| n.t_s).unwrap_or(step_s);
        if t0 > win.1 {
            break;
        }
        if t1 <= t0 {
            continue;
        }
        let x0 = x_of(t0).max(left);
        let x1 = x_of(t1).min(right);
        if x1 <= x0 {
            continue;
        }
        if x1 - x0 >= 1.0 {
            flush(&mut column, &mut emit);
            emit(x0, x1 - x0, samples[i].gbps);
            continue;
        }
        let px = x0.floor();
        match &mut column {
            Some((cx, g, w)) if *cx == px => {
                for (acc, v) in g.iter_mut().zip(samples[i].gbps) {
                    *acc += v * (x1 - x0);
                }
                *w += x1 - x0;
            }
            _ => {
                flush(&mut column, &mut emit);
                column = Some((px, samples[i].gbps.map(|v| v * (x1 - x0)), x1 - x0));
            }
        }
    }
    flush(&mut column, &mut emit);
}

/// The indices of a lane (sorted by start) that can intersect [t0, t1].
/// `max_dur_s` is the lane's longest bar, so a long bar that started before
/// t0 is still found.
pub fn visible_range(lane: &[Interval], t0: f64, t1: f64, max_dur_s: f64) -> Range<usize> {
    let lo = lane.partition_point(|iv| iv.start_s < t0 - max_dur_s);
    let hi = lane.partition_point(|iv| iv.start_s <= t1);
    lo..hi.max(lo)
}

/// Bars per block of a lane's summary ([`Block`]).
pub const BLOCK_BARS: usize = 16;

/// What the level of detail needs to know of `BLOCK_BARS` consecutive bars
/// of a lane (sorted by start) to merge them in one step when all of them
/// fall into the run being merged: on a large step, most bars do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Block {
    /// The longest bar, s.
    pub max_dur_s: f64,
    /// The widest gap from a bar's start back to the latest end of the
    /// bars before it in the block, s (negative when they overlap).
    pub max_gap_s: f64,
    /// Which bar of the block ends last (offset from the block's first).
    pub last_end: u32,
    /// Their exposed time summed, s.
    pub exposed_s: f64,
    /// Their durations summed, s.
    pub busy_s: f64,
}

impl Block {
    /// Summarises a block of bars (sorted by start).
    pub fn of(bars: &[Interval]) -> Self {
        let mut b = Block {
            max_dur_s: 0.0,
            max_gap_s: f64::NEG_INFINITY,
            last_end: 0,
            exposed_s: 0.0,
            busy_s: 0.0,
        };
        let mut end = f64::NEG_INFINITY;
        for (k, iv) in bars.iter().enumerate() {
            b.max_dur_s = b.max_dur_s.max(iv.end_s - iv.start_s);
            if k > 0 {
                b.max_gap_s = b.max_gap_s.max(iv.start_s - end);
            }
            if iv.end_s > end {
                end = iv.end_s;
                b.last_end = k as u32;
            }
            b.exposed_s += iv.exposed_s;
            b.busy_s += iv.end_s - iv.start_s;
        }
        b
    }
}

/// The summary of a lane: one [`Block`] per whole `BLOCK_BARS` bars.
pub fn blocks(lane: &[Interval]) -> Vec<Block> {
    lane.chunks_exact(BLOCK_BARS).map(Block::of).collect()
}

/// Walks `range`, placing bar i at `pos(i)` = (x0, x1) in pixels, and emits
/// pieces that fall inside [clip0, clip1]. Bars narrower than `min_px` merge
/// with neighbours closer than a pixel.
pub fn pieces(
    lane: &[Interval],
    range: Range<usize>,
    clip: (f64, f64),
    min_px: f64,
    pos: impl Fn(usize) -> (f64, f64),
    emit: impl FnMut(Piece),
) -> bool {
    walk(lane, None, range, clip, min_px, pos, emit)
}

/// [`pieces`], for bars placed linearly at `px_per_s` (no morph): a block of
/// the lane's summary whose bars all join the run being merged joins it in
/// one step. The pieces are exactly those of [`pieces`].
#[allow(clippy::too_many_arguments)]
pub fn pieces_by_blocks(
    lane: &[Interval],
    blocks: &[Block],
    px_per_s: f64,
    range: Range<usize>,
    clip: (f64, f64),
    min_px: f64,
    pos: impl Fn(usize) -> (f64, f64),
    emit: impl FnMut(Piece),
) -> bool {
    walk(
        lane,
        Some((blocks, px_per_s)),
        range,
        clip,
        min_px,
        pos,
        emit,
    )
}

/// Pixels kept clear of the merge thresholds when a block is judged by its
/// summary, so that rounding never decides differently from bar by bar.
const BLOCK_MARGIN_PX: f64 = 1e-6;

fn walk(
    lane: &[Interval],
    skip: Option<(&[Block], f64)>,
    range: Range<usize>,
    clip: (f64, f64),
    min_px: f64,
    pos: impl Fn(usize) -> (f64, f64),
    mut emit: impl FnMut(Piece),
) -> bool {
    let mut merged_any = false;
    // First bar, count, x0, x1, (exposed, busy) seconds.
    type Run = (usize, usize, f64, f64, (f64, f64));
    let mut run: Option<Run> = None;
    let flush = |run: &mut Option<Run>, emit: &mut dyn FnMut(Piece)| {
        if let Some((first, count, x0, x1, (exposed_s, busy_s))) = run.take() {
            if count == 1 {
                emit(Piece::Bar {
                    index: first,
                    x0,
                    x1: x1.max(x0 + 1.0),
                });
            } else {
                emit(Piece::Merged {
                    first,
                    count,
                    x0,
                    x1: x1.max(x0 + 1.0),
                    exposed_share: if busy_s > 0.0 {
                        (exposed_s / busy_s).clamp(0.0, 1.0)
                    } else {
                        0.0
                    },
                });
            }
        }
    };
    let mut i = range.start;
    while i < range.end {
        // A whole block joins the run at once when every bar in it is
        // narrow, inside the clip, and within a pixel of the run's end.
        if let (Some((blocks, px_per_s)), Some((_, count, _, rx1, rexp))) = (skip, &mut run) {
            if i.is_multiple_of(BLOCK_BARS) && i + BLOCK_BARS <= range.end {
                if let Some(b) = blocks.get(i / BLOCK_BARS) {
                    let x0 = pos(i).0;
                    let x1 = pos(i + b.last_end as usize).1;
                    if b.max_dur_s * px_per_s < min_px - BLOCK_MARGIN_PX
                        && b.max_gap_s * px_per_s <= 1.0 - BLOCK_MARGIN_PX
                        && x0 >= clip.0
                        && x1 <= clip.1
                        && x0 <= *rx1 + 1.0
                    {
                        *count += BLOCK_BARS;
                        *rx1 = rx1.max(x1);
                        rexp.0 += b.exposed_s;
                        rexp.1 += b.busy_s;
                        merged_any = true;
                        i += BLOCK_BARS;
                        continue;
                    }
                }
            }
        }
        let (x0, x1) = pos(i);
        i += 1;
        let index = i - 1;
        if x1 < clip.0 || x0 > clip.1 {
            continue;
        }
        let (x0, x1) = (x0.max(clip.0), x1.min(clip.1));
        let exposed = (
            lane[index].exposed_s,
            lane[index].end_s - lane[index].start_s,
        );
        if x1 - x0 >= min_px {
            flush(&mut run, &mut emit);
            emit(Piece::Bar { index, x0, x1 });
            continue;
        }
        match &mut run {
            Some((_, count, _, rx1, rexp)) if x0 <= *rx1 + 1.0 => {
                *count += 1;
                *rx1 = rx1.max(x1);
                rexp.0 += exposed.0;
                rexp.1 += exposed.1;
                merged_any = true;
            }
            _ => {
                flush(&mut run, &mut emit);
                run = Some((index, 1, x0, x1, exposed));
            }
        }
    }
    flush(&mut run, &mut emit);
    merged_any
}

#[cfg(test)]
mod tests {
    use overlap_core::timeline::LinkSample;

    #[test]
    fn link_columns_keep_wide_samples_and_average_narrow_ones() {
        let sample = |t_s: f64, g: f64| LinkSample {
            t_s,
            gbps: [g, 0.0, 0.0, 0.0, 0.0],
        };
        // x = 10 px per second; two wide samples, then four narrow ones in one pixel.
        let wide = [sample(0.0, 4.0), sample(1.0, 2.0), sample(2.0, 0.0)];
        let mut cols = Vec::new();
        super::link_columns(
            &wide,
            (0.0, 3.0),
            3.0,
            (0.0, 30.0),
            |t| t * 10.0,
            |x, w, g| cols.push((x, w, g[0])),
        );
        assert_eq!(
            cols,
            vec![(0.0, 10.0, 4.0), (10.0, 10.0, 2.0), (20.0, 10.0, 0.0)]
        );
        let narrow = [
            sample(0.0, 8.0),
            sample(0.025, 0.0),
            sample(0.05, 8.0),
            sample(0.075, 0.0),
        ];
        cols.clear();
        super::link_columns(
            &narrow,
            (0.0, 0.1),
            0.1,
            (0.0, 30.0),
            |t| t * 10.0,
            |x, w, g| cols.push((x, w, g[0])),
        );
        assert_eq!(cols, vec![(0.0, 1.0, 4.0)]);
    }

    use super::*;
    use overlap_core::timeline::{OpKind, Phase};

    fn bar(start_s: f64, end_s: f64) -> Interval {
        Interval {
            id: 0,
            owner: 0,
            exposed_from_s: 0.0,
            start_s,
            end_s,
            op: OpKind::Qkv,
            phase: Phase::Forward,
            micro_batch: 0,
            layer: 0,
            chunk: 0,
            bytes: 0.0,
            kernel: None,
            achieved_gbps: 0.0,
            contention_s: 0.0,
            exposed_s: 0.0,
            window: None,
            flops: 0.0,
        }
    }

    fn collect(lane: &[Interval], px_per_s: f64) -> Vec<Piece> {
        let mut out = Vec::new();
        pieces(
            lane,
            0..lane.len(),
            (0.0, 1e9),
            1.5,
            |i| (lane[i].start_s * px_per_s, lane[i].end_s * px_per_s),
            |p| out.push(p),
        );
        out
    }

    #[test]
    fn wide_bars_are_drawn_one_by_one() {
        let lane = vec![bar(0.0, 1.0), bar(1.0, 2.0), bar(3.0, 4.0)];
        let p = collect(&lane, 10.0);
        assert_eq!(p.len(), 3);
        assert!(p.iter().all(|x| matches!(x, Piece::Bar { .. })));
    }

    #[test]
    fn a_million_narrow_bars_cost_about_one_piece_per_pixel() {
        let lane: Vec<Interval> = (0..1_000_000)
            .map(|i| bar(i as f64, i as f64 + 0.9))
            .collect();
        // The whole lane on 1000 pixels: each pixel holds 1000 bars.
        let p = collect(&lane, 1e-3);
        assert!(p.len() <= 2, "{} pieces", p.len());
        assert!(matches!(p[0], Piece::Merged { count, .. } if count > 900_000));
    }

    #[test]
    fn gaps_wider_than_a_pixel_are_kept() {
        // Narrow bars 10 px apart stay separate runs.
        let lane: Vec<Interval> = (0..10)
            .map(|i| bar(i as f64 * 10.0, i as f64 * 10.0 + 0.5))
            .collect();
        assert_eq!(collect(&lane, 1.0).len(), 10);
    }

    #[test]
    fn the_visible_range_finds_a_long_bar_that_started_before_the_view() {
        let lane = vec![bar(0.0, 100.0), bar(100.0, 101.0), bar(200.0, 201.0)];
        let r = visible_range(&lane, 50.0, 150.0, 100.0);
        assert_eq!(r, 0..2);
    }

    /// The block summary changes nothing: the same pieces as bar by bar,
    /// on lanes of narrow, wide, overlapping and gapped bars, at many zooms
    /// and clips.
    #[test]
    fn merging_by_blocks_gives_exactly_the_pieces_of_bar_by_bar() {
        // A deterministic mix: runs of narrow bars, some wide, some gaps.
        let mut seed = 12345u64;
        let mut rnd = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut lane = Vec::new();
        let mut t = 0.0;
        for i in 0..20_000 {
            let dur = if rnd() < 0.02 {
                5.0 + 20.0 * rnd()
            } else {
                0.01 + 0.3 * rnd()
            };
            let gap = if rnd() < 0.05 {
                3.0 * rnd()
            } else {
                0.02 * rnd()
            };
            let start = t + gap - if rnd() < 0.05 { 0.05 } else { 0.0 };
            let mut b = bar(start.max(0.0), start.max(0.0) + dur);
            b.exposed_s = if i % 37 == 0 { 0.001 } else { 0.0 };
            lane.push(b);
            t = start.max(0.0) + dur;
        }
        lane.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        let summary = blocks(&lane);
        let mut skipped_some = false;
        for &(px_per_s, clip, from) in &[
            (0.05, (0.0, 1e9), 0),
            (0.5, (0.0, 1e9), 0),
            (1.0, (0.0, 1e9), 0),
            (3.0, (0.0, 1e9), 0),
            (0.5, (200.0, 900.0), 0),
            (2.0, (1000.0, 4000.0), 3),
            (10.0, (5000.0, 9000.0), 0),
        ] {
            let pos = |i: usize| (lane[i].start_s * px_per_s, lane[i].end_s * px_per_s);
            let range = from..lane.len();
            let mut plain = Vec::new();
            let m1 = pieces(&lane, range.clone(), clip, 1.5, pos, |p| plain.push(p));
            let mut fast = Vec::new();
            let m2 = pieces_by_blocks(&lane, &summary, px_per_s, range, clip, 1.5, pos, |p| {
                fast.push(p)
            });
            assert_eq!(plain, fast, "at {px_per_s} px/s, clip {clip:?}");
            assert_eq!(m1, m2);
            skipped_some |= plain.len() < lane.len() / 4;
        }
        assert!(
            skipped_some,
            "no zoom merged enough bars to exercise the blocks"
        );
    }
}
