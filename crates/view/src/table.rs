//! The timeline as table rows, for screen readers and for anyone who wants
//! the numbers behind a bar: the part of the step in view, filtered by GPU,
//! lane and kind, a page at a time.

use overlap_core::timeline::{Lane, OpKind};

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

/// Which operations the table lists: `None` is every one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    /// One simulated GPU, by its index in the timeline.
    pub gpu: Option<usize>,
    /// One lane: the compute lane or one axis's communication.
    pub lane: Option<Lane>,
    /// One kind of operation.
    pub kind: Option<OpKind>,
}

/// One page of the table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TablePage {
    /// The page's rows.
    pub rows: Vec<TableRow>,
    /// Index of the page's first row among all that match, 0-based.
    pub first: usize,
    /// How many operations in view match the filter.
    pub total: usize,
    /// The page shown, 0-based (the one asked, or the last there is).
    pub page: usize,
    /// How many pages there are (at least 1).
    pub pages: usize,
    /// The kinds of operation in view on the filter's GPU and lane, in
    /// order of first appearance: the choices of the kind filter.
    pub kinds: Vec<OpKind>,
}

/// The operations in the visible window that pass `filter`, GPU by GPU,
/// lane by lane, in time order: page `page` of them, `page_rows` per page.
/// Only that page's rows are written out, however many operations match.
pub fn page(scene: &Scene, filter: &Filter, page: usize, page_rows: usize) -> TablePage {
    let Some(p) = scene.current.as_ref() else {
        return TablePage {
            pages: 1,
            ..TablePage::default()
        };
    };
    let page_rows = page_rows.max(1);
    let (t0, t1) = scene.window(1.0);
    let in_view = |gi: usize, lane: Lane| {
        let bars = p.lane(gi, lane);
        let range = lod::visible_range(bars, t0, t1, p.max_dur_s(gi, lane));
        bars[range].iter().filter(move |iv| iv.end_s >= t0)
    };
    let gpus = || (0..p.timeline.gpus.len()).filter(|g| filter.gpu.is_none_or(|f| f == *g));
    let lanes = || {
        Lane::ALL
            .into_iter()
            .filter(|l| filter.lane.is_none_or(|f| f == *l))
    };
    let mut kinds = Vec::new();
    let mut total: usize = 0;
    for gi in gpus() {
        for lane in lanes() {
            for iv in in_view(gi, lane) {
                if !kinds.contains(&iv.op) {
                    kinds.push(iv.op);
                }
                if filter.kind.is_none_or(|k| k == iv.op) {
                    total += 1;
                }
            }
        }
    }
    let pages = total.div_ceil(page_rows).max(1);
    let page = page.min(pages - 1);
    let first = page * page_rows;
    let mut rows = Vec::new();
    let mut index = 0;
    'all: for gi in gpus() {
        let g = &p.timeline.gpus[gi];
        for lane in lanes() {
            for iv in in_view(gi, lane).filter(|iv| filter.kind.is_none_or(|k| k == iv.op)) {
                index += 1;
                if index <= first {
                    continue;
                }
                if rows.len() >= page_rows {
                    break 'all;
                }
                let comm = |text: String| match lane {
                    Lane::Compute => String::new(),
                    Lane::Comm(_) => text,
                };
                rows.push([
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
    TablePage {
        rows,
        first,
        total,
        page,
        pages,
        kinds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{iv, timeline};
    use overlap_core::timeline::OpKind;

    #[test]
    fn rows_cover_the_window_and_come_in_pages() {
        let mut s = Scene::new();
        let bars = (0..10)
            .map(|i| iv(i as f64, i as f64 + 0.5, OpKind::Qkv, 0))
            .collect();
        s.set_timeline(timeline(bars, 10.0), false, 0.0);
        let all = Filter::default();
        let first = page(&s, &all, 0, 3);
        assert_eq!((first.rows.len(), first.total, first.pages), (3, 10, 4));
        assert_eq!(first.rows[0][1], "compute");
        assert_eq!(first.rows[0][3], "forward");
        assert_eq!(first.rows[0][6], "", "compute has no bytes");
        let last = page(&s, &all, 3, 3);
        assert_eq!((last.rows.len(), last.first), (1, 9));
        assert_eq!(
            last.rows[0][4],
            format::secs(9.0),
            "the last page holds the last bar"
        );
        assert_eq!(
            page(&s, &all, 99, 3).page,
            3,
            "past the end shows the last page"
        );
        s.view = crate::scene::View {
            t0: 2.2,
            t1: 4.1,
            fit: false,
        };
        assert_eq!(
            page(&s, &all, 0, 100).total,
            3,
            "bars 2, 3 and 4 reach into the window"
        );
    }

    #[test]
    fn filters_pick_gpu_lane_and_kind() {
        let mut s = Scene::new();
        let mut bars: Vec<_> = (0..6)
            .map(|i| iv(i as f64, i as f64 + 0.5, OpKind::Qkv, 0))
            .collect();
        bars[1].op = OpKind::Proj;
        bars[4].op = OpKind::Proj;
        s.set_timeline(timeline(bars, 6.0), false, 0.0);
        let by_kind = Filter {
            kind: Some(OpKind::Proj),
            ..Filter::default()
        };
        let p = page(&s, &by_kind, 0, 10);
        assert_eq!(p.total, 2);
        assert!(p.rows.iter().all(|r| r[2] == OpKind::Proj.label()));
        assert_eq!(p.kinds, [OpKind::Qkv, OpKind::Proj]);
        let comm = Filter {
            lane: Some(Lane::Comm(overlap_core::timeline::Axis::Tp)),
            ..Filter::default()
        };
        assert_eq!(page(&s, &comm, 0, 10).total, 0);
        let other_gpu = Filter {
            gpu: Some(1),
            ..Filter::default()
        };
        let none = page(&s, &other_gpu, 0, 10);
        assert_eq!((none.total, none.pages), (0, 1));
    }
}
