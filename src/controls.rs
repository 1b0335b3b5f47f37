//! The control panel: presets, the three overlap switches with their knobs,
//! hardware, model and parallelism. Every control edits the one
//! `ScenarioInput` in `AppState`; the core validates and simulates.

use leptos::prelude::*;
use overlap_core::presets;
use overlap_core::scenario::{Mode, Recompute, Schedule, Workload, WorkloadKind};
use overlap_core::HardwarePreset;

use crate::fields::{self, NumField};
use crate::state::{set_hardware_preset, AppState};
use crate::widgets::{enum_name, enum_parse, NumberPair, SelectField, Toggle};

/// A value shown by a select: the input's if set, else the resolved one.
fn shown<T: serde::Serialize>(
    state: AppState,
    from_input: impl Fn(&overlap_core::ScenarioInput) -> Option<T> + Send + Sync + 'static,
    from_resolved: impl Fn(&overlap_core::Scenario) -> Option<T> + Send + Sync + 'static,
) -> Signal<String> {
    Signal::derive(move || {
        let v = state
            .input
            .with(&from_input)
            .or_else(|| state.resolved.with(|r| r.as_ref().and_then(&from_resolved)));
        v.map(|v| enum_name(&v)).unwrap_or_default()
    })
}

fn opts(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(v, t)| (v.to_string(), t.to_string()))
        .collect()
}

fn num(field: &'static NumField) -> impl IntoView {
    view! { <NumberPair field=field /> }
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
    view! {
        <div class="preset-picker">
        <SelectField label="Scenario preset" field="preset" options current=state.preset_id on_change />
        <p class="preset-desc">{move || preset.get().map(|p| p.description)}</p>
        <p class="published">
            {move || {
                preset
                    .get()
                    .and_then(|p| p.published)
                    .map(|f| format!("Published: {} = {} ({})", f.metric, f.value, f.source))
            }}
        </p>
        </div>
    }
}

#[component]
fn OverlapGroup() -> impl IntoView {
    let state = expect_context::<AppState>();
    let on = move |axis: usize| {
        Signal::derive(move || {
            let set = state
                .input
                .with(|i| [i.overlap.tp, i.overlap.pp, i.overlap.dp][axis]);
            set.or_else(|| {
                state.resolved.with(|r| {
                    r.as_ref()
                        .map(|s| [s.overlap.tp, s.overlap.pp, s.overlap.dp][axis])
                })
            })
            .unwrap_or(false)
        })
    };
    let setter = move |axis: usize| {
        Callback::new(move |v: bool| {
            state.edit(|i| match axis {
                0 => i.overlap.tp = Some(v),
                1 => i.overlap.pp = Some(v),
                _ => i.overlap.dp = Some(v),
            })
        })
    };
    let grad = Signal::derive(move || {
        state
            .input
            .with(|i| i.overlap.grad_bytes)
            .or_else(|| {
                state
                    .resolved
                    .with(|r| r.as_ref().map(|s| s.overlap.grad_bytes))
            })
            .map(|b| b.to_string())
            .unwrap_or_default()
    });
    view! {
        <fieldset class="group overlap">
            <legend>"Overlap, per axis"</legend>
            <div class="axis-row tp">
                <Toggle label="TP overlap" field="overlap.tp" switch=true axis="tp" checked=on(0) on_change=setter(0) />
                {num(&fields::TP_CHUNKS)}
            </div>
            <div class="axis-row pp">
                <Toggle label="PP overlap" field="overlap.pp" switch=true axis="pp" checked=on(1) on_change=setter(1) />
            </div>
            <div class="axis-row dp">
                <Toggle label="DP overlap" field="overlap.dp" switch=true axis="dp" checked=on(2) on_change=setter(2) />
                {num(&fields::BUCKET_MB)}
                <SelectField
                    label="Gradient width"
                    field="overlap.grad_bytes"
                    options=opts(&[("1", "1 byte (fp8)"), ("2", "2 bytes (bf16)"), ("4", "4 bytes (fp32)")])
                    current=grad
                    on_change=Callback::new(move |v: String| {
                        if let Ok(b) = v.parse::<u32>() {
                            state.edit(|i| i.overlap.grad_bytes = Some(b));
                        }
                    })
                />
            </div>
            {num(&fields::SM_TAX)}
            <p class="hint">"SM tax: the share of compute speed lost while a communication kernel runs beside it."</p>
        </fieldset>
    }
}

#[component]
fn HardwareGroup() -> impl IntoView {
    let state = expect_context::<AppState>();
    let hw = shown(state, |i| i.hardware.preset, |s| Some(s.hardware_preset));
    let on_hw = Callback::new(move |v: String| {
        if let Some(p) = enum_parse::<HardwarePreset>(&v) {
            let resolved = state.resolved.get_untracked();
            state.edit(|i| set_hardware_preset(i, p, resolved.as_ref()));
        }
    });
    view! {
        <fieldset class="group">
            <legend>"Hardware"</legend>
            <SelectField
                label="Hardware preset"
                field="hardware.preset"
                options=opts(&[("dgx2-v100", "DGX-2 (16 × V100)"), ("dgx-a100", "DGX A100 (8 × A100)"), ("dgx-h100", "DGX H100 (8 × H100)")])
                current=hw
                on_change=on_hw
            />
            {num(&fields::NODES)}
            {num(&fields::GPUS_PER_NODE)}
            {num(&fields::NVLINK_GBPS)}
            {num(&fields::NIC_GBPS)}
            {num(&fields::OVERSUBSCRIPTION)}
            {num(&fields::PEAK_TFLOPS)}
            {num(&fields::HBM_GBPS)}
            {num(&fields::NVLINK_LATENCY)}
            {num(&fields::NETWORK_LATENCY)}
        </fieldset>
    }
}

#[component]
fn ModelGroup() -> impl IntoView {
    let state = expect_context::<AppState>();
    let is_matmul = Memo::new(move |_| {
        state.input.with(|i| i.workload.kind) == Some(WorkloadKind::MatmulAllreduce)
    });
    let kind = shown(
        state,
        |i| i.workload.kind,
        |s| {
            Some(match s.workload {
                Workload::Transformer(_) => WorkloadKind::Transformer,
                Workload::MatmulAllreduce(_) => WorkloadKind::MatmulAllreduce,
            })
        },
    );
    let on_kind = Callback::new(move |v: String| {
        if let Some(k) = enum_parse::<WorkloadKind>(&v) {
            let resolved = state.resolved.get_untracked();
            state.edit(|i| {
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
            });
        }
    });
    let mode = shown(
        state,
        |i| i.workload.mode,
        |s| match &s.workload {
            Workload::Transformer(t) => Some(t.mode),
            Workload::MatmulAllreduce(_) => None,
        },
    );
    let recompute = shown(
        state,
        |i| i.workload.recompute,
        |s| match &s.workload {
            Workload::Transformer(t) => Some(t.recompute),
            Workload::MatmulAllreduce(_) => None,
        },
    );
    let seq_par = Signal::derive(move || {
        state
            .input
            .with(|i| i.workload.sequence_parallel)
            .unwrap_or_else(|| {
                state
                    .resolved
                    .with(|r| match r.as_ref().map(|s| &s.workload) {
                        Some(Workload::Transformer(t)) => t.sequence_parallel,
                        _ => false,
                    })
            })
    });
    view! {
        <fieldset class="group">
            <legend>"Model"</legend>
            <SelectField
                label="Workload"
                field="workload.kind"
                options=opts(&[("transformer", "GPT-style transformer"), ("matmul_allreduce", "MatMul + AllReduce (micro-benchmark)")])
                current=kind
                on_change=on_kind
            />
            <Show
                when=move || !is_matmul.get()
                fallback=|| view! { {num(&fields::GEMM_M)} {num(&fields::GEMM_N)} {num(&fields::GEMM_K)} }
            >
                <SelectField
                    label="Mode"
                    field="workload.mode"
                    options=opts(&[("train", "Training"), ("inference", "Inference (forward only)")])
                    current=mode
                    on_change=Callback::new(move |v: String| {
                        if let Some(m) = enum_parse::<Mode>(&v) {
                            state.edit(|i| i.workload.mode = Some(m));
                        }
                    })
                />
                {num(&fields::LAYERS)}
                {num(&fields::HIDDEN)}
                {num(&fields::HEADS)}
                {num(&fields::SEQ)}
                {num(&fields::VOCAB)}
                {num(&fields::MICRO_BATCH)}
                {num(&fields::GLOBAL_BATCH)}
                <SelectField
                    label="Recomputation"
                    field="workload.recompute"
                    options=opts(&[("none", "None"), ("selective", "Selective (attention core)"), ("full", "Full")])
                    current=recompute
                    on_change=Callback::new(move |v: String| {
                        if let Some(r) = enum_parse::<Recompute>(&v) {
                            state.edit(|i| i.workload.recompute = Some(r));
                        }
                    })
                />
                <Toggle
                    label="Sequence parallelism"
                    field="workload.sequence_parallel"
                    checked=seq_par
                    on_change=Callback::new(move |v: bool| state.edit(|i| i.workload.sequence_parallel = Some(v)))
                />
            </Show>
        </fieldset>
    }
}

#[component]
fn ParallelGroup() -> impl IntoView {
    let state = expect_context::<AppState>();
    let schedule = shown(
        state,
        |i| i.parallel.schedule,
        |s| Some(s.parallel.schedule),
    );
    let scatter = Signal::derive(move || {
        state
            .input
            .with(|i| i.parallel.scatter_gather)
            .unwrap_or_else(|| {
                state.resolved.with(|r| {
                    r.as_ref()
                        .map(|s| s.parallel.scatter_gather)
                        .unwrap_or(true)
                })
            })
    });
    view! {
        <fieldset class="group">
            <legend>"Parallelism"</legend>
            <p class="hint">"TP × PP × DP must equal the GPU count; changing TP, PP or the cluster re-derives DP when it divides."</p>
            {num(&fields::TP)}
            {num(&fields::PP)}
            {num(&fields::DP)}
            <SelectField
                label="Pipeline schedule"
                field="parallel.schedule"
                options=opts(&[("gpipe", "GPipe"), ("1f1b", "1F1B"), ("interleaved", "Interleaved 1F1B")])
                current=schedule
                on_change=Callback::new(move |v: String| {
                    if let Some(s) = enum_parse::<Schedule>(&v) {
                        state.edit(|i| {
                            i.parallel.schedule = Some(s);
                            if s != Schedule::Interleaved {
                                i.parallel.virtual_stages = Some(1);
                            }
                        });
                    }
                })
            />
            {num(&fields::VIRTUAL_STAGES)}
            <Toggle
                label="Scatter/gather of pipeline sends"
                field="parallel.scatter_gather"
                checked=scatter
                on_change=Callback::new(move |v: bool| state.edit(|i| i.parallel.scatter_gather = Some(v)))
            />
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
            <HardwareGroup />
            <ModelGroup />
            <ParallelGroup />
        </section>
    }
}
