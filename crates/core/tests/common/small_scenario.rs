//! The small random scenarios the property tests draw: up to four nodes of
//! up to eight GPUs, a 512-wide model of one or two layers per virtual
//! stage, every axis and overlap switch. Each test picks the schedules and
//! the knobs it covers; the shapes and their JSON are written once here.

use proptest::prelude::*;

/// Every schedule, by its scenario name, in `Schedule::ALL`'s order.
pub const ALL_SCHEDULES: &[&str] = &[
    "gpipe",
    "1f1b",
    "interleaved",
    "zb-1p",
    "zb-2p",
    "zb-v",
    "dualpipe-v",
];

/// The schedules the first version had.
pub const FIRST_SCHEDULES: &[&str] = &["gpipe", "1f1b", "interleaved"];

/// One drawn scenario: the fields the tests vary. Its GPUs always divide
/// into `tp x pp` groups.
#[derive(Clone, Debug)]
pub struct Small {
    pub hardware: &'static str,
    pub nodes: u32,
    pub gpus_per_node: u32,
    pub oversubscription: f64,
    pub nic_gbps: f64,
    pub max_connections: u32,
    pub tp: u32,
    pub pp: u32,
    pub virtual_stages: u32,
    pub layers_per_stage: u32,
    pub micro_batch: u32,
    /// Micro-batches per pipeline stage: the global batch is this times
    /// `micro_batch x dp x pp`.
    pub micro_batches_per_stage: u32,
    pub schedule: &'static str,
    pub recompute: &'static str,
    pub sequence_parallel: bool,
    pub scatter_gather: bool,
    pub overlap: (bool, bool, bool),
    pub tp_chunks: u32,
    pub bucket_mb: f64,
    pub inference: bool,
}

/// Scenarios over `schedules`, with up to `max_m` micro-batches per stage
/// and `max_chunks` TP chunks.
pub fn small(
    schedules: &'static [&'static str],
    max_m: u32,
    max_chunks: u32,
) -> impl Strategy<Value = Small> {
    let cluster = (
        prop::sample::select(vec!["dgx-a100", "dgx-h100"]),
        1u32..=4,
        prop::sample::select(vec![1u32, 2, 4, 8]),
        1.0f64..4.0,
        prop::sample::select(vec![0.01f64, 1.0, 25.0]),
        prop::sample::select(vec![1u32, 2, 3, 8]),
    );
    let parallel = (
        prop::sample::select(vec![1u32, 2, 4, 8]),
        1u32..=4,
        1u32..=2,
        1u32..=2,
        1u32..=2,
        1u32..=max_m,
        prop::sample::select(schedules.to_vec()),
    );
    let switches = (
        prop::sample::select(vec!["none", "selective", "full"]),
        any::<bool>(),
        any::<bool>(),
        any::<(bool, bool, bool)>(),
        1u32..=max_chunks,
        1.0f64..200.0,
        any::<bool>(),
    );
    (cluster, parallel, switches)
        .prop_map(|(c, p, w)| {
            let (hardware, nodes, gpus_per_node, oversubscription, nic_gbps, max_connections) = c;
            let (tp, pp, v, layers_per_stage, micro_batch, m, schedule) = p;
            let (
                recompute,
                sequence_parallel,
                scatter_gather,
                overlap,
                tp_chunks,
                bucket_mb,
                inference,
            ) = w;
            let virtual_stages = match schedule {
                "interleaved" => v,
                "zb-v" | "dualpipe-v" => 2,
                _ => 1,
            };
            Small {
                hardware,
                nodes,
                gpus_per_node,
                oversubscription,
                nic_gbps,
                max_connections,
                tp: tp.min(gpus_per_node),
                pp,
                virtual_stages,
                layers_per_stage,
                micro_batch,
                micro_batches_per_stage: m,
                schedule,
                recompute,
                sequence_parallel,
                scatter_gather,
                overlap,
                tp_chunks,
                bucket_mb,
                inference,
            }
        })
        .prop_filter("tp x pp divides the GPUs", |s| {
            (s.nodes * s.gpus_per_node) % (s.tp * s.pp) == 0
        })
}

impl Small {
    /// Its scenario JSON. `hardware_extra` and `extra` are appended, each
    /// starting with a comma, inside `hardware` and at the top level
    /// (`,"hbm_gbps":150`, `,"sm_tax":0.2`).
    pub fn json(&self, hardware_extra: &str, extra: &str) -> String {
        let dp = self.nodes * self.gpus_per_node / (self.tp * self.pp);
        let (o_tp, o_pp, o_dp) = self.overlap;
        format!(
            r#"{{"hardware":{{"preset":"{}","nodes":{},"gpus_per_node":{},"oversubscription":{},"nic_gbps":{},"max_connections":{}{hardware_extra}}},
            "workload":{{"layers":{},"hidden":512,"heads":8,"seq":256,"vocab":1000,"micro_batch":{},
              "global_batch":{},"recompute":"{}","sequence_parallel":{},"mode":"{}"}},
            "parallel":{{"tp":{},"pp":{},"dp":{dp},"schedule":"{}","virtual_stages":{},"scatter_gather":{}}},
            "overlap":{{"tp":{o_tp},"pp":{o_pp},"dp":{o_dp},"tp_chunks":{},"bucket_mb":{}}}{extra}}}"#,
            self.hardware,
            self.nodes,
            self.gpus_per_node,
            self.oversubscription,
            self.nic_gbps,
            self.max_connections,
            self.layers_per_stage * self.pp * self.virtual_stages,
            self.micro_batch,
            self.micro_batch * dp * self.micro_batches_per_stage * self.pp,
            self.recompute,
            self.sequence_parallel,
            if self.inference { "inference" } else { "train" },
            self.tp,
            self.pp,
            self.schedule,
            self.virtual_stages,
            self.scatter_gather,
            self.tp_chunks,
            self.bucket_mb,
        )
    }

    /// GPUs in the cluster.
    pub fn gpus(&self) -> u32 {
        self.nodes * self.gpus_per_node
    }
}
