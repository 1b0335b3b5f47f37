//! The names a profiler would show: each kernel's (cuBLAS, FlashAttention,
//! the fused optimizer's, or the collective library's), each stream's and
//! the device's.

use crate::collective::{collective_of, KernelSite, Libraries};
use crate::model::axis::{Axis, Lane};
use crate::model::hardware::HardwarePreset;
use crate::model::op::OpKind;
use crate::model::scenario::{Attention, Scenario, Workload};
use crate::output::timeline::Interval;

pub(super) fn device_name(preset: HardwarePreset) -> &'static str {
    match preset {
        HardwarePreset::Dgx2V100 => "Tesla V100-SXM3-32GB",
        HardwarePreset::DgxA100 => "NVIDIA A100-SXM4-80GB",
        HardwarePreset::DgxH100 => "NVIDIA H100 80GB HBM3",
    }
}

/// The name a profiler would show for the kernel that does most of the op.
/// HTA classifies by name: `nccl...Kernel` is communication, and a name with
/// neither "Memcpy", "Memset" nor "Sync" in it is computation.
pub(super) fn kernel_name(
    iv: &Interval,
    lane: Lane,
    s: &Scenario,
    libraries: &Libraries,
) -> String {
    let v100 = s.hardware_preset == HardwarePreset::Dgx2V100;
    let half = if v100 { "f16" } else { "bf16" };
    if let Lane::Comm(axis) = lane {
        let dtype = if axis == Axis::Dp && s.overlap.grad_bytes == 4 {
            "f32"
        } else {
            half
        };
        let kind = collective_of(iv.op);
        let across_nodes =
            axis == Axis::Ep && s.parallel.ep * s.parallel.etp > s.hardware.gpus_per_node;
        return libraries.for_call(axis, kind).kernel_name(&KernelSite {
            op: iv.op,
            kernel: iv.kernel,
            dtype,
            across_nodes,
        });
    }
    // cuBLAS names end in the operand layouts: forward and input gradient
    // differ from the weight gradient.
    let layout = match iv.op {
        OpKind::MlpUpDgrad | OpKind::QkvDgrad => "nn",
        OpKind::MlpUpWgrad | OpKind::QkvWgrad => "nt",
        _ => "tn",
    };
    let gemm = |layout: &str| {
        match s.hardware_preset {
        HardwarePreset::Dgx2V100 => format!("volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_{layout}"),
        HardwarePreset::DgxA100 => {
            format!("ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_{layout}")
        }
        HardwarePreset::DgxH100 => format!(
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_{layout}_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"
        ),
    }
    };
    // Materialised attention is cuBLAS's batched GEMMs around Megatron's
    // fused softmax; only FlashAttention runs a flash kernel.
    let flash = matches!(&s.workload, Workload::Transformer(t) if t.attention == Attention::Flash);
    match iv.op {
        OpKind::Attention | OpKind::AttentionBackward if !flash => gemm("nn"),
        OpKind::Attention if v100 => "fmha_cutlassF_f16_aligned_64x64_rf_sm70".to_string(),
        OpKind::Attention => "flash_fwd_kernel".to_string(),
        OpKind::AttentionBackward if v100 => "fmha_cutlassB_f16_aligned_64x64_k64_sm70".to_string(),
        OpKind::AttentionBackward => "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel".to_string(),
        OpKind::Optimizer => "multi_tensor_apply_kernel".to_string(),
        _ => gemm(layout),
    }
}

/// The stream's name: compute, or the name the library of the stream's
/// first kernel gives its axis's stream (NCCL's where it holds none).
pub(super) fn stream_name(lane: Lane, first: Option<&Interval>, libraries: &Libraries) -> String {
    match lane {
        Lane::Compute => "compute".to_string(),
        Lane::Comm(axis) => {
            let kind = collective_of(first.map_or(OpKind::AllReduce, |iv| iv.op));
            libraries.for_call(axis, kind).stream_name(axis)
        }
    }
}
