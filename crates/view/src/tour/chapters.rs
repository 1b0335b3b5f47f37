//! The chapters, in tour order. A figure in a text is a placeholder
//! (`super::template`); every other claim is asserted on the chapter's own
//! scenario by `tests/tour_*.rs`. A chapter written with the first
//! ten fields only ends with `..Chapter::BASE`.

use overlap_core::output::metric::{AxisFigure, MemoryFigure, Metric};
use overlap_core::scenario::{CpMode, Precision, Schedule};
use overlap_core::Axis::{self, Cp, Dp, Ep, Pp, Tp};
use overlap_core::ScenarioInput;

use super::chapter::{change_choice, share_gone_choice, Chapter, Outcome, Watch};
use super::focus::Focus;

const STEP: Watch = ("step time", Metric::StepTime);

const fn axis(label: &'static str, axis: Axis, figure: AxisFigure) -> Watch {
    (label, Metric::Axis(axis, figure))
}

fn all_off(i: &mut ScenarioInput) {
    i.overlap.tp = Some(false);
    i.overlap.pp = Some(false);
    i.overlap.dp = Some(false);
}

/// The share of an axis's exposed time that the change took away.
fn exposed_gone(o: &Outcome, a: Axis) -> f64 {
    let before = o.before.axes.get(a).exposed_ms;
    if before > 0.0 {
        1.0 - o.after.axes.get(a).exposed_ms / before
    } else {
        0.0
    }
}

/// Answers to "what happens to the exposed time", in `share_gone_choice` order.
const EXPOSED_CHOICES: [&str; 3] = [
    "More than half of it disappears",
    "Some of it disappears, at most half",
    "None of it disappears",
];

/// Answers to "how much hides", in `share_gone_choice` order.
const HIDDEN_CHOICES: [&str; 3] = [
    "More than half of it",
    "Some of it, at most half",
    "None of it",
];

/// Answers to "how does it change", in `change_choice` order.
const CHANGE_CHOICES: [&str; 3] = ["It stays about the same", "It grows", "It shrinks"];

/// The tour.
pub const CHAPTERS: &[Chapter] = &[
    Chapter {
        title: "DP hides behind the backward pass",
        preset: "didactic",
        setup: all_off,
        intro: "Two DGX A100 nodes, every overlap off. The DP reduction waits until the last backward op is \
                done, and compute stands idle while it runs: all {before:axes.dp.comm_ms} of it is exposed.",
        question: "Switch DP overlap on. What happens to the DP time the GPUs wait for (exposed)?",
        choices: EXPOSED_CHOICES,
        action: |i| i.overlap.dp = Some(true),
        watch: &[
            STEP,
            axis("DP exposed", Dp, AxisFigure::Exposed),
            axis("DP window", Dp, AxisFigure::Window),
            axis("DP comm", Dp, AxisFigure::Comm),
        ],
        explain: "Each gradient bucket is reduced as soon as it is final, under the rest of the backward pass. \
                  Room is not what is missing: the window, {axes.dp.window_ms}, is larger than the traffic, \
                  {axes.dp.comm_ms}. The last bucket becomes final only when the backward pass ends, and so \
                  does the tied embedding's gradient, which the first and last stage then all-reduce across \
                  InfiniBand: neither has anything left to hide behind, and together they are the \
                  {axes.dp.exposed_ms} still exposed, at the right end of the DP lane.",
        controls: &["overlap.dp"],
        answer: Some(|o| share_gone_choice(exposed_gone(o, Dp))),
        verdict: "{axes.dp.exposed_ms} of DP's {axes.dp.comm_ms} stays exposed, down from \
                  {before:axes.dp.exposed_ms}. {gone:axes.dp.exposed_ms} of the wait is gone.",
        focus: Focus::LastBackward,
    },
    Chapter {
        title: "TP hides behind the next GEMM chunk, at a cost",
        preset: "didactic",
        setup: all_off,
        intro: "TP's AllReduce follows the GEMM that produced its input, and the next GEMM needs its output. \
                With overlap off, compute waits for every one of them: none of TP's {before:axes.tp.comm_ms} \
                runs under compute. {before:axes.tp.exposed_ms} of it is charged to TP as exposed; the other \
                {before:axes.tp.under_idle_ms} is idle time charged to a pipeline send that ends later, as \
                each idle instant is charged once.",
        question: "Switch TP overlap on (each GEMM split in 4 chunks). How much of TP's communication hides?",
        choices: HIDDEN_CHOICES,
        action: |i| i.overlap.tp = Some(true),
        watch: &[
            STEP,
            axis("TP exposed", Tp, AxisFigure::Exposed),
            axis("TP window", Tp, AxisFigure::Window),
            axis("TP comm", Tp, AxisFigure::Comm),
            ("compute busy", Metric::Compute),
        ],
        explain: "Chunk i's AllReduce runs under chunk i+1's GEMM. The window, {axes.tp.window_ms}, is larger \
                  than the traffic, {axes.tp.comm_ms}, so most of it fits. Chunking is not free: four smaller \
                  calls move the traffic in {axes.tp.comm_ms} where one call took {before:axes.tp.comm_ms}, and \
                  compute is busy {diff:compute_ms} longer, because smaller GEMMs run less efficiently and \
                  NCCL's kernels hold SMs while they run.",
        controls: &["overlap.tp", "overlap.tp_chunks"],
        answer: Some(|o| share_gone_choice(o.after.axes[Axis::Tp].hidden)),
        verdict: "{axes.tp.exposed_ms} of TP's {axes.tp.comm_ms} stays exposed, down from \
                  {before:axes.tp.exposed_ms}. {axes.tp.hidden} of its traffic hides.",
        focus: Focus::OneLayer,
    },
    Chapter {
        title: "PP sends hide behind micro-batches, up to a point",
        preset: "didactic",
        setup: |i| {
            i.overlap.tp = Some(true);
            i.overlap.dp = Some(true);
            i.overlap.pp = Some(false);
        },
        intro: "TP and DP overlap on, PP overlap off: a stage blocks on each send until the next stage has \
                reached its receive and has the data, and all {before:axes.pp.comm_ms} of PP's traffic is \
                exposed.",
        question: "Switch PP overlap on. What happens to PP's exposed time?",
        choices: EXPOSED_CHOICES,
        action: |i| i.overlap.pp = Some(true),
        watch: &[
            STEP,
            axis("PP exposed", Pp, AxisFigure::Exposed),
            axis("PP window", Pp, AxisFigure::Window),
            ("bubble", Metric::Bubble),
        ],
        explain: "An asynchronous send lets the sender go on at once. The receiver still waits whenever the data \
                  it needs next arrives after it is ready for it: {axes.pp.exposed_ms} stays exposed although \
                  the window, {axes.pp.window_ms}, is many times the traffic. The pipeline bubble is another \
                  matter: overlap does not fill it ({before:bubble_fraction} before, {bubble_fraction} after).",
        controls: &["overlap.pp"],
        answer: Some(|o| share_gone_choice(exposed_gone(o, Pp))),
        verdict: "{axes.pp.exposed_ms} of PP's {axes.pp.comm_ms} stays exposed, down from \
                  {before:axes.pp.exposed_ms}. {gone:axes.pp.exposed_ms} of the wait is gone.",
        focus: Focus::FirstSend,
    },
    Chapter {
        title: "All three overlapped contend for the same links",
        preset: "contention",
        setup: |i| i.overlap.dp = Some(false),
        intro: "Four nodes on a slow 12.5 GB/s NIC. PP and TP overlap are on; the DP reduction runs after the \
                last backward op, alone on the links (DP contention {before:axes.dp.contention_ms}).",
        question: "Switch DP overlap on, so the DP reduction runs during backward. What happens to DP's own \
                   communication time?",
        choices: CHANGE_CHOICES,
        action: |i| i.overlap.dp = Some(true),
        watch: &[
            STEP,
            axis("DP comm", Dp, AxisFigure::Comm),
            axis("DP contention", Dp, AxisFigure::Contention),
            axis("PP contention", Pp, AxisFigure::Contention),
        ],
        explain: "Overlapping each axis with compute does not overlap the axes with each other: the DP reduction \
                  and the pipeline's sends now cross the same NIC and share it, so both take longer (PP's \
                  contention goes from {before:axes.pp.contention_ms} to {axes.pp.contention_ms}). The network \
                  lanes under the GPUs show two axes stacked on one link. The step is still \
                  {diff:step_time_ms} shorter: what now hides behind compute outweighs what the sharing costs.",
        controls: &["overlap.dp"],
        answer: Some(|o| change_choice(o.before.axes[Axis::Dp].comm_ms, o.after.axes[Axis::Dp].comm_ms, 0.02)),
        verdict: "DP's communication takes {axes.dp.comm_ms}, {diff:axes.dp.comm_ms} more than the \
                  {before:axes.dp.comm_ms} it took alone; {axes.dp.contention_ms} of it is lost to sharing the links.",
        focus: Focus::NetworkLinks,
    },
    Chapter {
        title: "Where overlap stops being free",
        preset: "didactic",
        setup: |_| {},
        intro: "All overlaps on, each TP GEMM in 4 chunks: the step takes {before:step_time_ms}, with \
                {before:axes.tp.exposed_ms} of TP's communication exposed.",
        question: "Split each TP GEMM into 32 chunks instead, for more overlap. What happens to the step time?",
        choices: CHANGE_CHOICES,
        action: |i| i.overlap.tp_chunks = Some(32),
        watch: &[
            STEP,
            ("compute busy", Metric::Compute),
            axis("TP comm", Tp, AxisFigure::Comm),
            axis("TP exposed", Tp, AxisFigure::Exposed),
        ],
        explain: "Each chunk's AllReduce is a NCCL call of its own, and NCCL's bus bandwidth, what nccl-tests \
                  reports, climbs with the message size: every call pays the latency of each step of the ring, \
                  whatever it carries, and a small one runs NCCL's low-latency protocol, which gives up \
                  bandwidth to cut that latency. A chunk of the finer cut is small enough that NCCL reaches far \
                  less bus bandwidth on it than on a chunk of the coarser cut, far below its peak. So thirty-two \
                  small AllReduces take {axes.tp.comm_ms} where four took {before:axes.tp.comm_ms}, for the \
                  same bytes. Tiny GEMMs run further from peak and NCCL's kernels take SMs while they run, so \
                  compute is busy {diff:compute_ms} longer. TP's exposed time goes from \
                  {before:axes.tp.exposed_ms} to {axes.tp.exposed_ms}: past a point, chunking costs more than \
                  it hides.",
        controls: &["overlap.tp_chunks", "overlap.tp_mode"],
        answer: Some(|o| change_choice(o.before.step_time_ms, o.after.step_time_ms, 0.01)),
        verdict: "The step takes {step_time_ms}, {diff:step_time_ms} longer than the {before:step_time_ms} it \
                  took with 4 chunks.",
        focus: Focus::OneLayer,
    },
    Chapter {
        title: "Overlap switched on, yet over a third of it stays exposed",
        preset: "one-queue",
        setup: |i| i.hardware.max_connections = Some(8),
        intro: "Megatron-LM issue 1468's shape on a 6.7B GPT (the issue's model has 8B): 64 H100, data \
                parallel only, the distributed optimizer with its gradient reduce-scatters and parameter \
                gathers overlapped. With 8 hardware queues {before:axes.dp.hidden} of DP's communication hides.",
        question: "Set CUDA_DEVICE_MAX_CONNECTIONS to 1, as Megatron-LM asks for with TP overlap. How much of \
                   DP's communication still hides?",
        choices: HIDDEN_CHOICES,
        action: |i| i.hardware.max_connections = Some(1),
        watch: &[
            STEP,
            axis("DP hidden", Dp, AxisFigure::Hidden),
            axis("DP exposed", Dp, AxisFigure::Exposed),
        ],
        explain: "With one hardware queue, kernels start in the order they were launched, and one that cannot \
                  start yet holds everything behind it. The parameter gathers are launched as the step starts, \
                  one after another on the DP stream: the last waits for the one before it to end, and the \
                  forward waits behind it. Each gradient reduce-scatter is launched ahead of the next backward \
                  GEMM, starts first and still runs beside it. The switch says overlap is on; the queue decides \
                  what runs side by side. That race is why Megatron-LM asks for one queue for its TP overlap: \
                  with several, a GEMM ready beside a collective fills every SM with its first wave, and the \
                  collective starts only when that wave drains; with one, the collective, launched first, \
                  starts first. On one DGX H100 (a 4096-wide model, 48 layers, TP 8), one queue hides 38.9% of \
                  TP's traffic and eight queues 31.5%. The step takes 212.16 ms with one queue, 217.33 ms with \
                  eight.",
        controls: &["hardware.max_connections", "overlap.dp"],
        answer: Some(|o| share_gone_choice(o.after.axes[Axis::Dp].hidden)),
        verdict: "{axes.dp.hidden} of DP's traffic hides, against {before:axes.dp.hidden} with 8 queues. \
                  The step takes {step_time_ms}, {diff:step_time_ms} longer.",
        focus: Focus::LastBackward,
    },
    Chapter {
        title: "CoCoNet: slice the pipeline boundary, fuse the AllReduce",
        preset: "coconet-inference",
        setup: |i| {
            i.overlap.pp_chunks = Some(1);
            i.overlap.fuse = Some(false);
        },
        intro: "GPT-2 8.3B inference on two DGX-2 nodes: TP 16 inside each node, one pipeline stage per node. TP \
                overlap and asynchronous sends are on, and the step takes {before:step_time_ms}. At the stage \
                boundary the AllReduce finishes, each GPU sends its 1/16 slice over its own NIC, and the next \
                node gathers the slices, one step after another.",
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
                  compute stream, and compute is busy {diff:compute_ms} less; their bytes ride on the AllReduces' \
                  HBM traffic. Slicing makes the NVLink and the NIC of one GPU carry the boundary at the same \
                  moments and cuts PP's exposed time from {before:axes.pp.exposed_ms} to {axes.pp.exposed_ms}, \
                  but the boundary is small next to the step, so the step barely moves for it. On the receiving \
                  node the gather shares NVLink with that stage's own TP AllReduces.",
        controls: &["overlap.pp_chunks", "overlap.fuse"],
        answer: Some(|o| {
            let gain_ms = o.before.step_time_ms - o.after.step_time_ms;
            let fusion_ms = o.before.compute_ms - o.after.compute_ms;
            let slicing_ms = o.before.axes[Axis::Pp].exposed_ms - o.after.axes[Axis::Pp].exposed_ms;
            if gain_ms <= 0.01 * o.before.step_time_ms {
                2
            } else if fusion_ms >= slicing_ms {
                1
            } else {
                0
            }
        }),
        verdict: "The step goes from {before:step_time_ms} to {step_time_ms}; compute is {diff:compute_ms} \
                  shorter, while PP's exposed time falls by {diff:axes.pp.exposed_ms}.",
        focus: Focus::FirstSend,
    },
    Chapter {
        title: "FSDP: the parameter all-gather hides behind one layer",
        preset: "llama3-8b-fsdp",
        setup: |i| i.overlap.dp = Some(false),
        intro: "An 8B model on 64 H100: FSDP shards it across the 8 nodes, and TP 8 splits each layer inside a \
                node. Each layer's parameters are all-gathered over the network before its forward and again \
                before its backward. With DP overlap off, the GPUs wait for every gather: \
                {before:axes.dp.exposed_ms} of DP time is exposed.",
        question: "Switch DP overlap on: FSDP then gathers the next layer's parameters while the current layer \
                   computes. How much of the DP communication still stalls the GPUs?",
        choices: ["Most of it", "About half", "Almost none"],
        action: |i| i.overlap.dp = Some(true),
        watch: &[
            STEP,
            axis("DP exposed", Dp, AxisFigure::Exposed),
            axis("DP hidden", Dp, AxisFigure::Hidden),
        ],
        explain: "Each gather now runs under the layer before it, FSDP's prefetch window of one layer, and \
                  {axes.dp.hidden} of DP's traffic hides. A layer's forward computes for longer than the \
                  next layer's gather takes alone, so the network keeps up; only a gather that shares the network \
                  with a gradient reduce-scatter stretches past its layer. The window is never more than one \
                  layer: on a network a quarter as fast every gather outlasts a forward layer, and most of the DP \
                  time stalls the GPUs again.",
        controls: &["overlap.dp", "parallel.dp_sharding"],
        answer: Some(|o| {
            let dp = &o.after.axes[Axis::Dp];
            let stalls = if dp.comm_ms > 0.0 {
                dp.exposed_ms / dp.comm_ms
            } else {
                0.0
            };
            if stalls > 0.65 {
                0
            } else if stalls > 0.2 {
                1
            } else {
                2
            }
        }),
        verdict: "{axes.dp.exposed_ms} of DP's {axes.dp.comm_ms} still stalls the GPUs, down from \
                  {before:axes.dp.exposed_ms}.",
        focus: Focus::OneLayer,
    },
    Chapter {
        title: "The bubble is compute that could hide communication",
        preset: "didactic",
        setup: |i| i.parallel.schedule = Some(Schedule::OneFOneB),
        intro: "1F1B on two DGX A100 nodes, every overlap on. Each of the two stages idles in the pipeline bubble \
                while the other works, and the DP reduction hides behind the last micro-batch's backward. ZB-1p \
                splits each backward into B, the input gradient the previous stage waits for, and W, the weight \
                gradient that only the DP reduction waits for.",
        question: "Switch the schedule to ZB-1p, which moves W into the bubble. What happens to the DP window, the \
                   backward compute the gradient reduction can hide behind?",
        choices: CHANGE_CHOICES,
        action: |i| i.parallel.schedule = Some(Schedule::ZeroBubble1p),
        watch: &[
            STEP,
            ("bubble", Metric::Bubble),
            axis("DP window", Dp, AxisFigure::Window),
            axis("DP exposed", Dp, AxisFigure::Exposed),
        ],
        explain: "W fills part of the bubble: it falls from {before:bubble_fraction} to {bubble_fraction} of the \
                  step. The step goes from {before:step_time_ms} to {step_time_ms}. But the DP window shrinks from \
                  {before:axes.dp.window_ms} to {axes.dp.window_ms}. The first stage finishes the step and holds \
                  no W back, as it already keeps as many micro-batches alive as 1F1B allows: its last micro-batch \
                  runs all its B before any W, so its gradients become final only in that last W. The second stage \
                  runs its last two W after its last B, layer by layer, and its own reduction starts under them. \
                  DP exposed stays at {axes.dp.exposed_ms}: on the first stage the last bucket and the tied \
                  embedding's all-reduce run after the last backward op either way.",
        controls: &["parallel.schedule"],
        answer: Some(|o| change_choice(o.before.axes[Axis::Dp].window_ms, o.after.axes[Axis::Dp].window_ms, 0.05)),
        verdict: "The DP window goes from {before:axes.dp.window_ms} to {axes.dp.window_ms}. Meanwhile the \
                  bubble falls from {before:bubble_fraction} to {bubble_fraction}.",
        focus: Focus::LastBackward,
    },
    Chapter {
        title: "Experts: the all-to-all's window is another micro-batch",
        preset: "moe-didactic",
        setup: |_| {},
        intro: "A mixture of experts on two DGX H100 nodes: 16 experts per layer, one on each GPU (EP 16), \
                and each token goes to the GPUs of its 2 experts and back, a dispatch all-to-all before the \
                experts and a combine after them. Each GPU runs 8 micro-batches a step, with no pipeline. With \
                EP overlap off all {before:axes.ep.comm_ms} of the all-to-alls stalls compute, and their window \
                is only {before:axes.ep.window_ms}, the backward's expert weight gradients, which need nothing \
                its dispatch brings back: the experts need the tokens the dispatch brings, and the next layer \
                needs what the combine brings back.",
        question: "Switch EP overlap on. Without a pipeline Megatron-LM then runs combined 1F1B: each \
                   micro-batch's forward runs as one plan with the previous micro-batch's backward, layer by \
                   layer. What happens to EP's exposed time?",
        choices: EXPOSED_CHOICES,
        action: |i| i.overlap.ep = Some(true.into()),
        watch: &[
            STEP,
            axis("EP exposed", Ep, AxisFigure::Exposed),
            axis("EP hidden", Ep, AxisFigure::Hidden),
            axis("EP window", Ep, AxisFigure::Window),
        ],
        explain: "The forward's first layer is paired with the backward's last, and so on down, and each pair \
                  runs in fixed phases: the backward's combine under the forward's attention; the forward's \
                  dispatch under the backward's experts; the backward's dispatch under those experts' weight \
                  gradients, which need nothing it brings; the forward's combine under the backward's \
                  attention. So three of each pair's four all-to-alls run beside the other micro-batch's \
                  compute, and EP's window grows from {before:axes.ep.window_ms} to {axes.ep.window_ms}, more \
                  than the traffic, {axes.ep.comm_ms}. Every all-to-all of a paired pass hides in full. What \
                  stays exposed, {axes.ep.exposed_ms}, is the first micro-batch's forward and the last one's \
                  backward: they have no partner, and their all-to-alls wait as they did before. Inside one \
                  micro-batch the forward's all-to-alls have no window at all: combined 1F1B and DualPipe \
                  exist to give them another micro-batch's compute.",
        controls: &["overlap.ep"],
        answer: Some(|o| share_gone_choice(exposed_gone(o, Ep))),
        verdict: "{axes.ep.exposed_ms} of EP's {axes.ep.comm_ms} stays exposed, down from \
                  {before:axes.ep.exposed_ms}. The rest, {axes.ep.hidden} of it, now hides under compute.",
        focus: Focus::Wait(Ep),
    },
    Chapter {
        title: "Context parallelism: a ring step under each block, or one gather",
        preset: "long-context-ring",
        setup: |_| {},
        intro: "A 65,536-token sequence split over 8 CP ranks on two DGX H100 nodes, with TP 2 inside each. \
                Ring attention computes each layer's attention in 8 blocks, and while one block computes, the \
                next block's keys and values arrive from the ring neighbour: 7 steps per attention, forward and \
                backward. {before:axes.cp.exposed_ms} of CP's {before:axes.cp.comm_ms} is exposed.",
        question: "Switch to Llama 3's form: all-gather every rank's keys and values before attention, CP overlap \
                   still on. What happens to CP's exposed time?",
        choices: CHANGE_CHOICES,
        action: |i| i.parallel.cp_mode = Some(CpMode::Allgather),
        watch: &[
            STEP,
            axis("CP exposed", Cp, AxisFigure::Exposed),
            axis("CP comm", Cp, AxisFigure::Comm),
            axis("CP hidden", Cp, AxisFigure::Hidden),
        ],
        explain: "One collective replaces the 7 steps, and with the backward's second gather its traffic takes \
                  {axes.cp.comm_ms} where the ring's took {before:axes.cp.comm_ms}. But Transformer Engine, whose \
                  form this is, runs the gather on the compute stream before any attention: a layer's keys and \
                  values come out of its own QKV projection just before, so nothing is left to hide the gather \
                  under, and CP overlap changes nothing here. The backward gathers the keys and values again, \
                  and after all 8 blocks reduce-scatters their gradients, QKV's backward waiting for them. So \
                  {axes.cp.exposed_ms} of CP's time is exposed, none of it under compute, and the step is \
                  {diff:step_time_ms} longer than with the ring, which has a block to hide each step under, \
                  forward and backward.",
        controls: &["parallel.cp_mode", "overlap.cp"],
        answer: Some(|o| change_choice(o.before.axes.get(Cp).exposed_ms, o.after.axes.get(Cp).exposed_ms, 0.02)),
        verdict: "CP's exposed time goes from {before:axes.cp.exposed_ms} to {axes.cp.exposed_ms}, although its \
                  traffic takes {axes.cp.comm_ms} instead of {before:axes.cp.comm_ms}.",
        focus: Focus::Wait(Cp),
    },
    Chapter {
        title: "FP8 speeds the GEMMs, not the communication",
        preset: "llama3-8b-fsdp",
        setup: |_| {},
        intro: "Llama-3-8B on 64 H100 in bf16: FSDP across the 8 nodes, TP 8 inside each with sequence \
                parallelism, and its gathers and reduce-scatters cut into ring steps under the pieces of the \
                GEMMs (PyTorch's Async TP). Those GEMMs are TP's window, {before:axes.tp.window_ms}, against \
                {before:axes.tp.comm_ms} of TP's traffic. {before:axes.tp.hidden} of it hides under them.",
        question: "Run the linear layers in FP8 (torchtitan's Float8), at twice the bf16 peak. What happens to \
                   TP's exposed time?",
        choices: CHANGE_CHOICES,
        action: |i| i.workload.precision = Some(Precision::Fp8),
        watch: &[
            STEP,
            ("compute busy", Metric::Compute),
            axis("TP window", Tp, AxisFigure::Window),
            axis("TP exposed", Tp, AxisFigure::Exposed),
        ],
        explain: "Each GEMM alone takes a little over half the time: cuBLAS's fp8 GEMMs reach 71% of a peak \
                  twice as high, its bf16 ones 80% of theirs. TP's window shrinks from {before:axes.tp.window_ms} \
                  to {axes.tp.window_ms}. TP's traffic shrinks less, from {before:axes.tp.comm_ms} to \
                  {axes.tp.comm_ms}: Float8's TP casts each layer input, and each output gradient, before \
                  gathering it, so the gathers move fp8, half their bytes, but the reduce-scatters still move \
                  bf16. And a tensorwise scale is one number for a whole tensor that each TP rank holds a shard \
                  of: before each such cast, and each cast of a weight (FSDP gathers them in bf16 here), the \
                  eight ranks all-reduce their maximum, a call of a few bytes that the cast waits for, 25 per \
                  layer and micro-batch. Nothing runs beside those calls, so they are exposed whole: \
                  {axes.tp.hidden} of TP's traffic hides, against {before:axes.tp.hidden}. TP's exposed time \
                  goes from {before:axes.tp.exposed_ms} to {axes.tp.exposed_ms}. FSDP's gathers, still \
                  bf16 here (fp8 gathers are FSDP's own switch), and its reduce-scatters lose window with \
                  nothing to shrink them: DP exposed {before:axes.dp.exposed_ms} before, \
                  {axes.dp.exposed_ms} after. Compute is {diff:compute_ms} shorter, far from half of \
                  {before:compute_ms}: attention runs in bf16 as long as before, and casting to fp8 adds \
                  memory-bound kernels of its own. The step is only {diff:step_time_ms} shorter.",
        controls: &["workload.precision"],
        answer: Some(|o| change_choice(o.before.axes[Axis::Tp].exposed_ms, o.after.axes[Axis::Tp].exposed_ms, 0.05)),
        verdict: "TP's exposed time goes from {before:axes.tp.exposed_ms} to {axes.tp.exposed_ms}, of \
                  {axes.tp.comm_ms} instead of {before:axes.tp.comm_ms}; compute is {diff:compute_ms} shorter, \
                  the step {diff:step_time_ms}.",
        focus: Focus::OneLayer,
    },
    Chapter {
        title: "DualPipe exists to hide the all-to-all",
        preset: "moe-didactic",
        setup: |i| {
            i.hardware.nodes = Some(4);
            i.parallel.pp = Some(2);
            i.parallel.dp = Some(16);
            i.overlap.ep = Some(true.into());
        },
        intro: "Chapter 10's mixture of experts, two of its stages in a pipeline: four DGX H100 nodes, two \
                pipeline stages of two nodes each, EP 16 inside each stage, 8 micro-batches a step. EP overlap \
                is on, but Megatron-LM refuses combined 1F1B on a pipeline without virtual stages, so 1F1B \
                runs each pass alone. All EP overlap can do here is run the backward's dispatch under the \
                experts' weight gradients (this model has no shared expert to run beside the all-to-alls). \
                On the GPU that finishes last, {before:axes.ep.exposed_ms} of EP's {before:axes.ep.comm_ms} \
                stays exposed. That GPU idles {before:bubble_fraction} of the step in the pipeline bubble.",
        question: "Switch the schedule to DualPipeV, DeepSeek-V3's: each GPU holds two chunks of the layers in a \
                   V, the first GPU the first layers and the last, and in the middle of the step it runs a \
                   forward chunk of one micro-batch and a backward chunk of another as one pass, layer by layer. \
                   What happens to EP's exposed time?",
        choices: CHANGE_CHOICES,
        action: |i| {
            i.parallel.schedule = Some(Schedule::DualPipeV);
            i.parallel.virtual_stages = Some(2);
        },
        watch: &[
            STEP,
            ("bubble", Metric::Bubble),
            axis("EP exposed", Ep, AxisFigure::Exposed),
            axis("EP hidden", Ep, AxisFigure::Hidden),
            ("memory, fullest GPU", Metric::Memory(MemoryFigure::Total)),
        ],
        explain: "DualPipeV's chunk pairs do on a pipeline what chapter 10's combined 1F1B does without one: a \
                  forward chunk's all-to-alls run under the backward chunk's compute and the backward's under \
                  the forward's. On the first GPU, which finishes last, {axes.ep.hidden} of EP's communication \
                  hides under compute, against {before:axes.ep.hidden} with 1F1B. EP's exposed time there falls from \
                  {before:axes.ep.exposed_ms} to {axes.ep.exposed_ms}, of about the same traffic \
                  ({before:axes.ep.comm_ms} before, {axes.ep.comm_ms} after). Nearly all of what stays exposed \
                  belongs to the chunks DualPipeV runs alone, in its warm-up and its cool-down. The V fills the \
                  pipeline too: the bubble falls from {before:bubble_fraction} to {bubble_fraction} of the \
                  step. The first GPU now computes the output layer and the loss besides the embedding, and is \
                  busy {diff:compute_ms} longer than 1F1B's first stage: the output layer's forward and \
                  backward, and compute slowed a little by the all-to-alls now running beside it, whose kernels \
                  hold some of the GPU's SMs. The step is still {diff:step_time_ms} shorter. Memory grows on the first GPU, from {before:memory_gb.total} to {memory_gb.total}. \
                  DeepSeek-V3 gives DualPipe twice 1F1B's parameters per GPU, but that counts per stage of its \
                  pipeline, and DualPipeV has twice as many stages as GPUs: here each GPU's two chunks hold one \
                  1F1B stage's layers between them, and only the output layer adds to the first GPU's weights \
                  ({before:memory_gb.weights} before, {memory_gb.weights} after). Its activations grow from \
                  {before:memory_gb.activations} to {memory_gb.activations}, as DualPipeV keeps more forwards \
                  alive on it than 1F1B.",
        controls: &["parallel.schedule", "parallel.virtual_stages", "overlap.ep"],
        answer: Some(|o| change_choice(o.before.axes.get(Ep).exposed_ms, o.after.axes.get(Ep).exposed_ms, 0.05)),
        verdict: "EP's exposed time goes from {before:axes.ep.exposed_ms} to {axes.ep.exposed_ms} of about the \
                  same traffic, and the step from {before:step_time_ms} to {step_time_ms}. The bubble falls \
                  from {before:bubble_fraction} to {bubble_fraction}.",
        focus: Focus::Wait(Ep),
    },
    Chapter {
        title: "The best layout is decided by windows",
        preset: "didactic",
        setup: |i| {
            i.parallel.tp = Some(8);
            i.parallel.pp = Some(1);
            i.parallel.dp = Some(2);
        },
        intro: "The didactic model on its 16 GPUs without a pipeline: TP 8 fills each node and DP 2 spans the \
                two, every overlap on. Each GEMM is an eighth of its layer, too short to hide TP's traffic: \
                {before:axes.tp.comm_ms} of it against a window of {before:axes.tp.window_ms}. \
                {before:axes.tp.exposed_ms} of it is exposed.",
        question: "Move to TP 2 x DP 8: the same GPUs and the same work per GPU. What happens to the step time?",
        choices: CHANGE_CHOICES,
        action: |i| {
            i.parallel.tp = Some(2);
            i.parallel.dp = Some(8);
        },
        watch: &[
            STEP,
            ("compute busy", Metric::Compute),
            axis("TP exposed", Tp, AxisFigure::Exposed),
            axis("TP window", Tp, AxisFigure::Window),
            axis("DP window", Dp, AxisFigure::Window),
            axis("DP exposed", Dp, AxisFigure::Exposed),
        ],
        explain: "Compute barely moves, from {before:compute_ms} to {compute_ms}: what moves is what fits in the \
                  windows. TP's traffic falls to {axes.tp.comm_ms}, inside its window of {axes.tp.window_ms}. \
                  Only {axes.tp.exposed_ms} of it stays exposed. DP's traffic grows from {before:axes.dp.comm_ms} to \
                  {axes.dp.comm_ms}, as each GPU now holds half of every layer's weights instead of an eighth. Its \
                  window grows more: the global batch of 8 over 8 replicas gives each one micro-batch, so the \
                  window lies in the step's only backward pass, {axes.dp.window_ms}, where four micro-batches per \
                  replica left it the last one's, {before:axes.dp.window_ms}. DP's exposed time stays near where it \
                  was, {before:axes.dp.exposed_ms} then {axes.dp.exposed_ms}. The Search layouts view ranks every \
                  layout of a model this way, each simulated.",
        controls: &["parallel.tp", "parallel.dp"],
        answer: Some(|o| change_choice(o.before.step_time_ms, o.after.step_time_ms, 0.05)),
        verdict: "The step goes from {before:step_time_ms} to {step_time_ms} on about the same compute. TP's \
                  exposed time falls from {before:axes.tp.exposed_ms} to {axes.tp.exposed_ms}.",
        focus: Focus::OneLayer,
    },
];
