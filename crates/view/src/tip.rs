//! What the hover tooltip says, from the timeline's data.

use overlap_core::timeline::{Axis, Lane, NONE};

use crate::format;
use crate::layout::Run;
use crate::links::link_title;
use crate::scene::{Hit, Scene};

/// The tooltip's content and where the pointer was.
#[derive(Clone, Debug, PartialEq)]
pub struct Tip {
    /// Pointer x, px.
    pub x: f64,
    /// Pointer y, px.
    pub y: f64,
    /// The heading.
    pub title: String,
    /// (name, value) rows.
    pub lines: Vec<(String, String)>,
}

/// The tooltip for whatever is under the pointer at (x, y).
pub fn tip_for(scene: &Scene, hit: Hit, x: f64, y: f64) -> Option<Tip> {
    let row = |k: &str, v: String| (k.to_string(), v);
    match hit {
        Hit::Bar {
            run,
            gpu,
            lane,
            index,
        } => {
            let p = scene.run(run)?;
            let iv = p.lane(gpu, lane).get(index)?;
            let g = &p.timeline.gpus[gpu];
            let lane_name = match lane {
                Lane::Compute => lane.label().to_string(),
                Lane::Comm(axis) => format!("{} communication", axis.label()),
            };
            let mut lines = vec![
                row(
                    "GPU",
                    format!("{} (stage {}), {lane_name}", g.rank, g.stage),
                ),
                row("start", format::secs(iv.start_s)),
                row("duration", format::secs(iv.end_s - iv.start_s)),
            ];
            if iv.micro_batch != NONE {
                lines.push(row("micro-batch", iv.micro_batch.to_string()));
            }
            if iv.layer != NONE {
                lines.push(row("layer", iv.layer.to_string()));
            }
            match lane {
                Lane::Compute => {
                    lines.push(row("work", format!("{:.3} TFLOP", iv.flops / 1e12)));
                }
                Lane::Comm(_) => {
                    if let Some(kernel) = iv.kernel {
                        lines.push(row("NCCL algorithm, protocol", kernel.label()));
                    }
                    lines.push(row("bytes", format::bytes(iv.bytes)));
                    lines.push(row("achieved bandwidth", format::gbps(iv.achieved_gbps)));
                    lines.push(row("contention delay", format::secs(iv.contention_s)));
                    lines.push(row("exposed (compute waited)", format::secs(iv.exposed_s)));
                    if let Some((w0, w1)) = iv.window {
                        lines.push(row(
                            "window",
                            format!("{} to {}", format::secs(w0), format::secs(w1)),
                        ));
                    }
                }
            }
            let title = match run {
                Run::Current => format!("{} · {}", iv.op.label(), iv.phase.label()),
                Run::Before => format!(
                    "Before the last change: {} · {}",
                    iv.op.label(),
                    iv.phase.label()
                ),
            };
            Some(Tip { x, y, title, lines })
        }
        Hit::Link { link, t_s } => {
            let lk = scene.current.as_ref()?.timeline.links.get(link)?;
            let i = lk
                .samples
                .partition_point(|s| s.t_s <= t_s)
                .checked_sub(1)?;
            let s = &lk.samples[i];
            let mut lines = vec![row("at", format::secs(t_s))];
            for axis in Axis::ALL {
                lines.push((
                    format!("{} traffic", axis.label()),
                    format::gbps(s.gbps[axis.index()]),
                ));
            }
            lines.push(row("usable capacity", format::gbps(lk.capacity_gbps)));
            Some(Tip {
                x,
                y,
                title: link_title(lk),
                lines,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collectives_tip_names_the_nccl_kernel_the_model_chose() {
        let s = overlap_core::presets::scenario("didactic").unwrap();
        let mut scene = Scene::new();
        scene.set_timeline(overlap_core::simulate(&s).timeline, false, 0.0);
        let p = scene.run(Run::Current).unwrap();
        let tip_of = |lane: Lane, index: usize| {
            let hit = Hit::Bar {
                run: Run::Current,
                gpu: 0,
                lane,
                index,
            };
            tip_for(&scene, hit, 0.0, 0.0).unwrap()
        };
        let lane = Lane::Comm(Axis::Tp);
        let (index, kernel) = p
            .lane(0, lane)
            .iter()
            .enumerate()
            .find_map(|(i, iv)| Some((i, iv.kernel?)))
            .expect("a TP collective");
        let row = ("NCCL algorithm, protocol".to_string(), kernel.label());
        assert!(tip_of(lane, index).lines.contains(&row));
        // Compute has no kernel row.
        assert!(!tip_of(Lane::Compute, 0)
            .lines
            .iter()
            .any(|(k, _)| k.starts_with("NCCL")));
    }
}
