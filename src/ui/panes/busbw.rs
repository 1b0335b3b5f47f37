//! The bus-bandwidth pane (`view=busbw`): every collective's bus
//! bandwidth against message size on the scenario's hardware, nccl-tests'
//! sizes with NCCL's choice of algorithm and protocol, one curve per
//! collective from the curves' worker (`curves`), measured on the group of
//! GPUs the reader picks (TP's, DP's, every GPU: `overlap_view::bus_group`),
//! named on the plot, with the published all-reduce points and the message
//! sizes of the axis that runs on that group marked.

use leptos::prelude::*;
use overlap_core::scenario::CollectiveOp;
use overlap_core::{Scenario, ScenarioInput};
use overlap_view::bus_group::{self, BusGroup};
use overlap_view::bus_plot::{self, BusCurve};
use overlap_view::panes::Pane;
use overlap_view::plot::{self, Plot};

use super::pane::{curves_job, Frame, PlotPane, PLOT_HEIGHT_PX};

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
        let resolved = frame.state.resolved.get();
        let hw = resolved
            .as_ref()
            .and_then(|s| bus_group::hardware(group_of(frame, s), s, &input.hardware))
            .unwrap_or_else(|| input.hardware.clone());
        frame.curves().bus(&hw);
    }

    curves_job!();

    fn above(&self, frame: Frame) -> AnyView {
        let curves = frame.curves();
        let chosen = curves.bus_group;
        let state = frame.state;
        let options = move || {
            state.resolved.with(|s| {
                let Some(s) = s.as_ref() else {
                    return Vec::new();
                };
                let now = group_of(frame, s);
                BusGroup::ALL
                    .into_iter()
                    .filter_map(|g| {
                        let label = bus_group::label(g, s)?;
                        Some(view! {
                            <option value=g.code() selected=g == now>{label}</option>
                        })
                    })
                    .collect_view()
            })
        };
        view! {
            <label class="bus-group">
                "GPUs measured: "
                <select
                    id="bus-group"
                    on:change=move |ev| chosen.set(BusGroup::from_code(&event_target_value(&ev)))
                >
                    {options}
                </select>
            </label>
        }
        .into_any()
    }

    fn below(&self, frame: Frame) -> AnyView {
        // The plot's group and marks in words, for screen readers and tests.
        let state = frame.state;
        let words = move || {
            state.resolved.with(|s| {
                let s = s.as_ref()?;
                let g = group_of(frame, s);
                let mut text = format!("Measured on {}.", bus_group::label(g, s)?);
                for (_, mark) in bus_group::marks(g, s) {
                    let mark = mark.replace(": here", " (the dashed line).");
                    let mut chars = mark.chars();
                    text.push(' ');
                    text.extend(chars.next().map(|c| c.to_ascii_uppercase()));
                    text.push_str(chars.as_str());
                }
                Some(text)
            })
        };
        view! {
            <p class="bus-measured">{words}</p>
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
        let group = scenario.map(|s| group_of(frame, s));
        // Published figures are of whole nodes: shown for a group that
        // fills its nodes.
        let published = scenario.map_or_else(Vec::new, |s| {
            match group.and_then(|g| bus_group::shape(g, s)) {
                Some((k, nodes)) if k == s.hardware.gpus_per_node => {
                    bus_plot::published_all_reduce(
                        s.hardware_preset.name(),
                        nodes,
                        s.hardware.nic_gbps,
                    )
                }
                _ => Vec::new(),
            }
        });
        let (marks, label) = match (scenario, group) {
            (Some(s), Some(g)) => (bus_group::marks(g, s), bus_group::label(g, s)),
            _ => (Vec::new(), None),
        };
        Some(bus_plot::bus_plot(
            &drawn,
            &published,
            &marks,
            label.as_deref(),
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

/// The group the curves are measured on: the reader's pick where the
/// scenario has it, else the scenario's first.
fn group_of(frame: Frame, s: &Scenario) -> BusGroup {
    frame
        .curves()
        .bus_group
        .get()
        .filter(|g| bus_group::shape(*g, s).is_some())
        .unwrap_or_else(|| bus_group::first(s))
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
