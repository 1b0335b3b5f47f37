//! Which layers each virtual pipeline stage runs (interface.md): `layers`
//! need not divide by the stages. They are shared as evenly as they can be,
//! and the first and last virtual stages, which also run the embedding and
//! the logits with the loss, take the smaller shares. When only one of them
//! can, the last keeps the smaller share (the logits GEMM is the heavier
//! extra work). A scenario's `parallel.pipeline_layout`, when it states
//! one, gives each virtual stage its own count instead, zero for a stage
//! of the embedding or the loss alone (`model::pipeline_layout`).

use std::ops::Range;

use crate::model::scenario::Parallel;

/// The layers of every virtual stage of `p` (pp x virtual_stages of them,
/// in layer order) for a model of `layers` layers: as its layout gives
/// them, or the even split. A layout validation refused (which the
/// builder never sees) counts as absent.
pub fn split(p: &Parallel, layers: u32) -> Vec<Range<u32>> {
    let stages = p.pp * p.virtual_stages;
    let counts = p
        .pipeline_layout
        .as_ref()
        .and_then(|l| l.check(stages, layers).ok());
    match counts {
        Some(counts) => {
            let mut next = 0;
            counts
                .iter()
                .map(|c| {
                    let r = next..next + c.layers;
                    next = r.end;
                    r
                })
                .collect()
        }
        None => (0..stages)
            .map(|vs| stage_layers(layers, stages, vs))
            .collect(),
    }
}

/// The layers of virtual stage `vs` among `stages` (layer indices).
pub fn stage_layers(layers: u32, stages: u32, vs: u32) -> Range<u32> {
    let base = layers / stages;
    let extra = layers % stages;
    // Extra layers go to the middle stages first, one each.
    let middle = extra.min(stages.saturating_sub(2));
    let first_extra = extra - middle;
    let count = base + u32::from(vs == 0) * first_extra + u32::from(vs >= 1 && vs <= middle);
    let first = vs * base + u32::from(vs > 0) * first_extra + vs.saturating_sub(1).min(middle);
    first..first + count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_cover_every_layer_once_first_and_last_smallest() {
        for stages in 1..=12 {
            for layers in stages..=40 {
                let mut next = 0;
                let counts: Vec<u32> = (0..stages)
                    .map(|vs| {
                        let r = stage_layers(layers, stages, vs);
                        assert_eq!(r.start, next, "{layers} over {stages}");
                        next = r.end;
                        r.len() as u32
                    })
                    .collect();
                assert_eq!(next, layers);
                let (min, max) = (*counts.iter().min().unwrap(), *counts.iter().max().unwrap());
                assert!(max - min <= 1 && min >= 1, "{counts:?}");
                assert_eq!(counts[stages as usize - 1], min, "{counts:?}");
                if stages > 2 && layers % stages <= stages - 2 {
                    assert_eq!(counts[0], min, "{counts:?}");
                }
            }
        }
        // Even splits are as before.
        assert_eq!(stage_layers(24, 4, 2), 12..18);
        // 30 layers on 4 stages: 7, 8, 8, 7.
        let shares: Vec<usize> = (0..4).map(|vs| stage_layers(30, 4, vs).len()).collect();
        assert_eq!(shares, [7, 8, 8, 7]);
    }
}
