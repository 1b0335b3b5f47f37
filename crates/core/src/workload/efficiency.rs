//! The global efficiencies of model.md section 1: matmul by size, and the
//! links' share a NCCL ring moves (the collectives' own cost by message size
//! is `collective_cost`). One set for every scenario; no per-case constant.

/// Fraction of the datasheet peak that the largest GEMMs sustain in training.
/// cuBLAS reaches 75-85% of the dense peak on large fp16/bf16 GEMMs in
/// isolation (NVIDIA's "Matrix Multiplication Background" guide); inside a
/// training run, power capping lowers the clock below the boost clock the
/// datasheet peak assumes, and transformer GEMMs land at 60-70% (Narayanan et
/// al. 2021 and Korthikanti et al. 2022 measure layers at roughly two thirds
/// of peak before communication).
pub const MATMUL_PEAK_EFFICIENCY: f64 = 0.66;

/// Work at which a GEMM reaches half of `MATMUL_PEAK_EFFICIENCY`. Small GEMMs
/// cannot fill 108 SMs with tiles (wave quantisation) and pay a fixed launch
/// and tail cost of a few microseconds: a 1 GFLOP GEMM runs at roughly two
/// thirds of a large one's rate on A100.
pub const MATMUL_HALF_EFFICIENCY_FLOPS: f64 = 0.5e9;

/// Fraction of the NVLink datasheet bandwidth a NCCL ring moves with its
/// Simple protocol: nccl-tests all_reduce_perf reports bus bandwidths of
/// 200-230 GB/s of 300 on DGX A100 (nccl-tests issues 149, 178), ~115 of 150
/// on DGX-2 and ~370 of 450 on one DGX H100 with rings (issues 212, 290).
/// The protocols' own losses come on top (`collective_cost`).
pub const NVLINK_EFFICIENCY: f64 = 0.78;

/// Fraction of the NIC's line rate a NCCL ring moves: 46-48 GB/s per NDR
/// 400 Gb/s (50 GB/s) InfiniBand port in nccl-tests across nodes (model.md 2b).
pub const NIC_EFFICIENCY: f64 = 0.94;

/// The v1 name of the NVLink efficiency, kept for readers of the old path.
pub const COLLECTIVE_EFFICIENCY: f64 = NVLINK_EFFICIENCY;

/// Fraction of peak a GEMM of `flops` reaches. Monotone increasing in `flops`,
/// so splitting a GEMM into chunks (TP overlap) always costs something.
pub fn matmul_efficiency(flops: f64) -> f64 {
    if flops <= 0.0 {
        return MATMUL_PEAK_EFFICIENCY;
    }
    MATMUL_PEAK_EFFICIENCY * flops / (flops + MATMUL_HALF_EFFICIENCY_FLOPS)
}

/// Roofline time of one kernel: compute-bound or memory-bound, whichever is slower.
pub fn kernel_time_s(flops: f64, bytes: f64, peak_tflops: f64, hbm_gbps: f64) -> f64 {
    let compute_s = if flops > 0.0 {
        flops / (peak_tflops * 1e12 * matmul_efficiency(flops))
    } else {
        0.0
    };
    let memory_s = bytes / (hbm_gbps * 1e9);
    compute_s.max(memory_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matmul_efficiency_is_monotone_and_bounded() {
        let mut last = 0.0;
        for e in 0..60 {
            let flops = 10f64.powf(f64::from(e) / 4.0);
            let eff = matmul_efficiency(flops);
            assert!(eff >= last && eff <= MATMUL_PEAK_EFFICIENCY);
            last = eff;
        }
    }
}
