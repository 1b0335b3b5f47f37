//! The layout search's picture (`view=search`): step time against the
//! memory of the fullest GPU for every simulated layout, the Pareto front
//! joined, the best layouts outlined (their marks are the rows the page
//! lists, for clicks and tests) and the GPU's memory (`hbm_gb`) as a
//! dashed line, left of which a layout fits.

use overlap_core::search::{Found, FoundRow};

use crate::display_list::{Align, DisplayList, Rect, Shape};
use crate::palette::Role;
use crate::plot::{
    blank, nice_ticks, number_tick, polyline, value_axis, Mark, Plot, Scale, Swatch, AXIS_LABEL_PX,
};

/// A simulated layout's dot, CSS px across.
const DOT_PX: f64 = 4.0;
/// A best layout's outlined square, CSS px across.
const BEST_PX: f64 = 10.0;

/// A vertical line at `x` from `y.0` to `y.1`.
fn vline(list: &mut DisplayList, x: f64, (y0, y1): (f64, f64), stroke: Role, dashed: bool) {
    list.shapes.push(Shape::Line {
        from: (x, y0),
        to: (x, y1),
        stroke,
        dashed,
    });
}

/// The search's picture of `found` at `width` x `height` CSS px. One
/// [`Mark`] per row of `found.best`, in order.
pub fn search_plot(found: &Found, width: f64, height: f64) -> Plot {
    let (mut list, mut legend) = blank(width, height);
    let (x0, x1) = (legend.left, legend.right);
    legend.item(&mut list, Role::Muted, Swatch::Fill, "simulated layout");
    legend.item(&mut list, Role::Text, Swatch::Square, "best");
    legend.item(&mut list, Role::Text, Swatch::Dash, "GPU memory");
    legend.note(&mut list, "front: joined");
    let top_px = legend.top();
    let bottom = height - AXIS_LABEL_PX;

    let steps = found
        .points
        .iter()
        .map(|p| p.step_ms)
        .chain(found.best.iter().map(|r| r.step_ms));
    let most_ms = steps.fold(0.0, f64::max);
    let y = value_axis(
        &mut list,
        (most_ms, 4.0),
        (bottom, top_px + 8.0),
        (x0, x1),
        "step, ms",
    );
    let memories = found
        .points
        .iter()
        .map(|p| p.memory_gb)
        .chain(found.best.iter().map(|r| r.memory_gb));
    let most_gb = memories.fold(found.hbm_gb, f64::max) * 1.05;
    let ticks = nice_ticks(0.0, most_gb.max(1.0), ((x1 - x0) / 80.0).max(2.0));
    let x = Scale {
        lo: 0.0,
        hi: *ticks.last().unwrap_or(&1.0),
        log: false,
        px0: x0,
        px1: x1,
    };
    for &t in &ticks {
        let px = x.at(t);
        vline(&mut list, px, (bottom, bottom + 4.0), Role::Muted, false);
        list.text(
            Role::Muted,
            px,
            bottom + 12.0,
            Align::Middle,
            number_tick(t),
        );
    }
    list.text(
        Role::Text,
        x1,
        bottom + 26.0,
        Align::End,
        "memory of the fullest GPU, GB".to_string(),
    );

    // The GPU's memory: layouts right of it were refused before simulating.
    let hbm_x = x.at(found.hbm_gb);
    vline(&mut list, hbm_x, (bottom, top_px + 8.0), Role::Text, true);
    list.text(
        Role::Muted,
        hbm_x - 4.0,
        top_px + 14.0,
        Align::End,
        format!("{} GB per GPU", number_tick(found.hbm_gb)),
    );

    for p in &found.points {
        list.rect(
            Role::Muted,
            x.at(p.memory_gb) - DOT_PX / 2.0,
            y.at(p.step_ms) - DOT_PX / 2.0,
            DOT_PX,
            DOT_PX,
        );
    }
    // The front as a staircase's corners joined, lowest memory first.
    let mut front: Vec<&FoundRow> = found.front.iter().collect();
    front.sort_by(|a, b| a.memory_gb.total_cmp(&b.memory_gb));
    let corners: Vec<(f64, f64)> = front
        .iter()
        .map(|r| (x.at(r.memory_gb), y.at(r.step_ms)))
        .collect();
    polyline(&mut list, &corners, Role::Text, false, BEST_PX);

    let marks = found
        .best
        .iter()
        .enumerate()
        .map(|(index, r)| {
            let rect = Rect {
                x: x.at(r.memory_gb) - BEST_PX / 2.0,
                y: y.at(r.step_ms) - BEST_PX / 2.0,
                w: BEST_PX,
                h: BEST_PX,
            };
            list.shapes.push(Shape::Outline {
                rect,
                stroke: Role::Text,
                width: 1.5,
            });
            Mark {
                index,
                rect,
                value: r.description.clone(),
            }
        })
        .collect();
    Plot { list, marks }
}

/// How long the page's search took and over how many workers: "Searched
/// in 12.3 s over 4 workers." (one worker: "on one worker").
pub fn time_taken(search_ms: f64, workers: u32) -> String {
    let over = match workers {
        0 | 1 => "on one worker".to_string(),
        n => format!("over {n} workers"),
    };
    format!("Searched in {} {over}.", crate::format::ms(search_ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::search::FoundPoint;
    use overlap_core::search::{Objective, Refusals};
    use overlap_core::ScenarioInput;

    fn row(rank: usize, step_ms: f64, memory_gb: f64, on_front: bool) -> FoundRow {
        FoundRow {
            rank,
            description: format!("layout {rank}"),
            step_ms,
            memory_gb,
            mfu: 0.4,
            on_front,
            input: ScenarioInput::default(),
        }
    }

    #[test]
    fn the_time_taken_names_the_workers() {
        assert_eq!(
            time_taken(12_345.0, 4),
            "Searched in 12.35 s over 4 workers."
        );
        assert_eq!(time_taken(850.0, 1), "Searched in 850.0 ms on one worker.");
    }

    #[test]
    fn every_best_layout_is_marked_where_its_figures_put_it() {
        let best = vec![row(1, 100.0, 60.0, true), row(2, 120.0, 30.0, true)];
        let found = Found {
            gpus: 8,
            objective: Objective::Step,
            hbm_gb: 80.0,
            space: 10,
            refusals: Refusals::default(),
            pruned: 3,
            simulated: 7,
            winner: None,
            given: None,
            best: best.clone(),
            front: best,
            points: vec![FoundPoint {
                step_ms: 150.0,
                memory_gb: 70.0,
            }],
        };
        let plot = search_plot(&found, 600.0, 380.0);
        assert_eq!(plot.marks.len(), 2);
        // Faster is lower; less memory is further left.
        let (a, b) = (&plot.marks[0].rect, &plot.marks[1].rect);
        assert!(a.y > b.y, "the faster layout is lower on the step axis");
        assert!(a.x > b.x, "the larger layout is right of the smaller");
        let texts: Vec<&str> = plot.list.texts().collect();
        assert!(
            texts.iter().any(|t| t.contains("80 GB per GPU")),
            "{texts:?}"
        );
        assert!(texts
            .iter()
            .any(|t| t.contains("memory of the fullest GPU")));
    }
}
