//! The bus-bandwidth pane (`view=busbw`): every collective's bus
//! bandwidth against message size on the scenario's hardware, nccl-tests'
//! sizes with NCCL's choice of algorithm and protocol, one curve per
//! collective from the curves' worker (`curves`), with the published
//! all-reduce points and the size of the scenario's own TP call marked.

use leptos::prelude::*;
use overlap_core::scenario::CollectiveOp;
use overlap_core::sweep;
use overlap_core::{Scenario, ScenarioInput};
use overlap_view::panes::Pane;
use overlap_view::plot::{self, BusCurve, Plot};

use super::pane::{Frame, PlotPane, PLOT_HEIGHT_PX};

/// The bus-bandwidth pane.
pub struct BusPane;

/// A collective as nccl-tests names it.
fn collective_name(c: CollectiveOp) -> &'static str {
    match c {
        CollectiveOp::AllReduce => "all_reduce",
        CollectiveOp::AllGather => "all_gather",
        CollectiveOp::ReduceScatter => "reduce_scatter",
        CollectiveOp::AllToAll => "all_to_all",
    }
}

impl PlotPane for BusPane {
    fn update(&self, frame: Frame, _pane: &Pane, input: &ScenarioInput) {
        frame.curves().bus(&input.hardware);
    }

    fn close(&self, frame: Frame) {
        frame.curves().close();
    }

    fn track(&self, frame: Frame) {
        frame.curves().version.track();
    }

    fn problem(&self, frame: Frame) -> Option<String> {
        frame.curves().problem.get()
    }

    fn above(&self, _frame: Frame) -> AnyView {
        ().into_any()
    }

    fn below(&self, frame: Frame) -> AnyView {
        view! {
            <details class="bus-table">
                <summary>"Every point"</summary>
                <ol class="bus-points">{move || rows(frame)}</ol>
            </details>
        }
        .into_any()
    }

    fn picture(&self, frame: Frame, scenario: Option<&Scenario>, width: f64) -> Option<Plot> {
        let curves = frame.curves();
        let session = curves.session();
        let drawn: Vec<BusCurve> = CollectiveOp::ALL
            .iter()
            .zip(session.bus())
            .filter_map(|(c, r)| match r {
                Some(Ok(points)) => Some(BusCurve {
                    name: collective_name(*c).to_string(),
                    points: points.clone(),
                }),
                _ => None,
            })
            .collect();
        let published = scenario.map_or_else(Vec::new, |s| {
            plot::published_all_reduce(
                s.hardware_preset.name(),
                s.hardware.nodes,
                s.hardware.nic_gbps,
            )
        });
        let mark = scenario.and_then(|s| {
            let bytes = sweep::tp_call_bytes(s)?;
            let chunks = if s.overlap.tp { s.overlap.tp_chunks } else { 1 };
            Some((bytes, plot::tp_mark_text(bytes, chunks)))
        });
        Some(plot::bus_plot(
            &drawn,
            &published,
            mark,
            width,
            PLOT_HEIGHT_PX,
        ))
    }

    fn csv(&self, frame: Frame) -> String {
        let curves = frame.curves();
        let session = curves.session();
        let mut out =
            String::from("collective,bytes,time_us,alg_gbps,bus_gbps,algorithm,protocol\n");
        for (c, r) in CollectiveOp::ALL.iter().zip(session.bus()) {
            for p in r.iter().flatten().flatten() {
                out += &format!(
                    "{},{},{},{},{},{},{}\n",
                    collective_name(*c),
                    p.bytes,
                    p.time_us,
                    p.alg_gbps,
                    p.bus_gbps,
                    p.algorithm,
                    p.protocol
                );
            }
        }
        out
    }
}

/// Every point of every curve, for the tests and screen readers.
fn rows(frame: Frame) -> Vec<AnyView> {
    frame.curves().version.track();
    let curves = frame.curves();
    let session = curves.session();
    CollectiveOp::ALL
        .iter()
        .zip(session.bus())
        .flat_map(|(c, r)| match r {
            Some(Ok(points)) => points
                .iter()
                .map(|p| {
                    view! {
                        <li class="bus-point" data-bus-collective=collective_name(*c)
                            data-bus-bytes=overlap_view::format::raw(p.bytes)
                            data-bus-gbps=overlap_view::format::raw(p.bus_gbps)
                            data-algorithm=p.algorithm.clone() data-protocol=p.protocol.clone()>
                            {format!("{} {}: {:.1} GB/s, {}/{}", collective_name(*c), plot::bytes_tick(p.bytes), p.bus_gbps, p.algorithm, p.protocol)}
                        </li>
                    }
                    .into_any()
                })
                .collect::<Vec<_>>(),
            Some(Err(e)) => vec![view! { <li>{format!("{}: {e}", collective_name(*c))}</li> }.into_any()],
            None => Vec::new(),
        })
        .collect()
}
