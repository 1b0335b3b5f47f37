//! The global efficiencies of model.md section 1: GEMMs by GPU generation,
//! FlashAttention by size, and the
//! links' share a NCCL ring moves (the collectives' own cost by message size
//! is `collective_cost`). One set for every scenario; no per-case constant.

use crate::model::hardware::HardwarePreset;

/// Fraction of the datasheet peak FlashAttention-2's kernels reach on their
/// largest problems on A100. FlashAttention-2 (Dao 2023, arXiv 2307.08691,
/// section 4.1) measures its forward and backward at 50-73% of A100's peak
/// (its FLOPs of a causal kernel counted as the causal half, as here),
/// rising with sequence length and head dimension; this lies in that range.
pub const FLASH_PEAK_EFFICIENCY: f64 = 0.66;

/// The FlashAttention kernel family a GPU generation runs causal attention
/// with (model.md 4), and the fraction of the bf16 peak its forward and
/// backward sustain on large problems, FLOPs counted causal (the masked
/// blocks neither run nor count), as the kernels' papers count them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlashGeneration {
    /// The kernel family, as its paper names it.
    pub kernel: &'static str,
    /// Forward's sustained fraction of the peak.
    pub forward_fraction: f64,
    /// Backward's sustained fraction of the peak.
    pub backward_fraction: f64,
}

/// A100 (and V100, which FlashAttention-2 does not run on: A100's stands
/// in, an assumption): FlashAttention-2, [`FLASH_PEAK_EFFICIENCY`] both ways.
pub const AMPERE_FLASH: FlashGeneration = FlashGeneration {
    kernel: "FlashAttention-2",
    forward_fraction: FLASH_PEAK_EFFICIENCY,
    backward_fraction: FLASH_PEAK_EFFICIENCY,
};

/// H100 SXM: FlashAttention-3 (Shah et al. 2024, arXiv 2407.08608), BF16,
/// head dimension 128 (Llama's), sequence 16k, of the 989 TFLOPS peak:
/// forward with the causal mask 616 TFLOPs/s (its Figure 5, "causal=True,
/// head dim 128"); backward 561 TFLOPs/s (its Figure 6, head dim 128; the
/// paper gives the backward without a mask only, so that stands in for the
/// causal one). cuDNN's fused attention, in the same figures, reaches 539
/// and 516: within 15% of FlashAttention-3's.
pub const HOPPER_FLASH: FlashGeneration = FlashGeneration {
    kernel: "FlashAttention-3",
    forward_fraction: 616.0 / 989.0,
    backward_fraction: 561.0 / 989.0,
};

/// The FlashAttention kernels of a hardware preset's GPU generation.
pub fn flash_generation(preset: HardwarePreset) -> FlashGeneration {
    match preset {
        HardwarePreset::Dgx2V100 | HardwarePreset::DgxA100 => AMPERE_FLASH,
        HardwarePreset::DgxH100 => HOPPER_FLASH,
    }
}

/// Work per head at which a FlashAttention kernel reaches half of
/// `FLASH_PEAK_EFFICIENCY`: short sequences leave its tiles' fixed work
/// (loading Q, the softmax rescaling) uncovered. An estimate, from the
/// same paper's curves falling at sequence 512 and below.
pub const FLASH_HALF_EFFICIENCY_FLOPS: f64 = 0.5e9;

/// How one GPU generation runs a GEMM (model.md section 4, "GEMM time by
/// generation"): cuBLAS tiles the output in `tile_rows` x `tile_cols`
/// blocks, one thread block per tile and one tile per SM at a time, each SM
/// computing at `sustained_fraction` of its share of the datasheet peak;
/// the kernel costs `fixed_us` more (launch and tail). None of these comes
/// from a figure docs/validation.md checks. `roofline::Roofline` times
/// every cuBLAS GEMM with it: the linear layers, the output layer, the
/// materialised attention's batched GEMMs and the experts' grouped GEMMs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmGeneration {
    /// Fraction of the dense peak the best-shaped large GEMM sustains.
    pub sustained_fraction: f64,
    /// Fraction of the FP8 dense peak the best-shaped large FP8 GEMM
    /// (`torch._scaled_mm`, as Float8Linear runs it) sustains; `None` on a
    /// generation without FP8 tensor cores (fp8 is refused there).
    pub fp8_sustained_fraction: Option<f64>,
    /// Fixed cost per GEMM kernel, microseconds.
    pub fixed_us: f64,
    /// Rows of cuBLAS's output tile for large bf16/fp16 GEMMs.
    pub tile_rows: f64,
    /// Columns of that tile.
    pub tile_cols: f64,
    /// Depth of the inner dimension one step of the tile's main loop
    /// consumes: split-K never leaves a split less than this.
    pub tile_depth: f64,
}

/// Volta (V100). Sustained fraction: no MAMF measurement of V100 is at
/// hand, so Ampere's measured fraction stands in (an assumption, not a
/// measurement). Tile: cuBLAS's `volta_fp16_s884gemm_fp16_128x128` kernels,
/// the names Volta profiles show for large fp16 GEMMs (`..._128x128_ldg8_
/// f2f_nn`, a 32-deep main loop).
pub const VOLTA_GEMM: GemmGeneration = GemmGeneration {
    sustained_fraction: AMPERE_GEMM.sustained_fraction,
    fp8_sustained_fraction: None,
    fixed_us: GEMM_FIXED_US,
    tile_rows: 128.0,
    tile_cols: 128.0,
    tile_depth: 32.0,
};

/// Ampere (A100 SXM). Sustained fraction: Stas Bekman's Maximum Achievable
/// Matmul FLOPS table (ml-engineering, compute/accelerator, mamf-finder.py):
/// 267.9 of 312 TFLOPS bf16 on A100 SXM with CUDA 12.1, 85.9%, a short
/// benchmark at the boost clock; times the clock an A100 sustains at its
/// power limit under dense GEMM work, 1305 of its 1410 MHz boost (the
/// clock NVIDIA states its A100 HPL Rpeak at). Tile: cuBLAS's
/// `ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_32x3` kernels
/// (a 32-deep main loop in three stages).
pub const AMPERE_GEMM: GemmGeneration = GemmGeneration {
    sustained_fraction: 267.9 / 312.0 * 1305.0 / 1410.0,
    fp8_sustained_fraction: None,
    fixed_us: GEMM_FIXED_US,
    tile_rows: 256.0,
    tile_cols: 128.0,
    tile_depth: 32.0,
};

/// Hopper (H100 SXM). Sustained fraction: the same MAMF table, 792.1 of 989
/// TFLOPS bf16 with CUDA 12.1, 80.1%. FP8: [`HOPPER_FP8_SUSTAINED_FRACTION`].
/// Tile: cuBLAS's `sm90_xmma_gemm_..._tilesize128x256x64` kernels.
pub const HOPPER_GEMM: GemmGeneration = GemmGeneration {
    sustained_fraction: 792.1 / 989.0,
    fp8_sustained_fraction: Some(HOPPER_FP8_SUSTAINED_FRACTION),
    fixed_us: GEMM_FIXED_US,
    tile_rows: 128.0,
    tile_cols: 256.0,
    tile_depth: 64.0,
};

/// H100 SXM's FP8 GEMMs: the same MAMF table's FP8 (`float8_e4m3fn`) rows
/// (stas00/ml-engineering, compute/accelerator/README.md at 744d01e, "FP8"
/// table): 1402.6 of 1979 TFLOPS, 70.9%, torch 2.7.0+cu126, best shape
/// 1024x9216x14336, measured by `mamf-finder.py` with `torch._scaled_mm`
/// (compute/accelerator/benchmarks/mamf-finder.py:349), the call torchao's
/// Float8Linear makes. The same table's bf16 row on the same torch is
/// 794.5 of 989 (80.3%, beside the 80.1% above): cuBLAS's FP8 GEMMs sustain
/// 0.88 of the share of their peak that its bf16 ones do. A measurement, not
/// a fit; no figure docs/validation.md checks is among its inputs.
pub const HOPPER_FP8_SUSTAINED_FRACTION: f64 = 1402.6 / 1979.0;

/// The smallest side of an output tile cuBLAS runs bf16 GEMMs with on
/// these generations: CUTLASS's Ampere and Hopper tile configurations go
/// down to 64 x 64 (its `cutlass_library` generator's tile list).
pub const SMALLEST_TILE_SIDE: f64 = 64.0;

/// Fixed cost of one kernel on the GPU, microseconds: the gap between two
/// kernels launched back to back in one stream. NVIDIA's "Getting Started
/// with CUDA Graphs" (Technical Blog, 2019, on V100) measures a 2.9 us
/// kernel at 3.8 us per kernel in a stream: 0.9 us. Not measured per
/// generation here, so every generation takes it.
pub const GEMM_FIXED_US: f64 = 0.9;

impl GemmGeneration {
    /// The generation as it runs FP8 GEMMs: its FP8 sustained fraction in
    /// place of the bf16 one (model.md 4e), tiles and fixed cost unchanged.
    /// A generation without FP8 keeps its own (fp8 is refused there).
    pub fn fp8(&self) -> Self {
        Self {
            sustained_fraction: self
                .fp8_sustained_fraction
                .unwrap_or(self.sustained_fraction),
            ..*self
        }
    }

    /// The output tile cuBLAS runs `shape` with: the generation's large
    /// tile, each side halved while the matrix is no more than half of it,
    /// down to `SMALLEST_TILE_SIDE` (a 64-row GEMM, a chunk of a chunked TP
    /// GEMM, runs 64-row tiles, not a quarter-filled 256-row one). At the
    /// large tile's per-SM rate: an assumption, and an upper bound, since a
    /// smaller tile reuses each operand it loads less.
    pub fn tile_for(&self, shape: GemmShape) -> (f64, f64) {
        let fit = |side: f64, dim: f64| {
            let mut side = side;
            while side > SMALLEST_TILE_SIDE && dim <= side / 2.0 {
                side /= 2.0;
            }
            side
        };
        (
            fit(self.tile_rows, shape.rows),
            fit(self.tile_cols, shape.cols),
        )
    }

    /// Output tiles of `shape`: one thread block each.
    pub fn tiles(&self, shape: GemmShape) -> f64 {
        let (rows, cols) = self.tile_for(shape);
        shape.count * (shape.rows / rows).ceil() * (shape.cols / cols).ceil()
    }

    /// How `shape` runs on a GPU of `sms` SMs at `peak_tflops`, with
    /// `hbm_bps` of HBM: in how many parts its inner dimension is split
    /// (split-K). Where the output has too few tiles to fill one wave,
    /// cuBLAS and CUTLASS split the sum over the inner dimension so that
    /// more blocks share the SMs, each part writing its fp32 partial output
    /// to a workspace that a reduction reads back (CUTLASS's "Efficient
    /// GEMM" guide, "Parallelized Reductions: Split K"). Each part is at
    /// least one step of the main loop deep. The split chosen is the one
    /// that finishes first, waves and reduction together (the smallest on
    /// a tie). A GEMM of a wave or more keeps its last wave's idle SMs:
    /// wave quantisation, as NVIDIA's "Matrix Multiplication Background"
    /// guide measures it on A100.
    pub fn plan(&self, shape: GemmShape, peak_tflops: f64, hbm_bps: f64, sms: u32) -> GemmPlan {
        let tiles = self.tiles(shape);
        let sm_count = f64::from(sms.max(1));
        let sm_flops = peak_tflops * 1e12 * self.sustained_fraction / sm_count;
        let (tile_rows, tile_cols) = self.tile_for(shape);
        let tile_s = 2.0 * tile_rows * tile_cols * shape.inner / sm_flops;
        let of = |split: f64| GemmPlan {
            blocks: tiles * split,
            block_s: tile_s / split,
            reduce_s: if split > 1.0 {
                // Each part writes its partial output in fp32; the
                // reduction reads them all and writes the bf16 result.
                let partial_bytes = 4.0 * tile_rows * tile_cols * tiles;
                2.0 * split * partial_bytes / hbm_bps
            } else {
                0.0
            },
        };
        let mut best = of(1.0);
        if tiles <= 0.0 || tiles >= sm_count || hbm_bps <= 0.0 {
            return best;
        }
        let deepest = (shape.inner / self.tile_depth).floor().min(sm_count);
        let mut split = 2.0;
        while split <= deepest {
            let plan = of(split);
            if plan.time_s(sms) < best.time_s(sms) * (1.0 - 1e-12) {
                best = plan;
            }
            split += 1.0;
        }
        best
    }

    /// How much longer a GEMM of `tiles` runs on `sms_available` of `sms`
    /// SMs than on all of them: its waves, whole ones, since the last
    /// wave's idle SMs wait for it (1 for no tiles: nothing to stretch).
    pub fn wave_stretch(tiles: f64, sms: u32, sms_available: u32) -> f64 {
        if tiles <= 0.0 {
            return 1.0;
        }
        let all = f64::from(sms.max(1));
        let left = f64::from(sms_available.clamp(1, sms.max(1)));
        (tiles / left).ceil() / (tiles / all).ceil()
    }

    /// Seconds of the compute-bound part of a GEMM whose output is `rows` x
    /// `cols`, summed over `inner`, with `count` such GEMMs in one batched
    /// kernel, on `sms_available` of the GPU's `sms` SMs at `peak_tflops`
    /// with `hbm_bps` of HBM. Its blocks (`plan`) run in waves of
    /// `sms_available`: the last wave's idle SMs (and the partly filled
    /// tiles at the edges) are what quantisation costs. `sms_available` is
    /// what the collectives running beside the kernel leave it
    /// (`interference`); all of them when it runs alone. The split is
    /// chosen at launch for the whole GPU.
    pub fn gemm_compute_s(
        &self,
        shape: GemmShape,
        peak_tflops: f64,
        hbm_bps: f64,
        sms: u32,
        sms_available: u32,
    ) -> f64 {
        let plan = self.plan(shape, peak_tflops, hbm_bps, sms);
        self.planned_s(shape, &plan, sms_available)
    }

    /// Seconds of `shape`'s kernel run as `plan` on `sms_available` SMs:
    /// its fixed cost and its waves (0 for an empty GEMM).
    pub fn planned_s(&self, shape: GemmShape, plan: &GemmPlan, sms_available: u32) -> f64 {
        if shape.rows <= 0.0 || shape.cols <= 0.0 || shape.inner <= 0.0 || shape.count <= 0.0 {
            return 0.0;
        }
        self.fixed_us * 1e-6 + plan.time_s(sms_available)
    }
}

/// How a GEMM kernel runs: `blocks` thread blocks of `block_s` each, one
/// per SM at a time, and `reduce_s` of split-K reduction after them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmPlan {
    /// Thread blocks: output tiles times split-K parts. What runs in waves.
    pub blocks: f64,
    /// Seconds of one block on one SM.
    pub block_s: f64,
    /// Seconds of the split-K reduction (0 unsplit).
    pub reduce_s: f64,
}

impl GemmPlan {
    /// Seconds of the blocks' waves over `sms` SMs and the reduction.
    pub fn time_s(&self, sms: u32) -> f64 {
        (self.blocks / f64::from(sms.max(1))).ceil() * self.block_s + self.reduce_s
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
    /// One GEMM of [rows x inner] x [inner x cols].
    pub fn single(rows: f64, inner: f64, cols: f64) -> Self {
        Self {
            rows,
            inner,
            cols,
            count: 1.0,
        }
    }

    /// FLOPs of the GEMMs.
    pub fn flops(&self) -> f64 {
        2.0 * self.count * self.rows * self.inner * self.cols
    }
}

pub use crate::collective::call::NIC_EFFICIENCY;

/// Fraction of peak a FlashAttention kernel of `flops_each` per head
/// reaches, of `peak_fraction` on the largest problems. Monotone
/// increasing in `flops_each`.
pub fn flash_efficiency(peak_fraction: f64, flops_each: f64) -> f64 {
    if flops_each <= 0.0 {
        return peak_fraction;
    }
    peak_fraction * flops_each / (flops_each + FLASH_HALF_EFFICIENCY_FLOPS)
}

/// The GEMM model of a hardware preset's GPU generation.
pub fn gemm_generation(preset: HardwarePreset) -> GemmGeneration {
    match preset {
        HardwarePreset::Dgx2V100 => VOLTA_GEMM,
        HardwarePreset::DgxA100 => AMPERE_GEMM,
        HardwarePreset::DgxH100 => HOPPER_GEMM,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flash_efficiency_is_monotone_and_bounded() {
        let mut last = 0.0;
        for e in 0..60 {
            let flops = 10f64.powf(f64::from(e) / 4.0);
            let eff = flash_efficiency(FLASH_PEAK_EFFICIENCY, flops);
            assert!(eff >= last && eff <= FLASH_PEAK_EFFICIENCY);
            last = eff;
        }
    }

    /// A100 80GB's achievable HBM bandwidth, bytes per second.
    const A100_HBM: f64 = 2039e9 * 0.88;

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
        let got = g.gemm_compute_s(s, 312.0, A100_HBM, 108, 108);
        assert!((got - want).abs() < 1e-12 * want, "{got} vs {want}");
    }

    #[test]
    fn one_tile_more_than_a_wave_costs_a_whole_wave() {
        // 109 tiles on 108 SMs take two waves; 108 take one.
        let g = AMPERE_GEMM;
        let tile = 2.0 * 256.0 * 128.0 * 1024.0 / (312e12 * g.sustained_fraction / 108.0);
        let one = g.gemm_compute_s(
            shape(256.0 * 108.0, 1024.0, 128.0),
            312.0,
            A100_HBM,
            108,
            108,
        );
        let two = g.gemm_compute_s(
            shape(256.0 * 109.0, 1024.0, 128.0),
            312.0,
            A100_HBM,
            108,
            108,
        );
        assert!((one - g.fixed_us * 1e-6 - tile).abs() < 1e-15);
        assert!((two - g.fixed_us * 1e-6 - 2.0 * tile).abs() < 1e-15);
    }

    #[test]
    fn sms_taken_by_collectives_add_waves() {
        // 1152 tiles: 11 waves on 108 SMs, 13 on the 92 that 16 channels leave.
        let g = AMPERE_GEMM;
        let s = shape(8192.0, 6144.0, 4608.0);
        let all = g.gemm_compute_s(s, 312.0, A100_HBM, 108, 108) - g.fixed_us * 1e-6;
        let fewer = g.gemm_compute_s(s, 312.0, A100_HBM, 108, 92) - g.fixed_us * 1e-6;
        assert!((fewer / all - 13.0 / 11.0).abs() < 1e-12, "{}", fewer / all);
    }

    #[test]
    fn a_gemm_of_few_tiles_splits_its_inner_dimension_one_of_many_does_not() {
        // Async TP's piece of Llama-3-8B's QKV on H100: 512 x 768 out of
        // 4096, 12 tiles of 128 x 256 on 132 SMs. Unsplit, one wave of a
        // whole tile's 4096-deep sum; split, more blocks of a shorter one,
        // plus the partials' round trip through HBM.
        let g = HOPPER_GEMM;
        let hbm = 3350e9 * 0.88;
        let piece = shape(512.0, 4096.0, 768.0);
        let plan = g.plan(piece, 989.0, hbm, 132);
        let unsplit = 2.0 * 128.0 * 256.0 * 4096.0 / (989e12 * g.sustained_fraction / 132.0);
        assert!(plan.blocks > 12.0 && plan.reduce_s > 0.0, "{plan:?}");
        assert!(plan.time_s(132) < 0.5 * unsplit, "{plan:?} vs {unsplit}");
        // The whole GEMM, 96 tiles: a second wave of blocks and the
        // partials would cost more than the idle SMs of its one wave.
        let whole = g.plan(shape(4096.0, 4096.0, 768.0), 989.0, hbm, 132);
        assert_eq!((whole.blocks, whole.reduce_s), (96.0, 0.0));
    }

    #[test]
    fn chunking_a_gemm_never_makes_it_faster() {
        for gen in [VOLTA_GEMM, AMPERE_GEMM, HOPPER_GEMM] {
            for rows in [768.0, 2048.0, 8192.0, 24576.0] {
                let whole =
                    gen.gemm_compute_s(shape(rows, 3072.0, 3072.0), 312.0, A100_HBM, 108, 108);
                for chunks in [2.0, 4.0, 8.0, 32.0] {
                    let piece = gen.gemm_compute_s(
                        shape(rows / chunks, 3072.0, 3072.0),
                        312.0,
                        A100_HBM,
                        108,
                        108,
                    );
                    assert!(chunks * piece > whole, "{rows} in {chunks}");
                }
            }
        }
    }
}
