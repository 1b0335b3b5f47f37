//! The "measured vs simulated" view: an imported trace above the simulated
//! timeline on one time axis, the rows of figures, and the sentence that
//! says where the two differ most.

use overlap_core::kineto::rank_traces;
use overlap_core::timeline::Axis;
use overlap_core::{presets, simulate, Report, Simulation};
use overlap_trace::bars::{Bar, BarClass, Measured, MeasuredRow};
use overlap_trace::{import_sources, AxisFigures, Imported};
use overlap_view::display_list::Shape;
use overlap_view::measured::{draw, rows, sentence, Simulated, LEFT_PX, MAX_MEASURED_ROWS};
use overlap_view::palette::{Role, LIGHT};
use overlap_view::svg;

/// A preset simulated, exported as Kineto traces and imported again.
fn round_trip(preset: &str) -> (Simulation, Imported, Measured) {
    let s = presets::scenario(preset).unwrap();
    let sim = simulate(&s);
    let sources: Vec<_> = rank_traces(&s, &sim.timeline)
        .into_iter()
        .map(|t| {
            let bytes = t.json.into_bytes();
            (t.file_name, bytes.len() as u64, std::io::Cursor::new(bytes))
        })
        .collect();
    let (figures, measured) = import_sources(sources).unwrap();
    (sim, figures, measured)
}

fn exposed(ms: f64) -> AxisFigures {
    AxisFigures {
        comm_ms: ms * 2.0,
        exposed_ms: ms,
        ..AxisFigures::default()
    }
}

/// The measured figures made to state axes: the report's, with `dp`'s
/// exposed time set.
fn with_axes(m: &Imported, r: &Report, dp_ms: f64) -> Imported {
    let mut m = m.clone();
    m.over_ranks.axes.clear();
    for a in Axis::ALL {
        let ms = if a == Axis::Dp {
            dp_ms
        } else {
            r.axes.get(a).exposed_ms
        };
        m.over_ranks.axes.insert(a.name().to_string(), exposed(ms));
    }
    m.over_ranks.compute_ms = r.compute_ms;
    m.over_ranks.step_ms = r.step_time_ms;
    m
}

#[test]
fn the_sentence_names_the_part_that_differs_most() {
    let (sim, m, _) = round_trip("didactic");
    let r = &sim.report;
    let sim_dp = r.axes.get(Axis::Dp).exposed_ms;
    let m2 = with_axes(&m, r, sim_dp + 19.0);
    let text = sentence(&m2, r);
    let want = format!(
        "They differ most in DP exposed: measured DP exposed {}, simulated {} (step: measured {}, simulated {}).",
        overlap_view::format::ms(sim_dp + 19.0),
        overlap_view::format::ms(sim_dp),
        overlap_view::format::ms(r.step_time_ms),
        overlap_view::format::ms(r.step_time_ms),
    );
    assert_eq!(text, want);
    // Compute off by more than DP: compute is named.
    let mut m3 = m2.clone();
    m3.over_ranks.compute_ms = r.compute_ms + 25.0;
    assert!(sentence(&m3, r).starts_with("They differ most in compute: measured compute "));
    // Equal to the report: they agree.
    let same = with_axes(&m, r, sim_dp);
    assert!(
        sentence(&same, r).starts_with("Measured and simulated agree within "),
        "{}",
        sentence(&same, r)
    );
}

#[test]
fn a_trace_without_axes_is_compared_on_exposed_communication_as_a_whole() {
    // A trace that states no process group: every collective is of an
    // unknown axis, so the axes cannot be told apart.
    let (sim, mut m, _) = round_trip("didactic");
    let r = &sim.report;
    let whole = AxisFigures {
        comm_ms: m.over_ranks.comm_ms,
        exposed_ms: m.over_ranks.exposed_ms,
        ..AxisFigures::default()
    };
    m.over_ranks.axes = [("unknown".to_string(), whole)].into_iter().collect();
    let mut m2 = m.clone();
    m2.over_ranks.compute_ms = r.compute_ms;
    m2.over_ranks.exposed_ms += 40.0;
    let text = sentence(&m2, r);
    assert!(
        text.starts_with(
            "They differ most in exposed communication: measured exposed communication "
        ),
        "{text}"
    );
    let listed = rows(&m, r);
    let labels: Vec<&str> = listed.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        labels,
        vec![
            "step",
            "compute",
            "comm",
            "exposed",
            "hidden",
            "HTA overlap",
            "TP exposed",
            "PP exposed",
            "DP exposed",
            "unknown exposed"
        ]
    );
    // The unknown axis has no simulated counterpart.
    assert_eq!(listed.last().unwrap().2, "–");
}

fn rects(
    list: &overlap_view::display_list::DisplayList,
) -> Vec<(overlap_view::display_list::Rect, Role)> {
    list.shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Rect { rect, fill } => Some((*rect, *fill)),
            _ => None,
        })
        .collect()
}

#[test]
fn measured_above_simulated_on_one_time_axis() {
    let (sim, m, measured) = round_trip("didactic");
    let caption = "Simulated: didactic".to_string();
    let side = Simulated {
        caption: caption.clone(),
        timeline: &sim.timeline,
    };
    let list = draw(&measured, &m, Some(&side), 1000.0, None);
    let texts: Vec<&str> = list.texts().collect();
    let at = |t: &str| {
        texts
            .iter()
            .position(|x| x.starts_with(t))
            .unwrap_or_else(|| panic!("no {t}: {texts:?}"))
    };
    // The measured heading and rows come first, the simulated after.
    assert!(at("Measured: ") < at(&caption));
    assert!(at("rank 0 GPU ") < at(&caption));
    assert!(at(&caption) < at("GPU 0 compute"));
    assert!(texts.contains(&"axis unknown"));
    let heading_y = |t: &str| {
        list.shapes
            .iter()
            .find_map(|s| match s {
                Shape::Text { text, y, .. } if text.starts_with(t) => Some(*y),
                _ => None,
            })
            .unwrap()
    };

    // The export states each collective's process group: measured and
    // simulated collectives alike in their axis's colour, none unknown;
    // the simulated ones with their exposed part hatched.
    let all = rects(&list);
    let above = |y: f64| y < heading_y(&caption);
    for axis in [Axis::Tp, Axis::Dp] {
        assert!(
            all.iter()
                .any(|(r, role)| *role == Role::Axis(axis) && above(r.y)),
            "{axis:?}"
        );
        assert!(
            all.iter()
                .any(|(r, role)| *role == Role::Axis(axis) && !above(r.y)),
            "{axis:?}"
        );
    }
    // (The legend's swatch is 10 px tall; bars are a row's 14.)
    assert!(!all
        .iter()
        .any(|(r, role)| *role == Role::UnknownComm && r.h == 14.0));
    assert!(list.shapes.iter().any(|s| matches!(s, Shape::Hatch { .. })));
    // One time axis: the measured step and the simulated one are the same
    // length (the export's whole µs apart), so the last bars of both end at
    // the same x.
    let split = heading_y(&caption);
    let bar_end = |above: bool| {
        all.iter()
            .filter(|(r, role)| {
                r.x >= LEFT_PX
                    && (r.y < split) == above
                    && r.y > heading_y("Measured: ")
                    && !matches!(role, Role::Lane | Role::Grid | Role::Background)
                    && r.h == 14.0
            })
            .map(|(r, _)| r.right())
            .fold(0.0, f64::max)
    };
    let (measured_end, simulated_end) = (bar_end(true), bar_end(false));
    assert!(
        (measured_end - simulated_end).abs() < 1.0,
        "{measured_end} vs {simulated_end}"
    );
    // Every colour is the palette's: the SVG writes it.
    let text = svg::write(&list, &LIGHT, "measured vs simulated");
    assert!(text.contains(LIGHT.axis[Axis::Dp.index()]));
}

#[test]
fn a_row_of_a_million_kernels_draws_about_a_rectangle_per_pixel() {
    let n = 1_000_000;
    let bars: Vec<Bar> = (0..n)
        .map(|i| Bar {
            row: 0,
            start_s: f64::from(i) * 1e-6,
            wait_until_s: f64::from(i) * 1e-6,
            end_s: f64::from(i) * 1e-6 + 4e-7,
            // Compute and communication interleaved: nothing merges by colour.
            class: if i % 2 == 0 {
                BarClass::Compute
            } else {
                BarClass::Comm(Some(Axis::Tp))
            },
        })
        .collect();
    let measured = Measured {
        rows: vec![MeasuredRow {
            gpu: 0,
            rank: Some(0),
            device: 0,
            stream: 7,
        }],
        bars,
        span_s: 1.0,
    };
    let (_, m, _) = round_trip("didactic");
    let list = draw(&measured, &m, None, 1000.0, None);
    let bars = rects(&list)
        .into_iter()
        .filter(|(_, r)| matches!(r, Role::Axis(Axis::Tp) | Role::Phase(_)))
        .count();
    assert!(list.merged);
    // One rectangle per pixel of the 838 px row (1000 px less the gutter
    // and the right margin), give or take the row's ends, and the legend's
    // four swatches of these colours (compute, backward, step, TP).
    assert!((838..=846).contains(&bars), "{bars}");
}

#[test]
fn rows_beyond_the_limit_are_counted_in_the_heading() {
    let (_, m, _) = round_trip("didactic");
    let rows: Vec<MeasuredRow> = (0..MAX_MEASURED_ROWS as i64 + 5)
        .map(|s| MeasuredRow {
            gpu: 0,
            rank: None,
            device: 0,
            stream: s,
        })
        .collect();
    let measured = Measured {
        rows,
        bars: vec![],
        span_s: 0.01,
    };
    let list = draw(&measured, &m, None, 800.0, None);
    assert!(list.shapes.iter().any(|s| matches!(s,
        Shape::Text { text, .. } if text.ends_with("(5 more streams not drawn; the figures count them)"))));
    // Rows are 14 px tall (the legend's swatch for idle is 10).
    let lanes = rects(&list)
        .iter()
        .filter(|(rect, r)| *r == Role::Lane && rect.h == 14.0)
        .count();
    assert_eq!(lanes, MAX_MEASURED_ROWS);
}

#[test]
fn copies_and_sets_are_half_bars_apart_from_compute() {
    let (_, m, _) = round_trip("didactic");
    let bar = |start_s: f64, class| Bar {
        row: 0,
        start_s,
        wait_until_s: start_s,
        end_s: start_s + 0.1,
        class,
    };
    let measured = Measured {
        rows: vec![MeasuredRow {
            gpu: 0,
            rank: None,
            device: 0,
            stream: 7,
        }],
        bars: vec![bar(0.0, BarClass::Compute), bar(0.5, BarClass::Memcpy)],
        span_s: 1.0,
    };
    let list = draw(&measured, &m, None, 800.0, None);
    let bars: Vec<_> = rects(&list)
        .into_iter()
        .filter(|(r, role)| {
            r.x >= LEFT_PX && r.w > 50.0 && matches!(role, Role::Muted | Role::Phase(_))
        })
        .collect();
    assert_eq!(bars.len(), 2, "{bars:?}");
    assert_eq!(
        (bars[0].1, bars[0].0.h),
        (Role::Phase(overlap_core::timeline::Phase::Forward), 14.0)
    );
    assert_eq!((bars[1].1, bars[1].0.h), (Role::Muted, 7.0));
    // On the row's lower half.
    assert_eq!(bars[1].0.y, bars[0].0.y + 7.0);
}

#[test]
fn notes_say_transfer_wait_late_ranks_and_what_was_not_matched() {
    // Two ranks of HTA's own traces: matched by stream, one late more often.
    let m =
        overlap_trace::import_paths(&[std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/hta/all_to_all")])
        .unwrap();
    let (sim, ..) = round_trip("didactic");
    let said = overlap_view::measured::notes(&m, &sim.report);
    // The 0.6 s measured step against the preset's: far apart, said first.
    assert!(
        said[0].starts_with("The measured step") && said[0].contains("3-fold"),
        "{said:?}"
    );
    let transfer = said
        .iter()
        .find(|s| s.starts_with("On the slowest GPU (rank 1 gpu 1)"))
        .unwrap();
    assert!(transfer.contains("waiting for later ranks"), "{transfer}");
    let late = said
        .iter()
        .find(|s| s.starts_with("Arrived last most often: rank 1 gpu 1 (7 of 10"))
        .unwrap();
    assert!(late.contains("rank 0 gpu 0 (3 of 10"), "{late}");
    assert!(
        said.iter()
            .any(|s| s.starts_with("2 of the world's 128 ranks read")),
        "{said:?}"
    );
    assert!(
        said.iter().all(|s| s.ends_with('.') && !s.ends_with("..")),
        "{said:?}"
    );
}

/// Two GPUs (ranks 0 and 1), a compute and a TP lane each; rank 0 waits
/// 2 of its all-reduce's 3 ms, rank 1 none; a 1 ms kernel at 8 ms on each.
fn two_ranks() -> Measured {
    let row = |gpu: u32, stream: i64| MeasuredRow {
        gpu,
        rank: Some(u64::from(gpu)),
        device: 0,
        stream,
    };
    let bar = |row: u32, start_s: f64, wait_until_s: f64, end_s: f64, class| Bar {
        row,
        start_s,
        wait_until_s,
        end_s,
        class,
    };
    let tp = BarClass::Comm(Some(Axis::Tp));
    Measured {
        rows: vec![row(0, 7), row(0, 13), row(1, 7), row(1, 13)],
        bars: vec![
            bar(0, 0.008, 0.008, 0.009, BarClass::Compute),
            bar(1, 0.002, 0.004, 0.005, tp),
            bar(2, 0.008, 0.008, 0.009, BarClass::Compute),
            bar(3, 0.004, 0.004, 0.005, tp),
        ],
        span_s: 0.010,
    }
}

fn waits(list: &overlap_view::display_list::DisplayList) -> Vec<overlap_view::display_list::Rect> {
    list.shapes
        .iter()
        .filter_map(|s| match s {
            // The legend's swatch is 10 px tall; a lane's wait 14.
            Shape::Wait { rect } if rect.h == 14.0 => Some(*rect),
            _ => None,
        })
        .collect()
}

#[test]
fn each_rank_has_its_lanes_and_its_wait_striped_apart_from_exposed() {
    use overlap_view::time_window::{Move, TimeWindow};
    let (_, m, _) = round_trip("didactic");
    let measured = two_ranks();
    // 1000 px: the lanes run from 150 to 988 px over 10 ms, 83.8 px a ms.
    let list = draw(&measured, &m, None, 1000.0, None);
    let w = waits(&list);
    assert_eq!(w.len(), 1, "only rank 0 waited: {w:?}");
    assert!((w[0].x - (150.0 + 2.0 * 83.8)).abs() < 0.01, "{:?}", w[0]);
    assert!((w[0].w - 2.0 * 83.8).abs() < 0.01, "{:?}", w[0]);
    // Never the exposed hatch: that is the simulated side's (none here but
    // the legend's swatch).
    let hatches = list
        .shapes
        .iter()
        .filter(|s| matches!(s, Shape::Hatch { .. }))
        .count();
    assert_eq!(hatches, 1);
    // A lane per rank and stream; rank 1's lanes 5 px further down than a
    // plain next row.
    let lanes: Vec<f64> = rects(&list)
        .iter()
        .filter(|(r, role)| *role == Role::Lane && r.h == 14.0)
        .map(|(r, _)| r.y)
        .collect();
    assert_eq!(lanes.len(), 4);
    assert_eq!(lanes[1] - lanes[0], 17.0);
    assert_eq!(lanes[2] - lanes[1], 22.0);
    let labels: Vec<String> = list
        .shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Text { text, .. } if text.starts_with("rank ") => Some(text.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(
        labels,
        [
            "rank 0 GPU 0 · s7",
            "rank 0 GPU 0 · s13",
            "rank 1 GPU 0 · s7",
            "rank 1 GPU 0 · s13"
        ]
    );

    // Zoomed in twice about the middle: 3.75 to 6.25 ms. Rank 0's wait
    // (2 to 4 ms) shows its last 0.25 ms from the lane's left edge; the
    // compute at 8 ms is outside and not drawn.
    let span = 0.010;
    let win = TimeWindow::full(span)
        .moved(Move::ZoomIn, span)
        .moved(Move::ZoomIn, span);
    assert!(
        (win.from_s - 0.00375).abs() < 1e-12 && (win.to_s - 0.00625).abs() < 1e-12,
        "{win:?}"
    );
    let list = draw(&measured, &m, None, 1000.0, Some(win));
    let w = waits(&list);
    assert_eq!(w.len(), 1);
    assert!(
        (w[0].x - 150.0).abs() < 1e-6 && (w[0].w - 0.25 / 2.5 * 838.0).abs() < 0.01,
        "{w:?}"
    );
    let compute = rects(&list)
        .iter()
        .filter(|(r, role)| matches!(role, Role::Phase(_)) && r.h == 14.0)
        .count();
    assert_eq!(compute, 0, "the compute at 8 ms lies outside 3.75-6.25 ms");
    assert!(list.shapes.iter().any(|s| matches!(s,
        Shape::Text { text, .. } if text.contains("3.75 ms to 6.25 ms of 10.00 ms"))));
    // Panned right twice: 5 to 7.5 ms; no wait inside, the TP bars' ends are.
    let win = win.moved(Move::PanRight, span).moved(Move::PanRight, span);
    let list = draw(&measured, &m, None, 1000.0, Some(win));
    assert!(waits(&list).is_empty());

    // On a phone (390 px): a narrow gutter and short labels.
    let list = draw(&measured, &m, None, 358.0, None);
    assert!(list
        .shapes
        .iter()
        .any(|s| matches!(s, Shape::Text { text, .. } if text == "r1 · s13")));
    let w = waits(&list);
    assert_eq!(w.len(), 1);
    assert!(w[0].x > 78.0 && w[0].right() < 346.0, "{w:?}");
    // The simulated side's labels are short too: "g0 comp", "g0 TP".
    let (sim, _, _) = round_trip("didactic");
    let side = Simulated {
        caption: "Simulated".to_string(),
        timeline: &sim.timeline,
    };
    let list = draw(&measured, &m, Some(&side), 358.0, None);
    let texts: Vec<&str> = list
        .shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Text { text, .. } => Some(text.as_ref()),
            _ => None,
        })
        .collect();
    assert!(
        texts.contains(&"g0 comp") && texts.contains(&"g0 TP"),
        "{texts:?}"
    );
}
