//! The panes beside the timeline: the picker and the picture the page
//! opens on (`view=` of a link), both built from the one table of panes,
//! `overlap_view::panes::PANES`.
//!
//! A pane with a picture of its own is a file here implementing
//! `pane::PlotPane` (what its job computes, what it shows above and below
//! the picture, its picture, its CSV), mounted by [`plot_pane`]'s arm for
//! its row. The frame around it is shared: a canvas painted by the timeline's
//! painter from `overlap_view::plot`'s display list, redrawn as its job's
//! replies come, the problem that stopped them, and the SVG, PNG and CSV
//! exports of what is drawn. The sweep (`sweep`) and bus-bandwidth
//! (`busbw`) panes share one job, their curves (`curves`); the layout
//! search (`search`) has its own (`searcher`).

mod busbw;
mod curves;
mod pane;
mod search;
mod searcher;
mod sweep;

use leptos::html;
use leptos::prelude::*;
use overlap_view::panes::{Pane, PaneId, PANES};
use overlap_view::plot::{self, Plot};
use wasm_bindgen::JsCast;

use self::curves::Curves;
use self::pane::{sweep_field, Frame, PlotPane};
use crate::dom;
use crate::state::AppState;
use crate::web::address::Share;
use crate::web::download::{download_canvas_png, download_text};

/// Exports are painted at twice the CSS size, as the timeline's PNG is.
const PNG_SCALE: f64 = 2.0;

/// The pane of a row of the table; none for the timeline alone.
fn plot_pane(id: PaneId) -> Option<&'static dyn PlotPane> {
    match id {
        PaneId::Timeline => None,
        PaneId::Sweep => Some(&sweep::SweepPane),
        PaneId::BusBandwidth => Some(&busbw::BusPane),
        PaneId::Search => Some(&search::SearchPane),
    }
}

/// Paints `plot` on the canvas at its CSS size.
fn paint(
    canvas: &web_sys::HtmlCanvasElement,
    plot: &Plot,
    scale: f64,
    pal: &overlap_view::palette::Palette,
) {
    crate::timeline::canvas::paint_sized(canvas, &plot.list, scale, pal);
}

/// The plot's width: the canvas's container, at least 320 px.
fn plot_width(canvas: &web_sys::HtmlCanvasElement) -> f64 {
    canvas
        .parent_element()
        .map(|p| f64::from(p.client_width()))
        .filter(|w| *w > 0.0)
        .unwrap_or(720.0)
        .max(320.0)
}

/// The exports' colours: the theme the link or the share panel fixed, else light.
fn export_palette(share: Option<Share>) -> &'static overlap_view::palette::Palette {
    crate::timeline::theme::for_export(share.and_then(|s| s.theme.get_untracked()))
}

/// The canvas's scale: the screen's pixel ratio.
fn dom_scale() -> f64 {
    dom::window()
        .map(|w| w.device_pixel_ratio())
        .filter(|r| *r > 0.0)
        .unwrap_or(1.0)
}

/// The picker of the picture beside the timeline, and the pane it opens.
#[component]
pub fn Panes() -> impl IntoView {
    let state = expect_context::<AppState>();
    let share = use_context::<Share>();
    let frame = Frame::new(state, Curves::new(), searcher::Searcher::new());
    let canvas_ref = NodeRef::<html::Canvas>::new();
    let marks = StoredValue::new_local(Vec::<plot::Mark>::new());
    // Which pane: its own parts are mounted again only when it changes,
    // not when its field or values do (a focused control stays).
    let id = Memo::new(move |_| state.pane.with(Pane::id));
    let shown = move || plot_pane(id.get());

    // The pane's job asks for what the pane and the scenario call for.
    Effect::new(move |_| {
        let pane = state.pane.get();
        let input = state.input.get();
        match plot_pane(pane.id()) {
            Some(p) => p.update(frame, &pane, &input),
            None => PANES
                .iter()
                .filter_map(|row| plot_pane(row.id))
                .for_each(|p| p.close(frame)),
        }
    });

    // Drawn as the job's replies come, and when the scenario (its current
    // value) moves.
    Effect::new(move |_| {
        let pane = plot_pane(id.get());
        if let Some(p) = pane {
            p.track(frame);
        }
        let scenario = state.resolved.get();
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        let canvas: web_sys::HtmlCanvasElement = canvas;
        let width = plot_width(&canvas);
        let picture = pane.and_then(|p| p.picture(frame, scenario.as_ref(), width));
        if let Some(p) = picture {
            let pal = crate::timeline::theme::for_element(&canvas);
            paint(&canvas, &p, dom_scale(), pal);
            marks.set_value(p.marks);
        }
    });

    let on_canvas_click = move |ev: leptos::ev::MouseEvent| {
        let Some(pane) = plot_pane(id.get_untracked()) else {
            return;
        };
        let x = f64::from(ev.offset_x());
        let hit = marks.with_value(|m| {
            m.iter()
                .min_by(|a, b| {
                    let da = (a.rect.x + a.rect.w / 2.0 - x).abs();
                    let db = (b.rect.x + b.rect.w / 2.0 - x).abs();
                    da.total_cmp(&db)
                })
                .filter(|m| (m.rect.x + m.rect.w / 2.0 - x).abs() <= m.rect.w.max(8.0))
                .map(|m| m.index)
        });
        if let Some(i) = hit {
            pane.clicked(frame, i);
        }
    };

    // Exports of what is drawn.
    let stem = move || crate::ui::export::file_stem(state);
    let kind = move || state.pane.with_untracked(|p| p.row().key);
    let current_plot = move || {
        let canvas = canvas_ref.get_untracked()?;
        let width = plot_width(&canvas);
        let scenario = state.resolved.get_untracked();
        plot_pane(id.get_untracked())?.picture(frame, scenario.as_ref(), width)
    };
    let export_svg = move |_| {
        if let Some(p) = current_plot() {
            let pal = export_palette(share);
            let svg = overlap_view::svg::write(&p.list, pal, "Overlap Lab");
            let _ = download_text(&format!("{}-{}.svg", stem(), kind()), "image/svg+xml", &svg);
        }
    };
    let export_png = move |_| {
        let Some(p) = current_plot() else { return };
        let Some(canvas) = dom::document()
            .and_then(|d| d.create_element("canvas").ok())
            .and_then(|c| c.dyn_into::<web_sys::HtmlCanvasElement>().ok())
        else {
            return;
        };
        paint(&canvas, &p, PNG_SCALE, export_palette(share));
        let _ = download_canvas_png(&format!("{}-{}.png", stem(), kind()), &canvas, |_| {});
    };
    let export_csv = move |_| {
        let text = plot_pane(id.get_untracked()).map_or_else(String::new, |p| p.csv(frame));
        let _ = download_text(&format!("{}-{}.csv", stem(), kind()), "text/csv", &text);
    };

    let picker = PANES
        .iter()
        .map(|row| {
            let pressed = move || (id.get() == row.id).to_string();
            view! {
                <button type="button" class=format!("pane-{}", row.key) aria-pressed=pressed
                    on:click=move |_| state.pane.set(Pane::opened(row.id, sweep_field(state)))>
                    {row.button}
                </button>
            }
        })
        .collect_view();
    view! {
        <section class="plot-views" aria-label="Curves">
            <div class="pane-picker" role="group" aria-label="Picture">{picker}</div>
            <Show when=move || shown().is_some()>
                <div class="plot-view" data-pane=move || state.pane.with(|p| p.row().key)>
                    {move || shown().map(|p| p.above(frame))}
                    <p class="plot-problem" role="alert">{move || shown().and_then(|p| p.problem(frame))}</p>
                    <div class="plot-canvas-wrap">
                        <canvas class="plot-canvas" node_ref=canvas_ref on:click=on_canvas_click
                            role="img" aria-label=move || state.pane.with(|p| p.row().picture)></canvas>
                    </div>
                    <div class="plot-export">
                        <button type="button" on:click=export_svg>"Download plot SVG"</button>
                        <button type="button" on:click=export_png>"Download plot PNG"</button>
                        <button type="button" on:click=export_csv>"Download plot CSV"</button>
                    </div>
                    {move || shown().map(|p| p.below(frame))}
                </div>
            </Show>
        </section>
    }
}
