//! The fp8 casts of a layer's linear GEMMs with tensorwise dynamic scaling
//! (model.md 4e), as torchtitan runs torchao's Float8Linear: compiled
//! (torchtitan's docs/float8.md, at commit 820504e, the benchmark's: "use
//! torch.compile to fuse the float8 scaling/casting kernels", "required
//! for competitive performance"), so the casts are counted fused, with
//! torchao's own roofline's byte counts (torchao at commit 36027d8,
//! torchao/testing/training/roofline_utils.py lines 126-174, tensorwise:
//! an activation's or gradient's maximum fused into the kernel before it,
//! as benchmarks/float8/float8_roofline.py line 34 assumes of compile,
//! then one kernel reading bf16 and writing both fp8 layouts; a weight read
//! for its maximum, cast in forward and cast again to the transposed
//! layout in backward). Where the tensors are cast is torchao's
//! distributed code: with sequence parallelism a column-parallel GEMM's
//! input is cast on its sequence shard before the fp8 all-gather, and a
//! row-parallel GEMM's output gradient likewise before its backward
//! gather (float8/float8_tensor_parallel.py lines 59-71 and 145-150; the
//! roofline leaves gathers out, so their transposed copies, made once
//! gathered, are this model's count); with FSDP's fp8 gathers each rank
//! casts its weight shard before each gather (float8/fsdp_utils.py lines
//! 228-251), the scale computed once per step after the optimizer
//! (`precompute_float8_dynamic_scale_for_fsdp`, lines 28-85).

use crate::model::scenario::Transformer;
use crate::workload::cost::params::LayerShape;
use crate::workload::cost::roofline::Roofline;

/// HBM bytes per value of a compiled cast of a bf16 tensor whose maximum
/// is known (reduced in the producing kernel's pass, or read before): the
/// cast reads the value (2) and writes the scaled fp8 value (1)
/// (roofline_utils.py lines 159 and 173).
pub(crate) const FP8_FUSED_CAST_BYTES_PER_VALUE: f64 = 3.0;

/// HBM bytes per value of casting a bf16 tensor no kernel of the step
/// produces (a weight, outside FSDP's gathers): one pass reads it for its
/// maximum (2 bytes), a second reads it again and writes fp8 (2 + 1)
/// (roofline_utils.py lines 157-159).
pub(crate) const FP8_CAST_BYTES_PER_VALUE: f64 = 5.0;

/// HBM bytes per parameter of FSDP's fp8 weight scales, once per step:
/// `precompute_float8_dynamic_scale_for_fsdp`, which torchtitan calls after
/// the optimizer (its `post_optimizer_hook`, float8.py lines 117-128 at
/// 820504e), reads each rank's weight shard (2 bytes per value) for its
/// absolute maximum; the gathers' casts then use that scale.
pub(crate) const FP8_SCALE_BYTES_PER_PARAM: f64 = 2.0;

/// HBM bytes per value of an fp8 tensor's transposed copy made by the
/// kernel that casts it: the second layout's write (1; roofline_utils.py
/// line 173).
/// torch._scaled_mm takes its second operand column-major, so the
/// backward's GEMMs need the input, the weight and the output gradient
/// transposed.
pub(crate) const FP8_FUSED_TRANSPOSE_BYTES_PER_VALUE: f64 = 1.0;

/// HBM bytes per value of an fp8 tensor's transposed copy made apart from
/// its cast (read 1, write 1): a tensor cast before a gather, transposed
/// once gathered.
pub(crate) const FP8_TRANSPOSE_BYTES_PER_VALUE: f64 = 2.0;

/// HBM bytes of the fp8 casts of one layer on a TP rank, (forward,
/// backward), for `tokens` rows; none in bf16. Each linear GEMM (QKV, the
/// attention projection, the MLP's up and down) casts its input and its
/// weight in forward, its output gradient in backward, and makes
/// transposed fp8 copies of the three for the gradient GEMMs.
pub(crate) fn fp8_cast_bytes(t: &Transformer, tp: u32, r: &Roofline, tokens: f64) -> (f64, f64) {
    if !r.fp8() {
        return (0.0, 0.0);
    }
    let (h, ffn, tp_f) = (f64::from(t.hidden), f64::from(t.ffn_hidden), f64::from(tp));
    let shape = LayerShape::of(t);
    // A tensor gathered across the TP group is cast on its sequence shard.
    let sp = t.sequence_parallel && tp > 1;
    let shard = if sp { 1.0 / tp_f } else { 1.0 };
    let fsdp_shards = r.fp8_weight_shards;
    // (input columns, output columns, column-parallel) of each linear GEMM
    // on the rank: a column-parallel GEMM's input is gathered with SP, a
    // row-parallel GEMM's output gradient is.
    let linears = [
        (h, shape.qkv_cols / tp_f, true),
        (h / tp_f, h, false),
        (h, shape.up_cols / tp_f, true),
        (ffn / tp_f, h, false),
    ];
    let (mut forward, mut backward) = (0.0, 0.0);
    for (inner, cols, column) in linears {
        let (input, weight, grad) = (tokens * inner, inner * cols, tokens * cols);
        let (input_gathered, grad_gathered) = (column && sp, !column && sp);
        let part = |gathered: bool| if gathered { shard } else { 1.0 };
        let transpose = |gathered: bool| {
            if gathered {
                FP8_TRANSPOSE_BYTES_PER_VALUE
            } else {
                FP8_FUSED_TRANSPOSE_BYTES_PER_VALUE
            }
        };
        forward += FP8_FUSED_CAST_BYTES_PER_VALUE * input * part(input_gathered)
            + transpose(input_gathered) * input;
        backward += FP8_FUSED_CAST_BYTES_PER_VALUE * grad * part(grad_gathered)
            + transpose(grad_gathered) * grad;
        if fsdp_shards > 1.0 {
            // Each gather (before the forward and again before the
            // backward) casts the rank's shard with the step's scale; the
            // gathered fp8 weight is transposed for the input gradient.
            let cast = FP8_FUSED_CAST_BYTES_PER_VALUE * weight / fsdp_shards;
            forward += cast;
            backward += cast + FP8_TRANSPOSE_BYTES_PER_VALUE * weight;
        } else {
            // Cast in forward, cast again to the transposed layout in
            // backward with the same scale (roofline_utils.py lines 148-161).
            forward += FP8_CAST_BYTES_PER_VALUE * weight;
            backward += FP8_FUSED_CAST_BYTES_PER_VALUE * weight;
        }
    }
    (forward, backward)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::hardware::HardwarePreset;
    use crate::model::scenario::{Precision, Workload};

    fn llama3_8b() -> Transformer {
        let s = crate::input::presets::scenario("llama3-8b-fsdp").unwrap();
        let Workload::Transformer(t) = s.workload else {
            unreachable!()
        };
        t
    }

    fn fp8(shards: f64) -> Roofline {
        let hw = HardwarePreset::DgxH100.hardware();
        let mut r = Roofline::with_precision(&hw, HardwarePreset::DgxH100, Precision::Fp8);
        r.fp8_weight_shards = shards;
        r
    }

    /// The weights' cast bytes per micro-batch, by hand: the four linear
    /// weights of Llama-3-8B on a TP rank of 8.
    fn weight_values() -> f64 {
        let (h, ffn, kv) = (4096.0, 14336.0, 8.0 * 128.0);
        (h * (h + 2.0 * kv) + h * h + h * 2.0 * ffn + ffn * h) / 8.0
    }

    #[test]
    fn with_fsdp_fp8_gathers_each_gather_casts_only_the_shard() {
        let t = llama3_8b();
        let (whole_f, whole_b) = fp8_cast_bytes(&t, 8, &fp8(1.0), 8192.0);
        let (shard_f, shard_b) = fp8_cast_bytes(&t, 8, &fp8(8.0), 8192.0);
        let w = weight_values();
        // Unsharded: amax and cast in forward (5 bytes per value), the
        // transposed cast in backward (3), every micro-batch. FSDP 8: the
        // shard's cast (3 bytes per value of 1/8) before each gather, and
        // the gathered fp8 weight's transposed copy (2).
        let forward = whole_f - 5.0 * w + 3.0 * w / 8.0;
        assert!(
            (shard_f - forward).abs() < 1e-6 * forward,
            "{shard_f} vs {forward}"
        );
        let backward = whole_b - 3.0 * w + 3.0 * w / 8.0 + 2.0 * w;
        assert!((shard_b - backward).abs() < 1e-6 * backward);
    }

    #[test]
    fn casts_are_counted_fused_and_on_the_sequence_shard_with_sp() {
        let mut t = llama3_8b();
        let r = fp8(1.0);
        let tokens = 8192.0;
        let (h, ffn, tp) = (4096.0, 14336.0, 8.0);
        let (qkv, up) = ((h + 2.0 * 1024.0) / tp, 2.0 * ffn / tp);
        let w = weight_values();
        // With SP: QKV's and up's inputs cast on 1/8 of the tokens (3) and
        // transposed once gathered (2); proj's and down's inputs cast (3)
        // and transposed in the same kernel (1).
        let column_in = tokens * h;
        let row_in = tokens * h / tp + tokens * ffn / tp;
        let forward = 2.0 * (3.0 / tp + 2.0) * column_in + 4.0 * row_in + 5.0 * w;
        let (f, b) = fp8_cast_bytes(&t, 8, &r, tokens);
        assert!((f - forward).abs() < 1e-6 * forward, "{f} vs {forward}");
        // Backward: QKV's and up's output gradients cast whole with their
        // transposed layout (3 + 1); proj's and down's on the shard (3 / 8)
        // and transposed once gathered (2).
        let column_grad = tokens * (qkv + up);
        let row_grad = 2.0 * tokens * h;
        // The weights' casts to the transposed layout (3).
        let backward = 4.0 * column_grad + (3.0 / tp + 2.0) * row_grad + 3.0 * w;
        assert!((b - backward).abs() < 1e-6 * backward, "{b} vs {backward}");
        // Without SP every cast is whole and fused with its transposed copy.
        t.sequence_parallel = false;
        let (f, _) = fp8_cast_bytes(&t, 8, &r, tokens);
        let forward = 4.0 * (2.0 * column_in + row_in) + 5.0 * w;
        assert!((f - forward).abs() < 1e-6 * forward, "{f} vs {forward}");
    }
}
