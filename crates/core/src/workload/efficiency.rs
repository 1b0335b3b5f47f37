//! The global efficiencies of model.md section 1: matmul by size, and the
//! links' share a NCCL ring moves (the collectives' own cost by message size
//! is `collective_cost`). One set for every scenario; no per-case constant.

use crate::model::hardware::HardwarePreset;

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

/// How one GPU generation runs a GEMM (model.md section 4, "GEMM time by
/// generation"): cuBLAS tiles the output in `tile_rows` x `tile_cols`
/// blocks, one thread block per tile and one tile per SM at a time, each SM
/// computing at `sustained_fraction` of its share of the datasheet peak;
/// the kernel costs `fixed_us` more (launch and tail). None of these comes
/// from a figure docs/validation.md checks.
///
/// Not yet what `layer_cost::Roofline` times GEMMs with: wired in (sustained
/// fraction in place of `MATMUL_PEAK_EFFICIENCY` and its size curve), it ran
/// every A100 row 8-16% faster than before and megatron-1.7b out of its
/// tolerance (151 TFLOPS against 137; Korthikanti 22B 7.9-9.2% short).
/// `gemm_compute_s` takes the SMs available, so the engine's SM sharing can
/// use it for the tiles' waves beside a collective.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmGeneration {
    /// Fraction of the dense peak the best-shaped large GEMM sustains.
    pub sustained_fraction: f64,
    /// Fixed cost per GEMM kernel, microseconds.
    pub fixed_us: f64,
    /// Rows of cuBLAS's output tile for large bf16/fp16 GEMMs.
    pub tile_rows: f64,
    /// Columns of that tile.
    pub tile_cols: f64,
}

/// Volta (V100). Sustained fraction: no MAMF measurement of V100 is at
/// hand, so Ampere's measured fraction stands in (an assumption, not a
/// measurement). Tile: cuBLAS's `volta_fp16_s884gemm_fp16_128x128` kernels,
/// the names Volta profiles show for large fp16 GEMMs.
pub const VOLTA_GEMM: GemmGeneration = GemmGeneration {
    sustained_fraction: AMPERE_GEMM.sustained_fraction,
    fixed_us: GEMM_FIXED_US,
    tile_rows: 128.0,
    tile_cols: 128.0,
};

/// Ampere (A100 SXM). Sustained fraction: Stas Bekman's Maximum Achievable
/// Matmul FLOPS table (ml-engineering, compute/accelerator, mamf-finder.py):
/// 267.9 of 312 TFLOPS bf16 on A100 SXM with CUDA 12.1, 85.9%, a short
/// benchmark at the boost clock; times the clock an A100 sustains at its
/// power limit under dense GEMM work, 1305 of its 1410 MHz boost (the
/// clock NVIDIA states its A100 HPL Rpeak at). Tile: cuBLAS's
/// `ampere_bf16_s16816gemm_bf16_256x128` kernels.
pub const AMPERE_GEMM: GemmGeneration = GemmGeneration {
    sustained_fraction: 267.9 / 312.0 * 1305.0 / 1410.0,
    fixed_us: GEMM_FIXED_US,
    tile_rows: 256.0,
    tile_cols: 128.0,
};

/// Hopper (H100 SXM). Sustained fraction: the same MAMF table, 792.1 of 989
/// TFLOPS bf16 with CUDA 12.1, 80.1%. Tile: cuBLAS's `sm90_xmma_gemm_..._
/// tilesize128x256x64` kernels.
pub const HOPPER_GEMM: GemmGeneration = GemmGeneration {
    sustained_fraction: 792.1 / 989.0,
    fixed_us: GEMM_FIXED_US,
    tile_rows: 128.0,
    tile_cols: 256.0,
};

/// Fixed cost of one kernel on the GPU, microseconds: the gap between two
/// kernels launched back to back in one stream. NVIDIA's "Getting Started
/// with CUDA Graphs" (Technical Blog, 2019, on V100) measures a 2.9 us
/// kernel at 3.8 us per kernel in a stream: 0.9 us. Not measured per
/// generation here, so every generation takes it.
pub const GEMM_FIXED_US: f64 = 0.9;

impl GemmGeneration {
    /// Seconds of the compute-bound part of a GEMM whose output is `rows` x
    /// `cols`, summed over `inner`, with `count` such GEMMs in one batched
    /// kernel, on `sms_available` of the GPU's `sms` SMs at `peak_tflops`.
    /// The tiles run in waves of `sms_available`: the last wave's idle SMs
    /// (and the partly filled tiles at the edges) are what quantisation
    /// costs. `sms_available` is what the collectives running beside the
    /// kernel leave it (`interference`); all of them when it runs alone.
    pub fn gemm_compute_s(
        &self,
        shape: GemmShape,
        peak_tflops: f64,
        sms: u32,
        sms_available: u32,
    ) -> f64 {
        if shape.rows <= 0.0 || shape.cols <= 0.0 || shape.inner <= 0.0 || shape.count <= 0.0 {
            return 0.0;
        }
        let tiles = shape.count
            * (shape.rows / self.tile_rows).ceil()
            * (shape.cols / self.tile_cols).ceil();
        let available = f64::from(sms_available.clamp(1, sms.max(1)));
        let waves = (tiles / available).ceil();
        let sm_flops = peak_tflops * 1e12 * self.sustained_fraction / f64::from(sms.max(1));
        let tile_s = 2.0 * self.tile_rows * self.tile_cols * shape.inner / sm_flops;
        self.fixed_us * 1e-6 + waves * tile_s
    }
}

/// A GEMM's shape: `count` GEMMs of [rows x inner] x [inner x cols].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmShape {
    /// Rows of each output.
    pub rows: f64,
    /// The inner dimension each output sums over.
    pub inner: f64,
    /// Columns of each output.
    pub cols: f64,
    /// GEMMs in the kernel (heads x sequences of a batched GEMM; 1 otherwise).
    pub count: f64,
}

impl GemmShape {
    /// FLOPs of the GEMMs.
    pub fn flops(&self) -> f64 {
        2.0 * self.count * self.rows * self.inner * self.cols
    }
}

/// Fraction of the NIC's line rate a NCCL ring moves: 46-48 GB/s per NDR
/// 400 Gb/s (50 GB/s) InfiniBand port in nccl-tests across nodes (model.md 2b).
pub const NIC_EFFICIENCY: f64 = 0.94;

/// Fraction of peak a GEMM of `flops` reaches. Monotone increasing in `flops`,
/// so splitting a GEMM into chunks (TP overlap) always costs something.
pub fn matmul_efficiency(flops: f64) -> f64 {
    if flops <= 0.0 {
        return MATMUL_PEAK_EFFICIENCY;
    }
    MATMUL_PEAK_EFFICIENCY * flops / (flops + MATMUL_HALF_EFFICIENCY_FLOPS)
}

/// The GEMM model of a hardware preset's GPU generation.
pub fn gemm_generation(preset: HardwarePreset) -> GemmGeneration {
    match preset {
        HardwarePreset::Dgx2V100 => VOLTA_GEMM,
        HardwarePreset::DgxA100 => AMPERE_GEMM,
        HardwarePreset::DgxH100 => HOPPER_GEMM,
    }
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

    fn shape(rows: f64, inner: f64, cols: f64) -> GemmShape {
        GemmShape {
            rows,
            inner,
            cols,
            count: 1.0,
        }
    }

    #[test]
    fn a_gemm_of_whole_waves_runs_at_the_sustained_fraction_plus_its_fixed_cost() {
        // 256 x 128 tiles: 27 x 128 = 3456 tiles, 32 waves on 108 SMs.
        let g = AMPERE_GEMM;
        let s = shape(6912.0, 2048.0, 16384.0);
        let want = g.fixed_us * 1e-6 + s.flops() / (312e12 * g.sustained_fraction);
        let got = g.gemm_compute_s(s, 312.0, 108, 108);
        assert!((got - want).abs() < 1e-12 * want, "{got} vs {want}");
    }

    #[test]
    fn one_tile_more_than_a_wave_costs_a_whole_wave() {
        // 109 tiles on 108 SMs take two waves; 108 take one.
        let g = AMPERE_GEMM;
        let tile = 2.0 * 256.0 * 128.0 * 1024.0 / (312e12 * g.sustained_fraction / 108.0);
        let one = g.gemm_compute_s(shape(256.0 * 108.0, 1024.0, 128.0), 312.0, 108, 108);
        let two = g.gemm_compute_s(shape(256.0 * 109.0, 1024.0, 128.0), 312.0, 108, 108);
        assert!((one - g.fixed_us * 1e-6 - tile).abs() < 1e-15);
        assert!((two - g.fixed_us * 1e-6 - 2.0 * tile).abs() < 1e-15);
    }

    #[test]
    fn sms_taken_by_collectives_add_waves() {
        // 1152 tiles: 11 waves on 108 SMs, 13 on the 92 that 16 channels leave.
        let g = AMPERE_GEMM;
        let s = shape(8192.0, 6144.0, 4608.0);
        let all = g.gemm_compute_s(s, 312.0, 108, 108) - g.fixed_us * 1e-6;
        let fewer = g.gemm_compute_s(s, 312.0, 108, 92) - g.fixed_us * 1e-6;
        assert!((fewer / all - 13.0 / 11.0).abs() < 1e-12, "{}", fewer / all);
    }

    #[test]
    fn chunking_a_gemm_never_makes_it_faster() {
        for gen in [VOLTA_GEMM, AMPERE_GEMM, HOPPER_GEMM] {
            for rows in [768.0, 2048.0, 8192.0, 24576.0] {
                let whole = gen.gemm_compute_s(shape(rows, 3072.0, 3072.0), 312.0, 108, 108);
                for chunks in [2.0, 4.0, 8.0, 32.0] {
                    let piece =
                        gen.gemm_compute_s(shape(rows / chunks, 3072.0, 3072.0), 312.0, 108, 108);
                    assert!(chunks * piece > whole, "{rows} in {chunks}");
                }
            }
        }
    }
}
