//! The guided tour: short chapters that walk the argument. Each sets
//! its scenario, asks for a prediction, flips one thing, then reveals what the
//! core computed (the ghost keeps the "before").

use leptos::prelude::*;
use overlap_core::output::metric::{AxisFigure, Metric};
use overlap_core::presets;
use overlap_core::Axis::{Dp, Pp, Tp};
use overlap_core::ScenarioInput;

use crate::state::AppState;
use crate::ui::figures::shown;
use overlap_view::format;

/// A figure the reveal shows before and after: the chapter's word for it,
/// and the metric (its getter, `data-metric` name and number format).
type Watch = (&'static str, Metric);

const STEP: Watch = ("step time", Metric::StepTime);

const fn axis(label: &'static str, axis: overlap_core::Axis, figure: AxisFigure) -> Watch {
    (label, Metric::Axis(axis, figure))
}

struct Chapter {
    title: &'static str,
    preset: &'static str,
    /// Changes to the preset before the question.
    setup: fn(&mut ScenarioInput),
    intro: &'static str,
    question: &'static str,
    choices: [&'static str; 3],
    /// The one change the chapter is about.
    action: fn(&mut ScenarioInput),
    /// Which figures the reveal reads.
    watch: &'static [Watch],
    explain: &'static str,
    /// The controls the chapter is about (field names), outlined on the page.
    controls: &'static [&'static str],
}

fn all_off(i: &mut ScenarioInput) {
    i.overlap.tp = Some(false);
    i.overlap.pp = Some(false);
    i.overlap.dp = Some(false);
}

const CHAPTERS: &[Chapter] = &[
    Chapter {
        title: "DP hides behind the backward pass",
        preset: "didactic",
        setup: all_off,
        intro: "Two DGX A100 nodes, every overlap off. The DP reduction (green) waits until the last backward op \
                is done, and compute stands idle while it runs.",
        question: "Switch DP overlap on. What happens to the DP time the GPUs wait for (exposed)?",
        choices: ["Most of it disappears", "It barely changes", "It grows"],
        action: |i| i.overlap.dp = Some(true),
        watch: &[
            STEP,
            axis("DP exposed", Dp, AxisFigure::Exposed),
            axis("DP window", Dp, AxisFigure::Window),
        ],
        explain: "Each gradient bucket is reduced as soon as it is final, under the rest of the backward pass. \
                  With gradient accumulation only the last micro-batch's backward is a window, so whatever does \
                  not fit in it stays exposed.",
        controls: &["overlap.dp"],
    },
    Chapter {
        title: "TP has a small window; chunking helps, at a cost",
        preset: "didactic",
        setup: all_off,
        intro: "TP's AllReduce follows the GEMM that produced its input, and the next GEMM needs its output. \
                With overlap off, compute waits for every one of them (blue).",
        question: "Switch TP overlap on (each GEMM split in 4 chunks). How much of TP's communication hides?",
        choices: ["Nearly all of it", "Some of it", "None of it"],
        action: |i| i.overlap.tp = Some(true),
        watch: &[
            STEP,
            axis("TP exposed", Tp, AxisFigure::Exposed),
            axis("TP window", Tp, AxisFigure::Window),
            axis("TP comm", Tp, AxisFigure::Comm),
        ],
        explain: "Chunk i's AllReduce runs under chunk i+1's GEMM, but the window is one adjacent GEMM: small next \
                  to the traffic. Smaller GEMMs also run less efficiently, and NCCL's kernels take SMs from compute.",
        controls: &["overlap.tp", "overlap.tp_chunks"],
    },
    Chapter {
        title: "PP sends hide behind micro-batches",
        preset: "didactic",
        setup: |i| {
            i.overlap.tp = Some(true);
            i.overlap.dp = Some(true);
            i.overlap.pp = Some(false);
        },
        intro: "With PP overlap off, a stage blocks on each send until the next stage has the activations (orange).",
        question: "Switch PP overlap on. What happens to PP's exposed time?",
        choices: ["It mostly disappears", "It barely changes", "It grows"],
        action: |i| i.overlap.pp = Some(true),
        watch: &[
            STEP,
            axis("PP exposed", Pp, AxisFigure::Exposed),
            axis("PP window", Pp, AxisFigure::Window),
            ("bubble", Metric::Bubble),
        ],
        explain: "An asynchronous send lets the sender start the next micro-batch at once: only the receiver waits, \
                  and only when the data is late. The pipeline bubble is another matter: overlap does not fill it.",
        controls: &["overlap.pp"],
    },
    Chapter {
        title: "All three overlapped contend for the same links",
        preset: "contention",
        setup: |i| i.overlap.dp = Some(false),
        intro: "Four nodes on a slow 12.5 GB/s NIC. PP and TP overlap are on; the DP reduction still runs after \
                the step, alone on the links.",
        question: "Switch DP overlap on, so the DP reduction runs during backward. What happens to DP's own \
                   communication time?",
        choices: ["It stays the same", "It grows: it shares the NIC with PP", "It shrinks"],
        action: |i| i.overlap.dp = Some(true),
        watch: &[
            STEP,
            axis("DP comm", Dp, AxisFigure::Comm),
            axis("DP contention", Dp, AxisFigure::Contention),
            axis("PP contention", Pp, AxisFigure::Contention),
        ],
        explain: "Overlapping each axis with compute does not overlap the axes with each other: the DP reduction \
                  and the pipeline's gradient sends now meet on the same NIC and share it, so both take longer. \
                  Look at the link lanes: two colours stacked on one link.",
        controls: &["overlap.dp"],
    },
    Chapter {
        title: "Where overlap stops being free",
        preset: "didactic",
        setup: |i| i.sm_tax = Some(0.15),
        intro: "All overlaps on, 4 TP chunks, NCCL kernels slowing compute by 15% while they run.",
        question: "Split each TP GEMM into 32 chunks and let communication take 40% of the SMs. The step gets…",
        choices: ["Shorter: more overlap", "About the same", "Longer"],
        action: |i| {
            i.overlap.tp_chunks = Some(32);
            i.sm_tax = Some(0.4);
        },
        watch: &[
            STEP,
            ("compute busy", Metric::Compute),
            axis("TP exposed", Tp, AxisFigure::Exposed),
            ("speedup over all-off", Metric::Speedup),
        ],
        explain: "Tiny chunks run far from peak, each collective pays its latency, and compute slows whenever a \
                  communication kernel runs beside it. Past a point, overlap costs more than it hides.",
        controls: &["overlap.tp_chunks", "sm_tax"],
    },
    Chapter {
        title: "Overlap switched on, yet nothing hides",
        preset: "one-queue",
        setup: |i| i.hardware.max_connections = Some(8),
        intro: "Megatron-LM issue 1468's shape: an 8B model on 64 H100, data parallel only, DP overlap on. With 8 \
                hardware queues the gradient reduction runs beside the backward GEMMs.",
        question: "Set CUDA_DEVICE_MAX_CONNECTIONS to 1, as Megatron-LM asks for with TP overlap. How much of DP's \
                   communication still hides?",
        choices: ["Most of it", "About half", "Next to none"],
        action: |i| i.hardware.max_connections = Some(1),
        watch: &[
            STEP,
            axis("DP hidden", Dp, AxisFigure::Hidden),
            axis("DP exposed", Dp, AxisFigure::Exposed),
        ],
        explain: "With one hardware queue, the kernels of every stream run in the order they were launched: a \
                  reduction launched between two backward GEMMs makes the next GEMM wait for it. The switch still \
                  says overlap is on; the queue decides whether anything runs side by side.",
        controls: &["hardware.max_connections", "overlap.dp"],
    },
    Chapter {
        title: "CoCoNet: slice the pipeline boundary, fuse the AllReduce",
        preset: "coconet-inference",
        setup: |i| {
            i.overlap.pp_chunks = Some(1);
            i.overlap.fuse = Some(false);
        },
        intro: "GPT-2 8.3B inference on two DGX-2 nodes: TP 16 inside each node, one pipeline stage per node. TP \
                overlap and asynchronous sends are on. At the stage boundary the AllReduce finishes, each GPU sends \
                its 1/16 slice over its own NIC, and the next node gathers the slices, one step after another.",
        question: "Cut the boundary into 8 pipelined pieces (ReduceScatter, slice sends, AllGather) and fuse each \
                   AllReduce with the bias, dropout and residual add after it. Where does the step gain?",
        choices: ["Mostly from slicing", "Mostly from fusion", "From neither"],
        action: |i| {
            i.overlap.pp_chunks = Some(8);
            i.overlap.fuse = Some(true);
        },
        watch: &[
            STEP,
            ("compute busy", Metric::Compute),
            axis("PP exposed", Pp, AxisFigure::Exposed),
            ("speedup over sequential", Metric::Speedup),
        ],
        explain: "Fusion gives nearly all of it: 71 bias-dropout-add kernels per micro-batch leave each stage's \
                  compute stream, about 56 ms of the step, and their bytes ride on the AllReduces' HBM traffic. \
                  Slicing makes the NVLink and the NIC of one GPU carry the boundary at the same moments and cuts \
                  PP's exposed time, but the boundary takes about 1 ms per micro-batch here, so the step barely \
                  moves. On the receiving node the gather shares NVLink with that stage's own TP AllReduces.",
        controls: &["overlap.pp_chunks", "overlap.fuse"],
    },
    Chapter {
        title: "FSDP: the parameter all-gather hides behind one layer",
        preset: "llama3-8b-fsdp",
        setup: |i| i.overlap.dp = Some(false),
        intro: "An 8B model on 64 H100: FSDP shards it across the 8 nodes, and TP 8 splits each layer inside a \
                node. Each layer's parameters are all-gathered over the network before its forward and again \
                before its backward. With DP overlap off, the GPUs wait for every gather.",
        question: "Switch DP overlap on: FSDP then gathers the next layer's parameters while the current layer \
                   computes. How much of the DP communication still stalls the GPUs?",
        choices: ["Most of it", "About half", "Almost none"],
        action: |i| i.overlap.dp = Some(true),
        watch: &[
            STEP,
            axis("DP exposed", Dp, AxisFigure::Exposed),
            axis("DP hidden", Dp, AxisFigure::Hidden),
        ],
        explain: "Almost none: each gather now runs under the layer before it, FSDP's prefetch window of one \
                  layer. A layer's forward computes for longer than the next layer's gather takes, so the network \
                  keeps up. The window is never more than one layer: on a network a quarter as fast a gather \
                  outlasts a forward layer, and about half the DP time stalls the GPUs again.",
        controls: &["overlap.dp", "parallel.dp_sharding"],
    },
    Chapter {
        title: "The bubble is compute that could hide communication",
        preset: "didactic",
        setup: |i| i.parallel.schedule = Some(overlap_core::scenario::Schedule::OneFOneB),
        intro: "1F1B on two DGX A100 nodes, every overlap on. Each of the two stages idles in the pipeline bubble \
                while the other works, and the DP reduction hides behind the last micro-batch's backward. ZB-1p \
                splits each backward into B, the input gradient the previous stage waits for, and W, the weight \
                gradient that only the DP reduction waits for.",
        question: "Switch the schedule to ZB-1p, which moves W into the bubble. What happens to the DP window, the \
                   backward compute the gradient reduction can hide behind?",
        choices: [
            "It grows: deferred W is more compute to hide behind",
            "It stays about the same",
            "It shrinks",
        ],
        action: |i| i.parallel.schedule = Some(overlap_core::scenario::Schedule::ZeroBubble1p),
        watch: &[
            STEP,
            ("bubble", Metric::Bubble),
            axis("DP window", Dp, AxisFigure::Window),
            axis("DP exposed", Dp, AxisFigure::Exposed),
        ],
        explain: "W fills part of the bubble: it falls from 29.1% to 22.8% of the step, and the step from 101.3 to \
                  97.5 ms. But the DP window shrinks from 8.02 to 3.23 ms. The first stage finishes the step and holds \
                  no W back, as it already keeps as many micro-batches alive as 1F1B allows: its last micro-batch runs \
                  all its B before any W, so its gradients become final only in that last W. The second stage runs \
                  its last two W after its last B, layer by layer, and its own reduction starts under them. DP \
                  exposed stays at 909.5 µs: on the first stage the last bucket is reduced after the last backward \
                  op either way.",
        controls: &["parallel.schedule"],
    },
];

/// How many chapters the tour has (share links name them 1 to this).
pub fn chapter_count() -> usize {
    CHAPTERS.len()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    Off,
    Ask(usize),
    Revealed(usize),
    Done,
}

/// The fields a chapter is about, for the controls to outline themselves.
pub fn focus_fields(chapter: usize) -> &'static [&'static str] {
    CHAPTERS.get(chapter).map(|c| c.controls).unwrap_or(&[])
}

fn enter(state: AppState, chapter: usize) {
    let c = &CHAPTERS[chapter];
    if let Some(p) = presets::find(c.preset) {
        let mut input = p.input();
        (c.setup)(&mut input);
        state.load(p, input);
    }
    reveal_control(c.controls.first().copied());
}

/// On a wide screen the controls scroll on their own: bring the chapter's
/// control into view there, without moving the page away from the tour.
fn reveal_control(field: Option<&str>) {
    let Some(field) = field else { return };
    let Some(doc) = crate::web::dom::document() else {
        return;
    };
    let id = crate::ui::fields::control_id(field);
    let (Some(el), Ok(Some(side))) = (doc.get_element_by_id(&id), doc.query_selector(".side"))
    else {
        return;
    };
    if side.scroll_height() <= side.client_height() {
        return;
    }
    let offset = el.get_bounding_client_rect().top() - side.get_bounding_client_rect().top();
    side.set_scroll_top(side.scroll_top() + offset as i32 - 48);
}

#[component]
pub fn Tour() -> impl IntoView {
    let state = expect_context::<AppState>();
    // A share link may open the tour at a chapter (its scenario comes with the link).
    let opened = state
        .tour_chapter
        .get_untracked()
        .filter(|c| *c < CHAPTERS.len());
    let stage = RwSignal::new(opened.map_or(Stage::Off, Stage::Ask));
    let picked = RwSignal::new(None::<usize>);
    let chapter_of = |s: Stage| match s {
        Stage::Ask(i) | Stage::Revealed(i) => Some(i),
        Stage::Off | Stage::Done => None,
    };
    // The open chapter goes into the address (src/share.rs)...
    Effect::new(move |_| {
        let now = chapter_of(stage.get());
        if state.tour_chapter.get_untracked() != now {
            state.tour_chapter.set(now);
        }
    });
    // ...and Back/Forward to a link with another chapter open it.
    Effect::new(move |_| {
        let wanted = state.tour_chapter.get().filter(|c| *c < CHAPTERS.len());
        if wanted != chapter_of(stage.get_untracked()) {
            stage.set(wanted.map_or(Stage::Off, Stage::Ask));
        }
    });
    let start = move |_| {
        picked.set(None);
        stage.set(Stage::Ask(0));
        enter(state, 0);
    };
    let go = move |chapter: usize| {
        picked.set(None);
        if chapter >= CHAPTERS.len() {
            stage.set(Stage::Done);
        } else {
            stage.set(Stage::Ask(chapter));
            enter(state, chapter);
        }
    };
    let predict = move |chapter: usize, choice: Option<usize>| {
        picked.set(choice);
        state.edit(CHAPTERS[chapter].action);
        stage.set(Stage::Revealed(chapter));
    };
    view! {
        <section class="tour" aria-labelledby="tour-h">
            <h2 id="tour-h">"Guided tour"</h2>
            {move || match stage.get() {
                Stage::Off => view! {
                    <p>{format!("{} short chapters on when overlapping communication with compute is free, and when it is not.", CHAPTERS.len())}</p>
                    <button type="button" class="primary" on:click=start>"Start the guided tour"</button>
                }.into_any(),
                Stage::Done => view! {
                    <p role="status" class="tour-done">"Tour complete. Every control is yours now: try your own predictions."</p>
                    <button type="button" on:click=start>"Restart the tour"</button>
                    <button type="button" on:click=move |_| stage.set(Stage::Off)>"Close"</button>
                }.into_any(),
                Stage::Ask(i) => {
                    let c = &CHAPTERS[i];
                    view! {
                        <p class="chapter-no">{format!("Chapter {} of {}", i + 1, CHAPTERS.len())}</p>
                        <h3>{c.title}</h3>
                        <p>{c.intro}</p>
                        <fieldset class="predict">
                            <legend>{c.question}</legend>
                            {c.choices.iter().enumerate().map(|(k, text)| view! {
                                <button type="button" on:click=move |_| predict(i, Some(k))>{*text}</button>
                            }).collect_view()}
                            <button type="button" class="link" on:click=move |_| predict(i, None)>"Skip: just show me"</button>
                        </fieldset>
                        <TourNav stage=stage go=go chapter=i />
                    }.into_any()
                }
                Stage::Revealed(i) => {
                    let c = &CHAPTERS[i];
                    let last = i + 1 == CHAPTERS.len();
                    view! {
                        <p class="chapter-no">{format!("Chapter {} of {}", i + 1, CHAPTERS.len())}</p>
                        <h3>{c.title}</h3>
                        <p class="your-guess">
                            {move || picked.get().map(|k| format!("You predicted: {}.", c.choices[k]))}
                        </p>
                        <ul class="reveal" aria-live="polite">
                            {c.watch.iter().map(|(label, metric)| {
                                let (label, metric) = (*label, *metric);
                                let get = move |r: &overlap_core::Report| metric.get(r);
                                let name = metric.name();
                                // The current value first: a page query for a metric
                                // finds it before any "before" value.
                                view! {
                                    <li>
                                        <span>{label}": "</span>
                                        <strong
                                            data-metric=name.clone()
                                            data-run="current"
                                            data-value=move || state.report.get().map(|r| format::raw(get(&r)))
                                        >
                                            {move || state.report.get().map(|r| shown(metric, get(&r)))}
                                        </strong>
                                        " (before: "
                                        <span
                                            data-metric=name
                                            data-run="previous"
                                            data-value=move || state.ghost.get().map(|g| format::raw(get(&g)))
                                        >
                                            {move || state.ghost.get().map(|g| shown(metric, get(&g)))}
                                        </span>
                                        ")"
                                    </li>
                                }
                            }).collect_view()}
                        </ul>
                        <p>{c.explain}</p>
                        <button type="button" class="primary" on:click=move |_| go(i + 1)>
                            {if last { "Finish the tour" } else { "Next chapter" }}
                        </button>
                        <TourNav stage=stage go=go chapter=i />
                    }.into_any()
                }
            }}
        </section>
    }
}

/// Back and leave, on every chapter.
#[component]
fn TourNav(
    stage: RwSignal<Stage>,
    go: impl Fn(usize) + Copy + Send + Sync + 'static,
    chapter: usize,
) -> impl IntoView {
    view! {
        <div class="tour-nav">
            <button type="button" disabled=chapter == 0 on:click=move |_| go(chapter.saturating_sub(1))>"Previous chapter"</button>
            <button type="button" on:click=move |_| stage.set(Stage::Off)>"Leave the tour"</button>
        </div>
    }
}
