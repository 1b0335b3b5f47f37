//! The timeline as table rows, for screen readers and for anyone who wants
//! the numbers behind a bar: the part of the step in view, capped.

use overlap_core::timeline::Lane;

use crate::format;
use crate::lod;
use crate::scene::Scene;

/// The columns, in order.
pub const COLUMNS: [&str; 10] = [
    "GPU",
    "lane",
    "op",
    "phase",
    "start",
    "duration",
    "bytes",
    "bandwidth",
    "contention",
    "exposed",
];

/// One operation as text, one cell per column.
pub type TableRow = [String; 10];

/// Rows for the visible window, GPU by GPU, lane by lane, in time order: at
/// most `max_rows` of them, and how many operations are in view.
pub fn rows(scene: &Scene, max_rows: usize) -> (Vec<TableRow>, usize) {
    let Some(p) = scene.current.as_ref() else {
        return (Vec::new(), 0);
    };
    let (t0, t1) = scene.window(1.0);
    let mut out = Vec::new();
    let mut total = 0;
    for (gi, g) in p.timeline.gpus.iter().enumerate() {
        for lane in Lane::ALL {
            let bars = p.lane(gi, lane);
            let range = lod::visible_range(bars, t0, t1, p.max_dur_s(gi, lane));
            for iv in &bars[range] {
                if iv.end_s < t0 {
                    continue;
                }
                total += 1;
                if out.len() >= max_rows {
                    continue;
                }
                let comm = |text: String| match lane {
                    Lane::Compute => String::new(),
                    Lane::Comm(_) => text,
                };
                out.push([
                    format!("{} (stage {})", g.rank, g.stage),
                    lane.label().to_string(),
                    iv.op.label().to_string(),
                    iv.phase.label().to_string(),
                    format::secs(iv.start_s),
                    format::secs(iv.end_s - iv.start_s),
                    comm(format::bytes(iv.bytes)),
                    comm(format::gbps(iv.achieved_gbps)),
                    comm(format::secs(iv.contention_s)),
                    comm(format::secs(iv.exposed_s)),
                ]);
            }
        }
    }
    (out, total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{iv, timeline};
    use overlap_core::timeline::OpKind;

    #[test]
    fn rows_cover_the_window_and_are_capped() {
        let mut s = Scene::new();
        let bars = (0..10)
            .map(|i| iv(i as f64, i as f64 + 0.5, OpKind::Qkv, 0))
            .collect();
        s.set_timeline(timeline(bars, 10.0), false, 0.0);
        let (first, total) = rows(&s, 3);
        assert_eq!((first.len(), total), (3, 10));
        assert_eq!(first[0][1], "compute");
        assert_eq!(first[0][3], "forward");
        assert_eq!(first[0][6], "", "compute has no bytes");
        s.view = crate::scene::View {
            t0: 2.2,
            t1: 4.1,
            fit: false,
        };
        assert_eq!(rows(&s, 100).1, 3, "bars 2, 3 and 4 reach into the window");
    }
}
