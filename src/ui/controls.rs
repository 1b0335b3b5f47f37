//! The control panel: presets, the three overlap switches with their knobs,
//! hardware, model and parallelism. Every control edits the one
//! `ScenarioInput` in `AppState`; the core validates and simulates.

use leptos::prelude::*;
use overlap_core::input::fields::{self as table, Field, Kind, FIELDS};

use overlap_core::model::axis::Axis;
use overlap_core::presets;
use overlap_core::scenario::WorkloadKind;
use overlap_core::HardwarePreset;
use serde::Deserialize;
use serde_json::Value;

use crate::state::fields;
use crate::state::{set_hardware_preset, AppState};
use crate::ui::staged::{Part, When};
use crate::ui::widgets::{NumberPair, SelectField, TextField, Toggle};

// Where each field's control sits. Labels, units, ranges and choices come
// from the core's field table; a row placed nowhere here still gets a
// control, at the end of its section's group (`unplaced`).

/// The knobs under an axis's overlap switch, for the axes that have any.
/// An axis's switch is the field table's `overlap.<axis>` row
/// (`overlap_switch`): an axis with no knobs needs no line here.
const OVERLAP_KNOBS: &[(Axis, &[&str])] = &[
    (Axis::Tp, &["overlap.tp_mode", "overlap.tp_chunks"]),
    (
        Axis::Dp,
        &[
            "overlap.bucket_mb",
            "overlap.grad_bytes",
            "overlap.param_gather",
            "overlap.grad_sync",
            "overlap.fp8_all_gather",
        ],
    ),
];
/// Below the rows of the overlap group: what overlap costs (interference,
/// the v1 SM tax) and whether kernels can run side by side at all (hardware
/// queues).
const OVERLAP_AFTER: &[&str] = &["interference", "hardware.max_connections", "sm_tax"];
const HARDWARE: &[&str] = &[
    "hardware.preset",
    "hardware.nodes",
    "hardware.gpus_per_node",
    "hardware.nvlink_gbps",
    "hardware.nic_gbps",
    "hardware.oversubscription",
    "hardware.peak_tflops",
    "hardware.hbm_gbps",
    "hardware.hbm_gb",
    "hardware.sms",
    "hardware.nvlink_latency_us",
    "hardware.network_latency_us",
];
const MODEL_KIND: &[&str] = &["workload.kind"];
const TRANSFORMER: &[&str] = &[
    "workload.mode",
    "workload.layers",
    "workload.hidden",
    "workload.heads",
    "workload.seq",
    "workload.vocab",
    "workload.micro_batch",
    "workload.global_batch",
    "workload.recompute",
    "workload.sequence_parallel",
    "workload.head_dim",
    "workload.moe.experts",
    "workload.moe.top_k",
    "workload.moe.expert_ffn_hidden",
    "workload.moe.shared_experts",
    "workload.moe.dense_layers",
    "workload.moe.dispatcher",
    "workload.moe.max_nodes_per_token",
    "workload.moe.imbalance",
    "workload.moe.deepep_sms",
    "workload.moe.recompute",
    "workload.moe.fp8_dispatch_cache",
    "workload.moe.fp8_swiglu_cache",
    "workload.moe.fp8_dispatch",
    "workload.precision",
];
const MATMUL: &[&str] = &["workload.m", "workload.n", "workload.k"];
const PARALLEL: &[&str] = &[
    "parallel.tp",
    "parallel.pp",
    "parallel.dp",
    "parallel.cp",
    "parallel.cp_mode",
    "parallel.schedule",
    "parallel.virtual_stages",
    "parallel.scatter_gather",
    "parallel.dp_sharding",
    "parallel.ep",
    "parallel.etp",
];

/// The field of an axis's overlap switch: the field table's
/// `overlap.<axis>` row.
pub(crate) fn overlap_switch(axis: Axis) -> &'static str {
    let path = format!("overlap.{}", axis.name());
    table::find(&path)
        .map(|f| f.path)
        .unwrap_or_else(|| panic!("the field table has no {path}"))
}

/// An axis's overlap knobs (TP chunks, DP's bucket size...), which the
/// settings group shows under the axis's colour.
fn overlap_knobs(axis: Axis) -> Vec<&'static str> {
    OVERLAP_KNOBS
        .iter()
        .filter(|(a, _)| *a == axis)
        .flat_map(|(_, paths)| paths.iter().copied())
        .collect()
}

/// Every placed path.
fn placed() -> impl Iterator<Item = &'static str> {
    Axis::ALL
        .into_iter()
        .flat_map(|a| std::iter::once(overlap_switch(a)).chain(overlap_knobs(a)))
        .chain(OVERLAP_AFTER.iter().copied())
        .chain(HARDWARE.iter().copied())
        .chain(MODEL_KIND.iter().copied())
        .chain(TRANSFORMER.iter().copied())
        .chain(MATMUL.iter().copied())
        .chain(PARALLEL.iter().copied())
}

/// The rows of `section` that no list above places, in table order.
fn unplaced(section: &str) -> Vec<&'static str> {
    FIELDS
        .iter()
        .filter(|f| f.section() == section && !placed().any(|p| p == f.path))
        .map(|f| f.path)
        .collect()
}

/// The value a control shows: the input's if set, else the resolved one.
fn shown(state: AppState, f: &'static Field) -> Signal<Option<Value>> {
    Signal::derive(move || {
        state.input.with(|i| (f.get)(i)).or_else(|| {
            state
                .resolved
                .with(|r| r.as_ref().and_then(|s| (f.resolved)(s)))
        })
    })
}

/// Applies a chosen value, with the edits that keep the scenario coherent
/// around the few choices that reshape it.
fn choose(state: AppState, f: &'static Field, value: Value) {
    let resolved = state.resolved.get_untracked();
    state.edit(|i| {
        if f.path == table::field("hardware.preset").path {
            if let Ok(p) = HardwarePreset::deserialize(&value) {
                set_hardware_preset(i, p, resolved.as_ref());
            }
            return;
        }
        if f.path == table::field("workload.kind").path {
            let Ok(k) = WorkloadKind::deserialize(&value) else {
                return;
            };
            i.workload = Default::default();
            i.workload.kind = Some(k);
            i.parallel.dp = None;
            if k == WorkloadKind::MatmulAllreduce {
                // One TP group on one node: the core's defaults for it.
                i.hardware.nodes = Some(1);
                i.parallel.tp = None;
                i.parallel.pp = None;
            } else {
                // The didactic layout, TP 4 x PP 2 on two nodes, DP from the node size.
                i.hardware.nodes = Some(2);
                i.parallel.tp = Some(4);
                i.parallel.pp = Some(2);
                crate::state::rebalance_dp(i, resolved.as_ref());
            }
            return;
        }
        if (f.set)(i, Some(&value)).is_err() {
            return;
        }
        // The fields that change with it (a V schedule's second virtual
        // stage), as a sweep of the field sets them too.
        overlap_core::input::companions::follow(f, i);
    });
}

/// The control of one field, by its kind: a number pair, a select or a
/// switch (the embedded page's overlap switches are these too).
pub(crate) fn control(path: &'static str) -> AnyView {
    let state = expect_context::<AppState>();
    let Some(f) = table::find(path) else {
        return ().into_any();
    };
    if let Some(n) = fields::number(path) {
        return view! { <NumberPair field=n /> }.into_any();
    }
    let value = shown(state, f);
    if f.kind == Kind::Layout {
        // A pipeline layout as links write it: entries joined by `|`.
        let current =
            Signal::derive(move || value.get().map(|v| f.link_text(&v)).unwrap_or_default());
        let on_change = Callback::new(move |raw: String| {
            let raw = raw.trim();
            if raw.is_empty() {
                state.edit(|i| {
                    let _ = (f.set)(i, None);
                });
            } else if let Ok(v) = f.parse_text(raw) {
                choose(state, f, v);
            }
        });
        return view! {
            <TextField label=f.label field=f.path placeholder="even split (e.g. E t*3|t*4|t*4|t*3 L)" current on_change />
        }
        .into_any();
    }
    if f.choices().is_empty() {
        // A switch; the overlap switches are coloured by their axis.
        let axis = Axis::ALL.into_iter().find(|&a| overlap_switch(a) == path);
        let checked =
            // `overlap.ep` may hold a list of options (JSON, links): on.
            Signal::derive(move || {
                value
                    .get()
                    .is_some_and(|v| v.as_bool().unwrap_or_else(|| v.as_array().is_some_and(|a| !a.is_empty())))
            });
        let on_change = Callback::new(move |v: bool| choose(state, f, Value::Bool(v)));
        return view! {
            <Toggle
                label=f.label
                field=f.path
                switch=axis.is_some()
                axis=axis.map_or("", Axis::name)
                checked
                on_change
            />
        }
        .into_any();
    }
    let options = f
        .choices()
        .iter()
        .map(|c| (c.name.to_string(), c.label.to_string()))
        .collect::<Vec<_>>();
    let current = Signal::derive(move || value.get().map(|v| Field::text(&v)).unwrap_or_default());
    let on_change = Callback::new(move |raw: String| {
        if let Ok(v) = f.parse_text(&raw) {
            choose(state, f, v);
        }
    });
    view! { <SelectField label=f.label field=f.path options current on_change /> }.into_any()
}

fn controls(paths: &[&'static str]) -> impl IntoView {
    paths.iter().map(|p| control(p)).collect_view()
}

/// Errors on fields that no control shows (for example a field only JSON can set).
#[component]
fn OtherErrors() -> impl IntoView {
    let state = expect_context::<AppState>();
    let others = Memo::new(move |_| {
        state.errors.with(|e| {
            e.iter()
                .filter(|e| !fields::has_control(&e.field))
                .map(|e| format!("{}: {}", e.field, e.message))
                .collect::<Vec<_>>()
        })
    });
    let any_error = Memo::new(move |_| state.errors.with(|e| !e.is_empty()));
    view! {
        <Show when=move || any_error.get()>
            <div class="invalid-note" role="status">
                "This combination is not valid; the timeline shows the last valid one. "
                "Each problem is explained next to its control."
                <ul>{move || others.get().into_iter().map(|m| view! { <li>{m}</li> }).collect_view()}</ul>
            </div>
        </Show>
    }
}

#[component]
fn PresetPicker() -> impl IntoView {
    let state = expect_context::<AppState>();
    let options = crate::state::preset_options();
    let on_change = Callback::new(move |id: String| state.load_preset_id(&id));
    let preset = Memo::new(move |_| presets::find(&state.preset_id.get()));
    let modified = Memo::new(move |_| state.modified());
    view! {
        <div class="preset-picker">
        <SelectField label="Scenario preset" field="preset" options current=state.preset_id on_change />
        <p class="preset-state" data-modified=move || modified.get().to_string()>
            <span class="modified-mark" hidden=move || !modified.get()>"modified"</span>
            <button
                type="button"
                class="reset-preset"
                disabled=move || !modified.get()
                on:click=move |_| state.reset_to_preset()
            >
                "Reset to preset"
            </button>
        </p>
        <p class="preset-desc">{move || preset.get().map(|p| p.description)}</p>
        <p class="published">
            {move || {
                preset
                    .get()
                    .and_then(|p| p.published)
                    .map(|f| {
                        let metric = overlap_core::published::metric(f.metric).name();
                        format!("Published: {metric} = {} ({})", f.value, f.source)
                    })
            }}
        </p>
        </div>
    }
}

/// The axes in the order the overlap groups show them: the scenario's own
/// axes first (issue 58: EP's switch sat below three "changes nothing here"
/// notes on moe-didactic). A refused edit (no resolved scenario) keeps the
/// order it had, so rows do not jump under the reader's pointer.
fn axis_order(state: AppState) -> Memo<Vec<Axis>> {
    Memo::new(move |prev: Option<&Vec<Axis>>| {
        state.resolved.with(|s| match s {
            Some(s) => overlap_view::axis_reading::axes_in_order(|a| s.axis_degree(a) > 1),
            None => prev.cloned().unwrap_or_else(|| Axis::ALL.to_vec()),
        })
    })
}

/// One switch per axis, and nothing else: on a phone this group sits in the
/// first screen (style.css), so its knobs live in [`OverlapSettings`]
/// (issue 58: with them, the switches filled 1,100 px of a phone and pushed
/// every axis's reading below its second screen). Rows are moved, not
/// rebuilt, so focus survives, and the DOM order is the Tab order.
#[component]
fn OverlapGroup() -> impl IntoView {
    let order = axis_order(expect_context::<AppState>());
    view! {
        <fieldset class="group overlap">
            <legend>"Overlap, per axis"</legend>
            <For
                each=move || order.get()
                key=|axis| *axis
                children=|axis| {
                    view! { <div class=format!("axis-row {}", axis.name())>{control(overlap_switch(axis))}</div> }
                }
            />
        </fieldset>
    }
}

/// How each axis's overlap runs (its knobs, in the switches' order and
/// colours), then what every axis shares: interference, hardware queues and
/// the SM tax.
#[component]
fn OverlapSettings() -> impl IntoView {
    let after: Vec<&'static str> = OVERLAP_AFTER
        .iter()
        .copied()
        .chain(unplaced("overlap"))
        .chain(unplaced(""))
        .collect();
    let order = axis_order(expect_context::<AppState>());
    let with_knobs = move || {
        order
            .get()
            .into_iter()
            .filter(|a| !overlap_knobs(*a).is_empty())
            .collect::<Vec<_>>()
    };
    view! {
        <fieldset class="group overlap-settings">
            <legend>"Overlap settings"</legend>
            <For
                each=with_knobs
                key=|axis| *axis
                children=|axis| {
                    let paths = overlap_knobs(axis);
                    view! { <div class=format!("axis-row {}", axis.name())>{controls(&paths)}</div> }
                }
            />
            {controls(&after)}
            <p class="hint">"SM tax: a fixed share of compute speed lost while a communication kernel runs beside it, in place of the modelled interference (ignored when interference is off). Empty (none): the model applies."</p>
        </fieldset>
    }
}

#[component]
fn HardwareGroup() -> impl IntoView {
    view! {
        <fieldset class="group">
            <legend>"Hardware"</legend>
            {controls(HARDWARE)}
            {controls(&unplaced("hardware"))}
        </fieldset>
    }
}

#[component]
fn ModelGroup() -> impl IntoView {
    let state = expect_context::<AppState>();
    let is_matmul = Memo::new(move |_| {
        state.input.with(|i| i.workload.kind) == Some(WorkloadKind::MatmulAllreduce)
    });
    // New workload rows are the transformer's (model.md section 4).
    let transformer: Vec<&'static str> = TRANSFORMER
        .iter()
        .copied()
        .chain(unplaced("workload"))
        .collect();
    view! {
        <fieldset class="group">
            <legend>"Model"</legend>
            {controls(MODEL_KIND)}
            <Show when=move || !is_matmul.get() fallback=|| controls(MATMUL)>
                {controls(&transformer)}
            </Show>
        </fieldset>
    }
}

#[component]
fn ParallelGroup() -> impl IntoView {
    view! {
        <fieldset class="group">
            <legend>"Parallelism"</legend>
            <p class="hint">"TP × PP × DP must equal the GPU count; changing TP, PP or the cluster re-derives DP when it divides."</p>
            {controls(PARALLEL)}
            {controls(&unplaced("parallel"))}
        </fieldset>
    }
}

/// The whole panel, grouped as the issue lists the controls.
#[component]
pub fn Controls() -> impl IntoView {
    view! {
        <section class="controls" aria-label="Scenario controls">
            <PresetPicker />
            <OtherErrors />
            <OverlapGroup />
            <OverlapSettings />
            <When part=Part::Shape>
                <HardwareGroup />
                <ModelGroup />
                <ParallelGroup />
            </When>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placed_path_is_a_row_and_placed_once() {
        let all: Vec<&str> = placed().collect();
        for (i, p) in all.iter().enumerate() {
            assert!(table::find(p).is_some(), "{p} is not in the field table");
            assert!(!all[i + 1..].contains(p), "{p} is placed twice");
        }
        // A row placed nowhere still gets a control, in its section's group.
        assert!(unplaced("hardware")
            .iter()
            .all(|p| p.starts_with("hardware.")));
    }
}
