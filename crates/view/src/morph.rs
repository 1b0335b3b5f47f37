//! The morph between two runs: each bar of the new timeline grows out of the
//! same operation in the previous one, so a change of setting reads as bars
//! moving rather than a new picture.

use std::collections::HashMap;

use overlap_core::timeline::{Interval, Lane};

use crate::prepared::Prepared;

/// Bars above this count are not morphed: interpolating millions of bars per
/// frame would cost more than the animation is worth.
pub const MORPH_MAX_BARS: usize = 60_000;
/// How long the morph lasts, milliseconds.
pub const MORPH_MS: f64 = 450.0;

/// Per GPU and lane (by `Lane::index`), where each current bar comes from in
/// the previous timeline: (start, end) in seconds, NaN when it has no
/// counterpart.
pub type MorphSources = Vec<[Vec<(f64, f64)>; overlap_core::timeline::Lane::ALL.len()]>;

/// What identifies "the same operation" across two runs: op, phase,
/// micro-batch, layer, chunk, and which repeat of that combination it is.
type OpKey = (u32, u32, u32, u32, u32, u32);

fn op_keys(lane: &[Interval]) -> Vec<OpKey> {
    let mut seen: HashMap<OpKey, u32> = HashMap::new();
    lane.iter()
        .map(|iv| {
            let base = (
                iv.op as u32,
                iv.phase as u32,
                iv.micro_batch,
                iv.layer,
                iv.chunk,
                0,
            );
            let n = seen.entry(base).or_insert(0);
            *n += 1;
            (base.0, base.1, base.2, base.3, base.4, *n - 1)
        })
        .collect()
}

/// For each bar of `next`, the span of the same operation in `prev`. Bars of a
/// newly split GEMM have no exact counterpart: they grow out of the unsplit
/// one (same op, micro-batch and layer), so chunking reads as a split.
pub fn morph_sources(prev: &Prepared, next: &Prepared) -> MorphSources {
    let none = (f64::NAN, f64::NAN);
    (0..next.timeline.gpus.len())
        .map(|gpu| {
            std::array::from_fn(|index| {
                let Some(lane) = Lane::from_index(index) else {
                    return Vec::new();
                };
                let new_lane = next.lane(gpu, lane);
                if gpu >= prev.timeline.gpus.len() {
                    return vec![none; new_lane.len()];
                }
                let old_lane = prev.lane(gpu, lane);
                let exact: HashMap<OpKey, (f64, f64)> = op_keys(old_lane)
                    .into_iter()
                    .zip(old_lane.iter().map(|iv| (iv.start_s, iv.end_s)))
                    .collect();
                let mut loose: HashMap<(u32, u32, u32, u32), (f64, f64)> = HashMap::new();
                for iv in old_lane {
                    let k = (iv.op as u32, iv.phase as u32, iv.micro_batch, iv.layer);
                    let e = loose.entry(k).or_insert((iv.start_s, iv.end_s));
                    e.0 = e.0.min(iv.start_s);
                    e.1 = e.1.max(iv.end_s);
                }
                op_keys(new_lane)
                    .into_iter()
                    .zip(new_lane)
                    .map(|(k, iv)| {
                        exact.get(&k).copied().unwrap_or_else(|| {
                            loose
                                .get(&(iv.op as u32, iv.phase as u32, iv.micro_batch, iv.layer))
                                .copied()
                                .unwrap_or(none)
                        })
                    })
                    .collect()
            })
        })
        .collect()
}

/// Morph progress 0..1 from the elapsed time, eased in and out so that bars
/// neither jump at the start nor stop abruptly.
pub fn eased(elapsed_ms: f64) -> f64 {
    let t = (elapsed_ms / MORPH_MS).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Bar `i` of `cur` at morph progress `morph`, interpolated from where the
/// same operation was (`from`), seconds.
pub fn position(cur: &[Interval], from: Option<&[(f64, f64)]>, i: usize, morph: f64) -> (f64, f64) {
    let iv = &cur[i];
    match from.and_then(|f| f.get(i)) {
        Some(&(s0, e0)) if morph < 1.0 && s0.is_finite() => {
            (s0 + (iv.start_s - s0) * morph, e0 + (iv.end_s - e0) * morph)
        }
        _ => (iv.start_s, iv.end_s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{iv, timeline};
    use overlap_core::timeline::OpKind;

    #[test]
    fn a_split_gemm_morphs_out_of_the_unsplit_one() {
        let old = Prepared::new(timeline(vec![iv(0.0, 4.0, OpKind::Gemm, 0)], 4.0));
        let new = Prepared::new(timeline(
            vec![iv(0.0, 1.5, OpKind::Gemm, 0), iv(1.5, 3.0, OpKind::Gemm, 1)],
            3.0,
        ));
        let from = morph_sources(&old, &new);
        assert_eq!(from[0][Lane::Compute.index()], vec![(0.0, 4.0), (0.0, 4.0)]);
    }

    #[test]
    fn positions_move_from_the_old_span_to_the_new_one() {
        let cur = [iv(2.0, 4.0, OpKind::Qkv, 0)];
        let from = [(0.0, 1.0)];
        assert_eq!(position(&cur, Some(&from), 0, 0.0), (0.0, 1.0));
        assert_eq!(position(&cur, Some(&from), 0, 0.5), (1.0, 2.5));
        assert_eq!(position(&cur, Some(&from), 0, 1.0), (2.0, 4.0));
        let nothing = [(f64::NAN, f64::NAN)];
        assert_eq!(position(&cur, Some(&nothing), 0, 0.5), (2.0, 4.0));
        assert_eq!(eased(0.0), 0.0);
        assert_eq!(eased(MORPH_MS * 2.0), 1.0);
    }
}
