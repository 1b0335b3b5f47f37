//! The cluster: nodes of GPUs, their memory, NVLink through NVSwitch inside a
//! node and one NIC per GPU across nodes.

use serde::{Deserialize, Serialize};

/// Declares the presets with each one's name (in scenarios, share links
/// and serde) and label (the page's select) spelled once: the enum, its
/// serde names, `ALL`, `name` and `label` all come from this list.
macro_rules! hardware_presets {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal, $label:literal;)*) => {
        /// A named datasheet configuration. Every field stays editable afterwards.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        pub enum HardwarePreset {
            $($(#[doc = $doc])* #[serde(rename = $name)] $variant,)*
        }

        impl HardwarePreset {
            /// Every preset, in the order the page lists them.
            pub const ALL: [HardwarePreset; [$($name),*].len()] = [$(Self::$variant),*];

            /// The preset's key in scenarios and share links.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }

            /// What the page's preset select shows for it.
            pub const fn label(self) -> &'static str {
                match self {
                    $(Self::$variant => $label,)*
                }
            }
        }
    };
}

hardware_presets! {
    /// DGX-2: 16 V100 per node on NVSwitch, 8 EDR NICs.
    Dgx2V100 = "dgx2-v100", "DGX-2 (16 × V100)";
    /// DGX A100: 8 A100 per node on NVSwitch, 8 HDR NICs.
    DgxA100 = "dgx-a100", "DGX A100 (8 × A100)";
    /// DGX H100: 8 H100 per node on NVSwitch 3, 8 NDR NICs.
    DgxH100 = "dgx-h100", "DGX H100 (8 × H100)";
}

impl HardwarePreset {
    /// The preset with this key, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Memory per GPU, GB, from the datasheets: V100 32 GB (the DGX-2's
    /// SXM3 parts), A100 80 GB, H100 80 GB.
    pub fn hbm_gb(self) -> f64 {
        match self {
            Self::Dgx2V100 => 32.0,
            Self::DgxA100 | Self::DgxH100 => 80.0,
        }
    }

    /// Datasheet figures, one node. NIC bandwidth is per GPU: a DGX-2 has
    /// 8 x 100 Gb/s EDR for 16 GPUs (6.25 GB/s each), a DGX A100 one 200 Gb/s
    /// HDR port per GPU (25 GB/s), a DGX H100 one 400 Gb/s NDR port (50 GB/s).
    /// Latencies per ring step: ~2 us through NVSwitch and ~5 us across
    /// InfiniBand (NCCL's own tuning model puts a ring step at 1.9 us on
    /// NVLink and 4 us on the network with its LL128 protocol).
    pub fn hardware(self) -> Hardware {
        // SMs: 80 on V100, 108 on A100, 132 on H100 SXM (NVIDIA's
        // architecture whitepapers).
        // FP8 dense peak: H100 SXM 1979 TFLOP/s (NVIDIA H100 datasheet,
        // without sparsity); V100 and A100 have no FP8 tensor cores (0).
        let fp8_tflops = match self {
            Self::Dgx2V100 | Self::DgxA100 => 0.0,
            Self::DgxH100 => 1979.0,
        };
        let (gpus_per_node, peak_tflops, hbm_gbps, nvlink_gbps, nic_gbps, sms) = match self {
            Self::Dgx2V100 => (16, 125.0, 900.0, 150.0, 6.25, 80),
            Self::DgxA100 => (8, 312.0, 2039.0, 300.0, 25.0, 108),
            Self::DgxH100 => (8, 989.0, 3350.0, 450.0, 50.0, 132),
        };
        Hardware {
            nodes: 1,
            gpus_per_node,
            peak_tflops,
            hbm_gbps,
            nvlink_gbps,
            nic_gbps,
            oversubscription: 1.0,
            nvlink_latency_us: 2.0,
            network_latency_us: 5.0,
            sms,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            hbm_gb: self.hbm_gb(),
            fp8_tflops,
        }
    }
}

/// The hardware of one scenario, with units in the field names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hardware {
    /// Nodes in the cluster.
    pub nodes: u32,
    /// GPUs in each node, all on one NVLink switch.
    pub gpus_per_node: u32,
    /// Dense fp16/bf16 peak per GPU.
    pub peak_tflops: f64,
    /// HBM bandwidth per GPU, GB/s.
    pub hbm_gbps: f64,
    /// Per GPU and direction, through NVSwitch, GB/s.
    pub nvlink_gbps: f64,
    /// Network per GPU and direction, GB/s.
    pub nic_gbps: f64,
    /// 1 = non-blocking fat tree; 2 = the core carries half of what the NICs could send.
    pub oversubscription: f64,
    /// Latency of one NVLink hop, microseconds.
    pub nvlink_latency_us: f64,
    /// Latency of one network hop, microseconds.
    pub network_latency_us: f64,
    /// Streaming multiprocessors per GPU: what compute and NCCL's thread
    /// blocks share.
    pub sms: u32,
    /// Hardware work queues the process uses (`CUDA_DEVICE_MAX_CONNECTIONS`):
    /// streams beyond this share queues, and kernels of one queue run in
    /// launch order (`queues`).
    #[serde(default = "default_max_connections")]
    pub max_connections: u32,
    /// Memory capacity per GPU, GB: what the memory report checks a
    /// scenario against.
    #[serde(default = "default_hbm_gb")]
    pub hbm_gb: f64,
    /// Dense FP8 peak per GPU, TFLOP/s, from the preset's datasheet; 0 on
    /// a GPU without FP8 tensor cores (V100, A100), where fp8 is refused.
    #[serde(default)]
    pub fp8_tflops: f64,
}

/// CUDA's default number of hardware work queues per process.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 8;

fn default_max_connections() -> u32 {
    DEFAULT_MAX_CONNECTIONS
}

/// A serialised hardware without `hbm_gb` (written before it was a field)
/// had the A100's and H100's 80 GB, the presets most scenarios use.
fn default_hbm_gb() -> f64 {
    HardwarePreset::DgxA100.hbm_gb()
}

/// Fraction of the datasheet HBM bandwidth a streaming kernel reaches.
/// Measured on A100 80GB SXM: 1.80 of 2.04 TB/s, which Nsight Compute
/// reports as 88% of peak, and about 90% for the best kernel of a GTC talk
/// it cites (NVIDIA Developer Forums, "Trouble to Reach Peak Bandwidth of
/// A100", 2025). Not measured here for V100 and H100, so it stands for
/// every generation.
pub const HBM_ACHIEVABLE_FRACTION: f64 = 0.88;

impl Hardware {
    /// HBM bandwidth kernels and collectives share, bytes per second: the
    /// datasheet's times what a streaming kernel reaches.
    pub fn hbm_achievable_bps(&self) -> f64 {
        self.hbm_gbps * 1e9 * HBM_ACHIEVABLE_FRACTION
    }

    /// GPUs in the cluster.
    pub fn gpus(&self) -> u64 {
        u64::from(self.nodes) * u64::from(self.gpus_per_node)
    }
}
