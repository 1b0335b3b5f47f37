//! One rank's file: its metadata, every kernel with its launch and flow,
//! the simulator's figures for the GPU, written as JSON.

use serde::Serialize;

use crate::collective::Libraries;
use crate::model::axis::Lane;
use crate::model::op::NONE;
use crate::model::scenario::Scenario;
use crate::output::hta::KernelSets;
use crate::output::timeline::{GpuLanes, Timeline};

use super::json_format::TraceFormatter;
use super::kernel_names::{device_name, kernel_name, stream_name};
use super::process_group::{process_group, ranks_text};
use super::schema::{
    Args, DeviceProperties, DistributedInfo, Event, KernelArgs, RankFile, SimulatedGpu,
};
use super::streams::{Placed, LAUNCH_US};

/// Host process ids are made up; they only have to differ from device ids.
const HOST_PID_BASE: u32 = 4000;

/// "0-7" for a block of ranks, "5" for one.
pub(super) fn rank_range(first: u32, count: u32) -> String {
    if count <= 1 {
        first.to_string()
    } else {
        format!("{first}-{}", first + count - 1)
    }
}

#[allow(clippy::too_many_arguments)] // one rank's file: its GPU, its kernels and streams, the shared clock
pub(super) fn rank_json(
    s: &Scenario,
    t: &Timeline,
    g: &GpuLanes,
    placed: &[Placed<'_>],
    streams: &[(u32, Lane)],
    shift: i64,
    step_end_us: i64,
    libraries: &Libraries,
) -> String {
    let device = g.rank % s.hardware.gpus_per_node.max(1);
    let host = HOST_PID_BASE + g.rank;
    let mut events = Vec::with_capacity(8 + streams.len() + 4 * placed.len());
    events.push(Event::meta("process_name", host, 0, "python".into()));
    events.push(Event::meta(
        "thread_name",
        host,
        host,
        "python main thread".into(),
    ));
    events.push(Event::meta(
        "process_name",
        device,
        0,
        format!("GPU {device}"),
    ));
    for &(stream, lane) in streams {
        events.push(Event::meta(
            "thread_name",
            device,
            stream,
            format!(
                "stream {stream} ({})",
                stream_name(
                    lane,
                    placed.iter().find(|k| k.stream == stream).map(|k| k.iv),
                    libraries
                )
            ),
        ));
    }
    events.push(Event::slice(
        "user_annotation",
        "ProfilerStep#1".into(),
        host,
        host,
        0,
        step_end_us,
    ));
    for (i, k) in placed.iter().enumerate() {
        let correlation = i as u64 + 1;
        let (launch, ts) = (k.launch_us + shift, k.ts_us + shift);
        let mut call = Event::slice(
            "cuda_runtime",
            "cudaLaunchKernel".into(),
            host,
            host,
            launch,
            LAUNCH_US,
        );
        call.args = Some(Args::Launch { correlation });
        events.push(call);
        let iv = k.iv;
        let group = match k.lane {
            Lane::Comm(axis) => Some(process_group(s, g.rank, iv, axis)),
            Lane::Compute => None,
        };
        let mut kernel = Event::slice(
            "kernel",
            kernel_name(iv, k.lane, s, libraries),
            device,
            k.stream,
            ts,
            k.end_us - k.ts_us,
        );
        kernel.args = Some(Args::Kernel(KernelArgs {
            queued: 0,
            device,
            context: 1,
            stream: k.stream,
            correlation,
            op: iv.op.label(),
            phase: iv.phase,
            layer: (iv.layer != NONE).then_some(iv.layer),
            micro_batch: (iv.micro_batch != NONE).then_some(iv.micro_batch),
            chunk: iv.chunk,
            message_bytes: iv.op.is_comm().then_some(iv.bytes),
            pg_name: group
                .as_ref()
                .map(|(desc, ranks)| format!("{}:{}", desc.to_ascii_lowercase(), ranks[0])),
            pg_desc: group.as_ref().map(|(desc, _)| *desc),
            pg_ranks: group.as_ref().map(|(_, ranks)| ranks_text(ranks)),
        }));
        events.push(kernel);
        events.push(Event::flow("s", correlation, host, host, launch));
        events.push(Event::flow("f", correlation, device, k.stream, ts));
    }
    let sets = KernelSets::of(g);
    let breakdown = sets.breakdown();
    let file = RankFile {
        schema_version: 1,
        distributed_info: DistributedInfo {
            backend: "nccl",
            rank: g.rank,
            world_size: s.hardware.gpus(),
        },
        device_properties: [DeviceProperties {
            id: device,
            name: device_name(s.hardware_preset),
        }],
        overlap_lab: SimulatedGpu {
            stands_for: rank_range(g.rank, g.represents),
            stands_for_count: g.represents,
            pipeline_stage: g.stage,
            step_time_ms: t.step_time_s * 1e3,
            hta_overlap: sets.overlap(),
            kernel_span_us: breakdown.span_s * 1e6,
            compute_us: breakdown.compute_s * 1e6,
            idle_us: breakdown.idle_s * 1e6,
        },
        display_time_unit: "ms",
        trace_events: events,
    };
    let mut out = Vec::with_capacity(160 * file.trace_events.len());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, TraceFormatter::default());
    file.serialize(&mut ser).expect("a trace serialises");
    out.push(b'\n');
    String::from_utf8(out).expect("serde_json writes UTF-8")
}
