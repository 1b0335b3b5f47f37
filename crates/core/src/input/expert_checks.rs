//! The cross-field checks of expert parallelism and of EP overlap's
//! options (model.md 4c), which refuse what Megatron-LM refuses.

use crate::input::checker::{counted, divisors, Checker};
use crate::model::scenario::*;

/// Cross-field checks of expert parallelism (model.md section 4c).
pub(crate) fn check_experts(c: &mut Checker, s: &Scenario, t: &Transformer) {
    let p = &s.parallel;
    let Some(m) = &t.moe else {
        for (path, value) in [("parallel.ep", p.ep), ("parallel.etp", p.etp)] {
            if value > 1 {
                let name = &path["parallel.".len()..];
                c.fail(
                    path,
                    format!(
                        "{name} {value} without experts: set workload.moe.experts, or valid is 1"
                    ),
                );
            }
        }
        return;
    };
    check_expert_tensor_parallel(c, s, m);
    // Megatron-LM's MoE parallel folding lays ep x etp over each stage's
    // ranks: the expert rank generator's world is tp x cp x dp per stage
    // (megatron/core/parallel_state.py:874-884, which raises when it does
    // not divide). The CP ranks join the experts' groups, each routing its
    // own seq / cp tokens.
    let stage_gpus = p.tp * p.cp * p.dp;
    let stage_axes = if p.cp > 1 { "tp x cp x dp" } else { "tp x dp" };
    let folded = p.ep.saturating_mul(p.etp);
    if !stage_gpus.is_multiple_of(p.ep) {
        c.fail(
            "parallel.ep",
            format!(
                "ep {} does not divide {stage_axes} = {stage_gpus}: experts are spread over ranks of one stage, valid is {}",
                p.ep,
                divisors(stage_gpus, 4096)
            ),
        );
    } else if !stage_gpus.is_multiple_of(folded) {
        c.fail(
            "parallel.ep",
            format!(
                "ep {} x etp {} = {folded} does not divide {stage_axes} = {stage_gpus} (Megatron-LM's MoE parallel \
                 folding): valid ep with etp {} is {}",
                p.ep,
                p.etp,
                p.etp,
                divisors(stage_gpus / p.etp.max(1), 4096)
            ),
        );
    }
    if !m.experts.is_multiple_of(p.ep) {
        c.fail(
            "workload.moe.experts",
            format!(
                "{} cannot be spread evenly over ep {}: valid are multiples of {}",
                counted(u64::from(m.experts), "expert"),
                p.ep,
                p.ep
            ),
        );
    }
    // EP groups are consecutive ranks: they must share one node or fill
    // whole nodes, so that every rank of a group sees the same links.
    // With etp > 1 the EP group is every etp-th rank of ep x etp
    // consecutive ones (`Cluster::ep_peers`): that block is what must.
    let gpn = s.hardware.gpus_per_node;
    if !gpn.is_multiple_of(folded) && !folded.is_multiple_of(gpn) {
        let what = if p.etp > 1 {
            format!("ep {} x etp {} = {folded}", p.ep, p.etp)
        } else {
            format!("ep {}", p.ep)
        };
        c.fail(
            "parallel.ep",
            format!(
                "{what} neither divides nor fills whole nodes of {gpn} GPUs, so the ranks of a group \
                 would see different links: valid are divisors or multiples of {gpn}"
            ),
        );
    }
    if m.top_k > m.experts {
        c.fail(
            "workload.moe.top_k",
            format!(
                "top_k {} is more than the {}: valid is 1 to {}",
                m.top_k,
                counted(u64::from(m.experts), "expert"),
                m.experts
            ),
        );
    }
    if m.dense_layers >= t.layers {
        c.fail(
            "workload.moe.dense_layers",
            format!(
                "{} dense layers leave none of the {} for experts: valid is 0 to {}",
                m.dense_layers,
                t.layers,
                t.layers - 1
            ),
        );
    }
    // Megatron-LM's argument check: MoE with tensor parallelism needs
    // sequence parallelism (the experts see each TP rank's own tokens).
    if p.tp > 1 && !t.sequence_parallel {
        c.fail(
            "workload.sequence_parallel",
            format!(
                "experts with tp {} need sequence parallelism, as Megatron-LM requires: valid is true",
                p.tp
            ),
        );
    }
    // DeepEP's kernels hold their SMs while the rest computes: at least as
    // many must be left to compute as they take.
    if m.dispatcher == Dispatcher::Deepep && 2 * m.deepep_sms > s.hardware.sms {
        c.fail(
            "workload.moe.deepep_sms",
            format!(
                "DeepEP's {} SMs leave too few of the GPU's {} for compute: valid is 1 to {}",
                m.deepep_sms,
                s.hardware.sms,
                s.hardware.sms / 2
            ),
        );
    }
    check_ep_overlap(c, s, p, t);
    check_recompute_modules(c, s, t, m);
}

/// `parallel.etp` where Megatron-LM refuses it, and where this model lays
/// its groups out (model.md 4c).
fn check_expert_tensor_parallel(c: &mut Checker, s: &Scenario, m: &Moe) {
    let p = &s.parallel;
    if p.etp == 1 {
        return;
    }
    // Experts split over TP with no expert parallelism are the dense MLP's
    // layout under another name; the expert axis models EP groups.
    if p.ep == 1 {
        c.fail(
            "parallel.etp",
            format!(
                "etp {} with ep 1 is not modelled: expert tensor parallelism splits the experts of \
                 an expert-parallel group, valid is 1 (or set parallel.ep above 1)",
                p.etp
            ),
        );
    }
    // Each expert's fc1 is column-parallel and its fc2 row-parallel over
    // the expert TP group (megatron/core/transformer/moe/experts.py:210-250,
    // TEGroupedMLP), whose `divide` asserts that the ffn width splits
    // evenly; the gated unit's halves each split, so ffn itself must.
    if !m.expert_ffn_hidden.is_multiple_of(p.etp) {
        c.fail(
            "parallel.etp",
            format!(
                "etp {} does not divide workload.moe.expert_ffn_hidden {}, so the experts' GEMMs \
                 would not split evenly: valid are {}",
                p.etp,
                m.expert_ffn_hidden,
                divisors(m.expert_ffn_hidden, 64)
            ),
        );
    }
    // The expert TP group's gather and reduce-scatter are laid out inside
    // one TP group (etp consecutive ranks, as Megatron's expert rank order
    // tp-ep-dp puts them, parallel_state.py:886-895). A group wider than TP
    // would span DP replicas, which this model does not lay out.
    if !p.tp.is_multiple_of(p.etp) {
        c.fail(
            "parallel.etp",
            format!(
                "etp {} does not divide tp {}: the expert tensor-parallel group is modelled inside \
                 a TP group, valid are {}",
                p.etp,
                p.tp,
                divisors(p.tp, 64)
            ),
        );
    }
}

/// `overlap.ep`'s options where Megatron-LM refuses them, each refusal
/// naming the option (model.md section 4c). One hardware queue is
/// accepted: Megatron only warns, and the queues decide what it costs
/// (model.md section 3b).
fn check_ep_overlap(c: &mut Checker, s: &Scenario, p: &Parallel, t: &Transformer) {
    if p.ep == 1 || t.mode != Mode::Train {
        return;
    }
    // Merged passes on interleaved 1F1B pair a backward with the forward
    // one warm-up micro-batch later (`merged_passes::merged_order`). With fewer than
    // 2 x pp micro-batches the warm-up covers the whole step and the
    // passes the cool-down merges wait on each other across stages: still
    // a cycle with the layer pairs (interleaved at pp 4 with 4
    // micro-batches; found by the layout search on the older merged
    // order), so it stays refused rather than run wrong.
    let m = u64::from(s.micro_batches());
    if crate::workload::build::schedule::merged_passes::merges_passes(s)
        && p.schedule == Schedule::Interleaved
        && m < 2 * u64::from(p.pp)
    {
        c.fail(
            "overlap.ep",
            format!(
                "combined 1F1B on schedule \"interleaved\" merges passes only past the pipeline's warm-up, \
                 which {m} micro-batches on {} stages leave none of: valid with at least {} micro-batches per \
                 pipeline (workload.global_batch / (parallel.dp x workload.micro_batch)), or overlap.ep \
                 false, \"shared_expert\" or \"dispatch_wgrad\"",
                p.pp,
                2 * p.pp
            ),
        );
    }
    // FSDP gathers each layer in the order of the stage's program; merged
    // passes interleave a forward's layers with a backward's, an order its
    // gathers do not follow here.
    if crate::workload::build::schedule::merged_passes::merges_passes(s)
        && p.dp_sharding == DpSharding::Full
    {
        c.fail(
            "overlap.ep",
            "combined 1F1B (or DualPipe's chunk pairs) with parallel.dp_sharding \"full\" is not \
             modelled: valid are overlap.ep false, \"shared_expert\" or \"dispatch_wgrad\" with FSDP, \
             or parallel.dp_sharding \"none\" or \"optimizer\""
                .to_string(),
        );
    }
    // `true` is the schedule's natural form, whose options are never
    // refused together (`workload::build::schedule::merged_passes::ep_form`); a list is checked
    // option by option.
    let crate::model::ep_overlap::EpOverlap::Options(form) = s.overlap.ep else {
        return;
    };
    if !form.combined_1f1b {
        return;
    }
    let valid = "valid are false, true, or a list of \"shared_expert\", \"dispatch_wgrad\", \"combined_1f1b\" \
                 in which combined_1f1b stands alone";
    // megatron/core/transformer/transformer_config.py:3039-3041
    // ("disable moe_shared_expert_overlap when enabling
    // overlap_moe_expert_parallel_comm") and 3084-3088
    // ("overlap_moe_expert_parallel_comm must be disabled when enabling
    // overlap_dispatch_backward_with_experts_wgrad").
    for (on, name) in [
        (form.shared_expert, "shared_expert"),
        (form.dispatch_wgrad, "dispatch_wgrad"),
    ] {
        if on {
            c.fail(
                "overlap.ep",
                format!(
                    "\"combined_1f1b\" excludes \"{name}\", as Megatron-LM refuses them together \
                     (transformer_config.py): {valid}"
                ),
            );
        }
    }
    // transformer_config.py:3007-3011: "virtual_pipeline_model_parallel_size
    // must be specified when pipeline_model_parallel_size > 1". DualPipeV
    // pairs its own chunks (DeepSeek's program).
    let pipelined = p.pp > 1 && !matches!(p.schedule, Schedule::Interleaved | Schedule::DualPipeV);
    if pipelined {
        c.fail(
            "overlap.ep",
            format!(
                "\"combined_1f1b\" on schedule \"{}\" with pp {}: Megatron-LM runs combined 1F1B only \
                 with virtual pipeline stages when pp > 1 (transformer_config.py); valid with \
                 parallel.schedule \"interleaved\" (or \"dualpipe-v\", whose chunk pairs it becomes), \
                 or overlap.ep true, \"shared_expert\" or \"dispatch_wgrad\"",
                p.schedule.name(),
                p.pp
            ),
        );
    }
    // transformer_config.py:3021-3023: "disable full recomputation when
    // enabling overlap_moe_expert_parallel_comm".
    if t.recompute == Recompute::Full && p.schedule != Schedule::DualPipeV {
        c.fail(
            "overlap.ep",
            "\"combined_1f1b\" with workload.recompute \"full\": Megatron-LM refuses full recomputation \
             beside combined 1F1B (transformer_config.py); valid is workload.recompute \"none\" or \
             \"selective\", or overlap.ep true"
                .to_string(),
        );
    }
}

/// `workload.moe.recompute` where Megatron-LM refuses it or this model
/// cannot run it, each refusal naming the module.
fn check_recompute_modules(c: &mut Checker, s: &Scenario, t: &Transformer, m: &Moe) {
    let r = m.recompute;
    if r.is_empty() {
        return;
    }
    // Megatron-LM reads recompute_modules under selective granularity only
    // (transformer_config.py:1943); full recomputation keeps every layer's
    // input alone already.
    if t.recompute == Recompute::Full {
        c.fail(
            "workload.moe.recompute",
            format!(
                "{:?} with workload.recompute \"full\": full recomputation recomputes every module \
                 already; valid is [] with \"full\", or workload.recompute \"none\" or \"selective\"",
                r.names()
            ),
        );
    }
    // transformer_config.py:1969-1973: "mla_up_proj in recompute_modules is
    // only supported with multi_latent_attention".
    if r.mla_up_proj {
        c.fail(
            "workload.moe.recompute",
            "\"mla_up_proj\" recomputes multi-latent attention's up-projections, which this model \
             does not have (its attention is grouped-query; Megatron-LM refuses mla_up_proj without \
             multi_latent_attention): valid are \"core_attn\", \"moe_act\", \"layernorm\", \"mlp\", \
             \"moe\", \"shared_experts\""
                .to_string(),
        );
    }
    // transformer_config.py:1991-1999: "shared_experts recompute cannot
    // work with --moe-shared-expert-overlap".
    if r.shared_experts
        && m.shared_experts > 0
        && crate::workload::build::schedule::merged_passes::ep_form(s).shared_expert
        && s.parallel.ep > 1
    {
        c.fail(
            "workload.moe.recompute",
            "\"shared_experts\" with the shared experts beside the all-to-alls (overlap.ep \
             \"shared_expert\", or true on this schedule): Megatron-LM refuses them together \
             (transformer_config.py); valid is overlap.ep without \"shared_expert\" (false, \
             \"dispatch_wgrad\" or \"combined_1f1b\"), or the list without \"shared_experts\""
                .to_string(),
        );
    }
}
