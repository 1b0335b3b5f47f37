//! A rank file's JSON shape, as serde writes it: the header HTA reads
//! (rank, device), the simulator's figures, and the trace events.

use serde::Serialize;

use crate::model::op::Phase;

#[derive(Serialize)]
pub(super) struct RankFile<'a> {
    #[serde(rename = "schemaVersion")]
    pub(super) schema_version: u32,
    // First: HTA takes the first `"rank": N` in the file as its rank.
    #[serde(rename = "distributedInfo")]
    pub(super) distributed_info: DistributedInfo,
    #[serde(rename = "deviceProperties")]
    pub(super) device_properties: [DeviceProperties; 1],
    #[serde(rename = "overlapLab")]
    pub(super) overlap_lab: SimulatedGpu,
    #[serde(rename = "displayTimeUnit")]
    pub(super) display_time_unit: &'static str,
    #[serde(rename = "traceEvents")]
    pub(super) trace_events: Vec<Event<'a>>,
}

#[derive(Serialize)]
pub(super) struct DistributedInfo {
    pub(super) backend: &'static str,
    pub(super) rank: u32,
    pub(super) world_size: u64,
}

#[derive(Serialize)]
pub(super) struct DeviceProperties {
    pub(super) id: u32,
    pub(super) name: &'static str,
}

/// What the simulator says of this GPU, for readers and for checking HTA.
#[derive(Serialize)]
pub(super) struct SimulatedGpu {
    /// Ranks this file stands for under the symmetric reduction, e.g. "0-7".
    pub(super) stands_for: String,
    pub(super) stands_for_count: u32,
    pub(super) pipeline_stage: u32,
    pub(super) step_time_ms: f64,
    /// HTA's overlap ratio computed from the timeline (the report's figure).
    pub(super) hta_overlap: f64,
    /// HTA's temporal breakdown computed from the timeline, µs.
    pub(super) kernel_span_us: f64,
    pub(super) compute_us: f64,
    pub(super) idle_us: f64,
}

#[derive(Serialize)]
pub(super) struct Event<'a> {
    pub(super) ph: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) cat: Option<&'static str>,
    pub(super) name: String,
    pub(super) pid: u32,
    pub(super) tid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) ts: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) dur: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) id: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) bp: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) args: Option<Args<'a>>,
}

#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum Args<'a> {
    Name { name: String },
    Launch { correlation: u64 },
    Kernel(KernelArgs<'a>),
}

#[derive(Serialize)]
pub(super) struct KernelArgs<'a> {
    pub(super) queued: u32,
    pub(super) device: u32,
    pub(super) context: u32,
    pub(super) stream: u32,
    pub(super) correlation: u64,
    /// The model's op, as the page labels it.
    pub(super) op: &'a str,
    pub(super) phase: Phase,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) layer: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) micro_batch: Option<u32>,
    pub(super) chunk: u32,
    /// Communication: bytes each rank sends to its ring neighbour.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) message_bytes: Option<f64>,
    /// Communication: the process group, as PyTorch's profiler writes it
    /// on an NCCL kernel (`ProcessGroupNCCL`'s name, the description
    /// Megatron-LM gives its groups, the global ranks).
    #[serde(rename = "Process Group Name", skip_serializing_if = "Option::is_none")]
    pub(super) pg_name: Option<String>,
    #[serde(
        rename = "Process Group Description",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) pg_desc: Option<&'static str>,
    #[serde(
        rename = "Process Group Ranks",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) pg_ranks: Option<String>,
}

impl<'a> Event<'a> {
    pub(super) fn meta(name: &str, pid: u32, tid: u32, value: String) -> Self {
        Event {
            ph: "M",
            cat: None,
            name: name.to_string(),
            pid,
            tid,
            ts: None,
            dur: None,
            id: None,
            bp: None,
            args: Some(Args::Name { name: value }),
        }
    }

    pub(super) fn slice(
        cat: &'static str,
        name: String,
        pid: u32,
        tid: u32,
        ts: i64,
        dur: i64,
    ) -> Self {
        Event {
            ph: "X",
            cat: Some(cat),
            name,
            pid,
            tid,
            ts: Some(ts),
            dur: Some(dur),
            id: None,
            bp: None,
            args: None,
        }
    }

    pub(super) fn flow(ph: &'static str, id: u64, pid: u32, tid: u32, ts: i64) -> Self {
        Event {
            ph,
            cat: Some("ac2g"),
            name: "ac2g".to_string(),
            pid,
            tid,
            ts: Some(ts),
            dur: None,
            id: Some(id),
            bp: (ph == "f").then_some("e"),
            args: None,
        }
    }
}
