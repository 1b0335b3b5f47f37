//! The roofline a kernel is timed by: a GEMM's tiles and waves at its
//! sustained fraction of the peak of its precision, a memory-bound
//! kernel's bytes at HBM's streaming rate, and what one op costs
//! (`OpCost`: its time, FLOPs, memory-bound part and thread blocks).

use crate::model::hardware::{Hardware, HardwarePreset};
use crate::model::scenario::Precision;
use crate::workload::cost::efficiency::{
    flash_efficiency, flash_generation, gemm_generation, FlashGeneration, GemmGeneration, GemmShape,
};
use crate::workload::cost::plan_memo::PlanMemo;

/// One op: seconds at full speed on an idle GPU, and its FLOPs. An op may
/// fuse several kernels; `memory_s` is the part of `time_s` spent in its
/// memory-bound kernels (the roofline's HBM side), which shares HBM with
/// collectives, while the rest runs on SMs (model.md section 3).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct OpCost {
    pub time_s: f64,
    pub flops: f64,
    pub memory_s: f64,
    /// Thread blocks (output tiles times split-K parts) of the op's longest
    /// compute-bound GEMM kernel (0: none): how its waves stretch when
    /// collectives take SMs (`interference`).
    pub tiles: f64,
}

impl OpCost {
    /// Seconds of the compute-bound kernels.
    fn compute_s(&self) -> f64 {
        self.time_s - self.memory_s
    }

    /// Two kernels run back to back, as one op.
    pub(crate) fn add(self, other: OpCost) -> OpCost {
        OpCost {
            time_s: self.time_s + other.time_s,
            flops: self.flops + other.flops,
            memory_s: self.memory_s + other.memory_s,
            tiles: if other.compute_s() > self.compute_s() {
                other.tiles
            } else {
                self.tiles
            },
        }
    }

    /// A fused op without one of the kernels it was summed from (a split
    /// backward's B is the whole backward without its weight gradients).
    pub(crate) fn without(self, part: OpCost) -> OpCost {
        OpCost {
            time_s: self.time_s - part.time_s,
            flops: self.flops - part.flops,
            memory_s: (self.memory_s - part.memory_s).max(0.0),
            tiles: self.tiles,
        }
    }

    /// A kernel of `compute_s` on SMs and `memory_s` through HBM: the
    /// roofline's slower side decides its time and which resource it needs.
    fn roofline(compute_s: f64, memory_s: f64, flops: f64, tiles: f64) -> OpCost {
        let memory_bound = memory_s > compute_s;
        OpCost {
            time_s: compute_s.max(memory_s),
            flops,
            memory_s: if memory_bound { memory_s } else { 0.0 },
            tiles: if memory_bound { 0.0 } else { tiles },
        }
    }
}

pub(crate) struct Roofline {
    pub peak_tflops: f64,
    /// HBM bandwidth a streaming kernel reaches, bytes per second.
    pub hbm_bps: f64,
    /// The peak the linear layers' GEMMs run at: the FP8 peak in fp8,
    /// else `peak_tflops` (model.md 4e).
    pub linear_peak_tflops: f64,
    /// Bytes of a linear GEMM's input values: 1 in fp8, 2 in bf16.
    pub linear_input_bytes: f64,
    /// How the GPU's generation runs a GEMM: tiles, waves, fixed cost.
    pub gemm: GemmGeneration,
    /// How it runs the linear layers' GEMMs: `gemm`, at the FP8 sustained
    /// fraction in fp8 (model.md 4e).
    pub linear_gemm: GemmGeneration,
    /// SMs per GPU: how many tiles one wave runs.
    pub sms: u32,
    /// The generation's FlashAttention kernels (model.md 4).
    pub flash: FlashGeneration,
    /// How many ranks share each linear weight's fp8 cast: FSDP's shard
    /// count when FSDP gathers fp8 weights (each rank casts its shard
    /// before the gather, `fp8_casts`), else 1.
    pub fp8_weight_shards: f64,
    /// The GEMM plans made so far, by peak and shape (`PlanMemo`).
    plans: PlanMemo,
}

impl Roofline {
    /// The roofline of `hw`, a GPU of `generation`'s preset, in bf16.
    pub fn of(hw: &Hardware, generation: HardwarePreset) -> Self {
        Self::with_precision(hw, generation, Precision::Bf16)
    }

    /// The roofline of `hw` with the linear layers in `precision`.
    pub fn with_precision(hw: &Hardware, generation: HardwarePreset, precision: Precision) -> Self {
        let gemm = gemm_generation(generation);
        let (linear_peak_tflops, linear_input_bytes, linear_gemm) = match precision {
            Precision::Bf16 => (hw.peak_tflops, 2.0, gemm),
            Precision::Fp8 => (hw.fp8_tflops, 1.0, gemm.fp8()),
        };
        Self {
            peak_tflops: hw.peak_tflops,
            hbm_bps: hw.hbm_achievable_bps(),
            linear_peak_tflops,
            linear_input_bytes,
            gemm,
            linear_gemm,
            sms: hw.sms,
            flash: flash_generation(generation),
            fp8_weight_shards: 1.0,
            plans: PlanMemo::default(),
        }
    }

    /// A kernel that only streams `bytes` through HBM.
    pub fn memory(&self, bytes: f64) -> OpCost {
        let memory_s = bytes / self.hbm_bps;
        OpCost {
            time_s: memory_s,
            flops: 0.0,
            memory_s,
            tiles: 0.0,
        }
    }

    /// A cuBLAS GEMM kernel of `shape` at `peak_tflops`, moving `bytes`
    /// through HBM: its tiles' waves over every SM, or its bytes, whichever
    /// is slower.
    fn tiled(
        &self,
        gemm: &GemmGeneration,
        peak_tflops: f64,
        shape: GemmShape,
        bytes: f64,
    ) -> OpCost {
        // The plan once: its time on every SM and its blocks, which the
        // engine stretches into waves beside collectives.
        let inputs = [
            gemm.sustained_fraction,
            gemm.tile_rows,
            gemm.tile_cols,
            gemm.tile_depth,
            peak_tflops,
            self.hbm_bps,
            f64::from(self.sms),
            shape.rows,
            shape.inner,
            shape.cols,
            shape.count,
        ];
        let plan = self.plans.get_or(inputs, || {
            gemm.plan(shape, peak_tflops, self.hbm_bps, self.sms)
        });
        let compute_s = gemm.planned_s(shape, &plan, self.sms);
        OpCost::roofline(compute_s, bytes / self.hbm_bps, shape.flops(), plan.blocks)
    }

    /// `shape.count` GEMMs in one batched cuBLAS kernel (heads x sequences
    /// of the attention scores, or one per expert of a grouped GEMM), in
    /// bf16.
    pub fn batched(&self, shape: GemmShape, bytes: f64) -> OpCost {
        self.tiled(&self.gemm, self.peak_tflops, shape, bytes)
    }

    /// `count` GEMMs of `flops_each` (unmasked) inside a FlashAttention
    /// kernel that runs `share` of them (the causal mask skips the rest):
    /// not cuBLAS tiles, so at the kernel family's own `peak_fraction`. Its
    /// FLOPs stay the unmasked count (Megatron's model FLOPs).
    pub fn flash(&self, count: f64, flops_each: f64, share: f64, peak_fraction: f64) -> OpCost {
        let flops = count * flops_each;
        let efficiency = flash_efficiency(peak_fraction, flops_each);
        let compute_s = share * flops / (self.peak_tflops * 1e12 * efficiency);
        // Compute-bound, at the measured fraction (see `FlashAttention`).
        OpCost::roofline(compute_s, 0.0, flops, 0.0)
    }

    /// A linear layer's GEMM [rows x inner] x [inner x cols]: in bf16 at 2
    /// bytes per value; in fp8 its inputs at 1 byte and its bf16 output at
    /// 2, at the FP8 peak (torch._scaled_mm, as torchtitan's Float8Linear)
    /// and the FP8 sustained fraction measured with that call
    /// (`efficiency::HOPPER_FP8_SUSTAINED_FRACTION`), not the bf16 one.
    pub fn gemm(&self, rows: f64, inner: f64, cols: f64) -> OpCost {
        let bytes = self.linear_input_bytes * (rows * inner + inner * cols) + 2.0 * rows * cols;
        self.tiled(
            &self.linear_gemm,
            self.linear_peak_tflops,
            GemmShape::single(rows, inner, cols),
            bytes,
        )
    }

    /// A GEMM that stays in bf16 whatever the precision (the output layer,
    /// which torchtitan's Float8 conversion leaves out).
    pub fn gemm_bf16(&self, rows: f64, inner: f64, cols: f64) -> OpCost {
        let bytes = 2.0 * (rows * inner + inner * cols + rows * cols);
        self.tiled(
            &self.gemm,
            self.peak_tflops,
            GemmShape::single(rows, inner, cols),
            bytes,
        )
    }

    /// Whether the linear layers run in fp8.
    pub fn fp8(&self) -> bool {
        self.linear_input_bytes < 2.0
    }
}

/// A row-parallel GEMM that may be split into chunks along its rows; its
/// output is what the TP collective reduces.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SplitGemm {
    pub rows: f64,
    pub inner: f64,
    pub cols: f64,
}

impl SplitGemm {
    pub fn chunk(&self, r: &Roofline, chunks: u32) -> OpCost {
        r.gemm(self.rows / f64::from(chunks), self.inner, self.cols)
    }

    /// The input gradient's GEMM of this forward GEMM: [rows x cols] x
    /// [cols x inner], split along the same rows (tokens).
    pub fn input_grad(&self) -> SplitGemm {
        SplitGemm {
            rows: self.rows,
            inner: self.cols,
            cols: self.inner,
        }
    }

    /// One of `chunks` pieces of the weight gradient's GEMM, [inner x rows]
    /// x [rows x cols], split along the rows (tokens) it sums over: what a
    /// decomposed AllGather feeds it slice by slice.
    pub fn weight_grad_chunk(&self, r: &Roofline, chunks: u32) -> OpCost {
        r.gemm(self.inner, self.rows / f64::from(chunks), self.cols)
    }
}
/// `op` run `n` times back to back, as one op.
pub(crate) fn times(op: OpCost, n: u32) -> OpCost {
    let n = f64::from(n);
    OpCost {
        time_s: op.time_s * n,
        flops: op.flops * n,
        memory_s: op.memory_s * n,
        tiles: op.tiles,
    }
}

/// For tests: a DGX H100's rooflines in bf16 and in fp8.
#[cfg(test)]
pub(crate) fn h100_rooflines() -> (Roofline, Roofline) {
    use crate::model::scenario::Precision;
    let hw = HardwarePreset::DgxH100.hardware();
    (
        Roofline::with_precision(&hw, HardwarePreset::DgxH100, Precision::Bf16),
        Roofline::with_precision(&hw, HardwarePreset::DgxH100, Precision::Fp8),
    )
}

#[cfg(test)]
mod fp8_tests {
    use super::*;

    fn rooflines() -> (Roofline, Roofline) {
        h100_rooflines()
    }

    #[test]
    fn an_fp8_gemm_that_is_compute_bound_runs_at_its_own_sustained_fraction_of_the_fp8_peak() {
        let (bf16, fp8) = rooflines();
        // Llama-3-8B's MLP up projection on 8192 tokens: compute-bound in both.
        let (a, b) = (
            bf16.gemm(8192.0, 4096.0, 28672.0),
            fp8.gemm(8192.0, 4096.0, 28672.0),
        );
        assert_eq!((a.memory_s, b.memory_s), (0.0, 0.0));
        assert_eq!(a.flops, b.flops);
        // H100: 989 bf16 and 1979 fp8 dense TFLOP/s, the same tiles, each
        // at its own measured sustained fraction (MAMF: 80.1% bf16, 70.9%
        // fp8), so an fp8 GEMM takes 0.565 of the bf16 time, not half; the
        // kernel's fixed cost does not shrink.
        let fixed_s = bf16.gemm.fixed_us * 1e-6;
        let want = (989.0 * (792.1 / 989.0)) / (1979.0 * (1402.6 / 1979.0));
        let ratio = (b.time_s - fixed_s) / (a.time_s - fixed_s);
        assert!((ratio - want).abs() < 1e-12, "{ratio} {a:?} {b:?}");
        assert!((0.56..0.57).contains(&ratio), "{ratio}");
    }

    #[test]
    fn a_memory_bound_kernel_takes_the_same_time_in_fp8() {
        let (bf16, fp8) = rooflines();
        let bytes = 64.0 * 1024.0 * 1024.0;
        assert_eq!(bf16.memory(bytes), fp8.memory(bytes));
        assert!(bf16.memory(bytes).memory_s > 0.0);
        // Attention's batched GEMMs stay bf16.
        let scores = GemmShape {
            rows: 8192.0,
            inner: 128.0,
            cols: 8192.0,
            count: 32.0,
        };
        assert_eq!(bf16.batched(scores, bytes), fp8.batched(scores, bytes));
    }
}
