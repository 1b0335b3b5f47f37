//! Turns a `ScenarioInput` into a `Scenario`: defaults, then every check, each
//! refusal naming its field and what would be valid. Limits keep absurd
//! scenarios from hanging the page or exhausting memory.

pub use crate::input::fill::filled;
pub use crate::input::table::{DEEPEP_SMS, MAX_NODES_PER_TOKEN};

use crate::input::error::{FieldError, ScenarioError};
use crate::input::kind::Kind;
use crate::input::table::{ScenarioInput, FIELDS};
use crate::model::hardware::Hardware;
use crate::model::scenario::*;

/// The largest cluster accepted. The reduced simulation does not grow with DP,
/// but a clear limit is friendlier than a number no one can check.
pub const MAX_GPUS: u64 = 65_536;
/// Operations (compute ops and collectives) a step may hold for its figures,
/// counted by the builder (`workload::cost`) over the whole step. The
/// figures of a step with a steady state simulate at most three short runs
/// past the pipeline's fill (`crate::steady_state`), whatever the step
/// holds: 20 times the 1T-parameter step with every overlap on at four TP
/// chunks (3.1 million) fits.
pub const MAX_SIMULATED_OPS: u64 = 70_000_000;
/// Operations one simulated run may hold: a timeline (the whole step), and
/// every run the figures make (the steady state's short runs, or the whole
/// step where it has none). Memory grows with them, about 280 bytes per op
/// at the peak with a timeline (the graph, the engine's state and the
/// timeline's bars): the 1T-parameter step with every overlap on at four TP
/// chunks holds 3.1 million and peaks near 0.9 GB.
pub const MAX_TIMELINE_OPS: u64 = 3_500_000;
/// Events the engine may plan for one scenario and its baseline (the bound
/// `workload::cost` proves; the engine's work is linear in it). With flows
/// of one pattern sharing one class, concurrent flows no longer multiply it.
pub const MAX_PLANNED_EVENTS: u64 = 200_000_000;

/// Link usages the network may visit re-rating flows, over the runs the
/// figures make, and over the whole step for a timeline
/// (`workload::cost::Cost::rerate_work`, a bound on the work of
/// `sim::network`'s progressive filling). Events alone do not bound time
/// when many flows share one resource: each join or leave re-rates all of
/// them (issue 45's 86 s inference step: the pipeline sends of 64 replicas
/// through a 64x oversubscribed core, re-rated by every kernel's memory
/// traffic). Steps of that shape reach their bound; measured on this
/// project's 2-core machine at smaller batches, before kernels on one HBM
/// were re-rated alone (`Network::rerate_one_resource`), at about 6 ns of
/// CPU per unit, so a step at this limit would take about 12 s; since,
/// issue 45's F3 at the batch this limit allows (30,976, 2.00 G units)
/// runs in 1.9 s, about 1 ns per unit. The 1T-parameter step with every overlap on predicts
/// 761 M for its figures and 1.93 G for its whole step (its flows are
/// mostly timed alone: it runs in 0.3 s), and GPipe's whole 1T step 1.92 G:
/// this keeps them inside.
pub const MAX_RERATE_WORK: u64 = 2_000_000_000;

struct Checker {
    errors: Vec<FieldError>,
}

impl Checker {
    fn fail(&mut self, field: &str, message: String) {
        self.errors.push(FieldError::new(field, &message));
    }

    /// Whether `field` is refused already (its range): a second message
    /// for the same value would say the same again.
    fn refused(&self, field: &str) -> bool {
        self.errors.iter().any(|e| e.field == field)
    }

    /// Checks every field of `section` (`""`: the top level) that applies to
    /// the scenario against its range in the field table, in table order.
    /// Returns whether every whole-number field passed: those are the ones
    /// the cross-field checks (layout, divisibility) compute with.
    fn ranges(&mut self, s: &Scenario, section: &str) -> bool {
        let mut whole_ok = true;
        for f in FIELDS.iter().filter(|f| f.section() == section) {
            let Some(value) = (f.resolved)(s) else {
                continue;
            };
            // JSON has no NaN: a non-finite number becomes null.
            let x = value.as_f64().unwrap_or(f64::NAN);
            if !f.is_number() && !matches!(f.kind, Kind::IntOf { .. }) {
                continue;
            }
            if let Err(message) = f.check_number(x) {
                self.fail(f.path, message);
                whole_ok &= !matches!(f.kind, Kind::Int { .. });
            }
        }
        whole_ok
    }
}

fn divisors(n: u32, limit: u32) -> String {
    let list: Vec<String> = (1..=n.min(limit))
        .filter(|d| n.is_multiple_of(*d))
        .map(|d| d.to_string())
        .collect();
    list.join(", ")
}

/// `n` and the noun, plural unless one: "1 node", "8 GPUs" (messages
/// here and the page's captions).
pub fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub(crate) fn resolve(input: &ScenarioInput) -> Result<Scenario, ScenarioError> {
    let scenario = filled(input);
    checked(&scenario, Some(input))?;
    if let Some(e) = over_budget(&scenario) {
        return Err(ScenarioError { errors: vec![e] });
    }
    Ok(scenario)
}

/// Every check of [`resolve`] on a filled scenario but the cost budget
/// ([`budget_refusal`]), and but those of the input alone (fields given
/// for another workload kind), which a caller that fills many variants of
/// one checked input has passed already: the layout search
/// (`crate::search`) checks each candidate so, and counts the budget only
/// for those it simulates.
pub(crate) fn check_filled(scenario: &Scenario) -> Result<(), ScenarioError> {
    checked(scenario, None)
}

/// Why the scenario's figures are over the cost budget ([`resolve`]'s last
/// refusal), or `None`.
pub(crate) fn budget_refusal(scenario: &Scenario) -> Option<FieldError> {
    over_budget(scenario)
}

/// The checks of [`resolve`] before the budget, in its order; those of
/// `input` alone where it is given.
fn checked(scenario: &Scenario, input: Option<&ScenarioInput>) -> Result<(), ScenarioError> {
    let mut c = Checker { errors: Vec::new() };
    let (hardware, parallel, overlap) = (&scenario.hardware, &scenario.parallel, &scenario.overlap);

    let hw_ok = c.ranges(scenario, "hardware");
    let gpus = hardware.gpus();
    if hw_ok && gpus > MAX_GPUS {
        c.fail(
            "hardware.nodes",
            format!(
                "{} nodes x {} GPUs = {gpus} GPUs is more than this simulator accepts: at most {MAX_GPUS} GPUs",
                hardware.nodes, hardware.gpus_per_node
            ),
        );
    }

    if let Some(input) = input {
        check_fields_of_kind(&mut c, scenario, input);
    }

    c.ranges(scenario, "");
    c.ranges(scenario, "overlap");
    let par_ok = c.ranges(scenario, "parallel");

    if hw_ok && par_ok {
        check_layout(&mut c, hardware, parallel);
    }
    if par_ok {
        check_dp_sharding(&mut c, parallel, overlap);
    }

    let dims_ok = c.ranges(scenario, "workload");
    match &scenario.workload {
        Workload::Transformer(t) => {
            if dims_ok && par_ok {
                check_transformer(&mut c, t, parallel, overlap);
                check_experts(&mut c, scenario, t);
            }
            if t.precision == Precision::Fp8 && hardware.fp8_tflops <= 0.0 {
                c.fail(
                    "workload.precision",
                    format!(
                        "fp8 needs FP8 tensor cores, which the {} preset's GPU does not have (V100 and A100 have none): \
                         valid here is \"bf16\"; choose \"dgx-h100\" for fp8",
                        scenario.hardware_preset.name()
                    ),
                );
            }
        }
        Workload::MatmulAllreduce(mm) => {
            if parallel.pp != 1 {
                c.fail(
                    "parallel.pp",
                    format!(
                        "{} pipeline stages: the matmul_allreduce micro-benchmark has none, valid is 1",
                        parallel.pp
                    ),
                );
            }
            if overlap.tp_chunks > mm.m && !c.refused("overlap.tp_chunks") {
                c.fail(
                    "overlap.tp_chunks",
                    format!(
                        "{} chunks of a GEMM with {}: valid is 1 to {}",
                        overlap.tp_chunks,
                        counted(u64::from(mm.m), "row"),
                        mm.m.min(64)
                    ),
                );
            }
        }
        // Its collective and size are checked by their ranges; the layout
        // is every GPU, set above.
        Workload::Collective(_) => {}
    }

    if dims_ok && par_ok {
        check_coconet(&mut c, scenario);
    }

    if c.errors.is_empty() {
        Ok(())
    } else {
        Err(ScenarioError { errors: c.errors })
    }
}

/// Fields the input gives that only another workload kind reads.
fn check_fields_of_kind(c: &mut Checker, scenario: &Scenario, input: &ScenarioInput) {
    let w = &input.workload;
    if !matches!(scenario.workload, Workload::MatmulAllreduce(_)) {
        for (field, set) in [("m", w.m), ("n", w.n), ("k", w.k)] {
            if set.is_some() {
                c.fail(
                    &format!("workload.{field}"),
                    "only applies to workload.kind \"matmul_allreduce\"".to_string(),
                );
            }
        }
    }
    if !matches!(scenario.workload, Workload::Collective(_)) {
        for (field, set) in [
            ("collective", w.collective.is_some()),
            ("bytes", w.bytes.is_some()),
        ] {
            if set {
                c.fail(
                    &format!("workload.{field}"),
                    "only applies to workload.kind \"collective\"".to_string(),
                );
            }
        }
    }
}

fn check_layout(c: &mut Checker, hw: &Hardware, p: &Parallel) {
    let gpus = hw.gpus();
    let product = u64::from(p.tp) * u64::from(p.cp) * u64::from(p.pp) * u64::from(p.dp);
    if product != gpus {
        let field = if p.dp == 1 && p.pp > 1 {
            "parallel.pp"
        } else {
            "parallel.dp"
        };
        let tp_pp = u64::from(p.tp) * u64::from(p.cp) * u64::from(p.pp);
        let (names, degrees) = if p.cp > 1 {
            (
                "tp x cp x pp x dp",
                format!("{} x {} x {} x {}", p.tp, p.cp, p.pp, p.dp),
            )
        } else {
            ("tp x pp x dp", format!("{} x {} x {}", p.tp, p.pp, p.dp))
        };
        let hint = match (gpus.is_multiple_of(tp_pp), p.cp > 1) {
            (true, false) => format!(
                "with tp {} and pp {}, valid dp is {}",
                p.tp,
                p.pp,
                gpus / tp_pp
            ),
            (true, true) => format!(
                "with tp {}, cp {} and pp {}, valid dp is {}",
                p.tp,
                p.cp,
                p.pp,
                gpus / tp_pp
            ),
            (false, false) => format!("tp x pp must divide {gpus}"),
            (false, true) => format!("tp x cp x pp must divide {gpus}"),
        };
        c.fail(
            field,
            format!(
                "{names} = {degrees} = {product}, but the cluster has {} ({} x {}): {hint}",
                counted(gpus, "GPU"),
                counted(u64::from(hw.nodes), "node"),
                hw.gpus_per_node
            ),
        );
        return;
    }
    if p.tp > hw.gpus_per_node || !hw.gpus_per_node.is_multiple_of(p.tp) {
        c.fail(
            "parallel.tp",
            format!(
                "{} does not fit a node of {}: TP stays inside a node, valid is {}",
                p.tp,
                counted(u64::from(hw.gpus_per_node), "GPU"),
                divisors(hw.gpus_per_node, 64)
            ),
        );
        return;
    }
    // Ranks are laid out TP fastest, then DP, then PP (Megatron's order). Every
    // pipeline stage must see the same links for the symmetric reduction.
    // CP ranks sit between TP and DP (Megatron's tp-cp-dp-pp order): the CP
    // group fills part of a node or whole nodes, so that every CP rank sees
    // the same links.
    let cp_gpus = p.tp * p.cp;
    if !cp_gpus.is_multiple_of(hw.gpus_per_node) && !hw.gpus_per_node.is_multiple_of(cp_gpus) {
        c.fail(
            "parallel.cp",
            format!(
                "tp x cp = {cp_gpus} GPUs per CP group neither fills whole nodes of {} nor divides one, \
                 so CP ranks would see different links: choose cp so that tp x cp divides or is a multiple of {}",
                hw.gpus_per_node, hw.gpus_per_node
            ),
        );
        return;
    }
    let stage_gpus = p.tp * p.cp * p.dp;
    if !stage_gpus.is_multiple_of(hw.gpus_per_node) && !hw.gpus_per_node.is_multiple_of(stage_gpus)
    {
        c.fail(
            "parallel.dp",
            format!(
                "tp x cp x dp = {stage_gpus} GPUs per pipeline stage neither fills whole nodes of {} nor divides one, \
                 so stages would see different links: choose dp so that tp x cp x dp divides or is a multiple of {}",
                hw.gpus_per_node, hw.gpus_per_node
            ),
        );
    }
}

/// Cross-field checks of a transformer whose fields are each in range.
fn check_transformer(c: &mut Checker, t: &Transformer, p: &Parallel, o: &Overlap) {
    if !t.hidden.is_multiple_of(t.heads) {
        c.fail(
            "workload.heads",
            format!(
                "{} heads do not divide hidden {}: valid are divisors of {}",
                t.heads, t.hidden, t.hidden
            ),
        );
    }
    if !t.heads.is_multiple_of(p.tp) {
        c.fail(
            "parallel.tp",
            format!(
                "tp {} does not divide the {}: valid is {}",
                p.tp,
                counted(u64::from(t.heads), "head"),
                divisors(t.heads, 64)
            ),
        );
    }
    if !t.heads.is_multiple_of(t.kv_heads) {
        c.fail(
            "workload.kv_heads",
            format!(
                "{} key/value heads do not divide the {}: valid are divisors of {}",
                t.kv_heads,
                counted(u64::from(t.heads), "head"),
                t.heads
            ),
        );
    } else if !t.kv_heads.is_multiple_of(p.tp) {
        // Megatron's rule: each TP rank holds whole key/value groups.
        c.fail(
            "workload.kv_heads",
            format!(
                "{} cannot be split over tp {}: valid are divisors of {} that are multiples of {}",
                counted(u64::from(t.kv_heads), "key/value head"),
                p.tp,
                t.heads,
                p.tp
            ),
        );
    }
    if !t.ffn_hidden.is_multiple_of(p.tp) {
        c.fail(
            "workload.ffn_hidden",
            format!(
                "{} is not divisible by tp {}: each TP rank holds an equal slice of the MLP, valid are multiples of {}",
                t.ffn_hidden, p.tp, p.tp
            ),
        );
    }
    if t.sequence_parallel && !t.seq.is_multiple_of(p.tp) {
        c.fail(
            "workload.sequence_parallel",
            format!(
                "sequence {} is not divisible by tp {}: sequence parallelism splits it",
                t.seq, p.tp
            ),
        );
    }
    // Each CP rank holds 2 x cp load-balanced chunks of the sequence
    // (model.md 4d), and with sequence parallelism splits its share over TP.
    let chunks = 2 * u64::from(p.cp);
    if p.cp > 1 && !u64::from(t.seq).is_multiple_of(chunks) {
        c.fail(
            "parallel.cp",
            format!(
                "cp {} needs the sequence in 2 x cp = {chunks} equal chunks, but seq {} is not divisible by {chunks}: \
                 valid cp are those with seq divisible by 2 x cp",
                p.cp, t.seq
            ),
        );
    } else if p.cp > 1
        && t.sequence_parallel
        && !(u64::from(t.seq) / u64::from(p.cp)).is_multiple_of(u64::from(p.tp))
    {
        c.fail(
            "workload.sequence_parallel",
            format!(
                "each CP rank's {} tokens are not divisible by tp {}: sequence parallelism splits them",
                t.seq / p.cp,
                p.tp
            ),
        );
    }
    // Uneven shares are fine (workload::stage_layers); an empty stage is not.
    let stages = p.pp * p.virtual_stages;
    if t.layers < stages {
        c.fail(
            "workload.layers",
            format!(
                "{} cannot fill pp x virtual_stages = {stages} stages: every stage needs at least one layer, valid is {stages} or more",
                counted(u64::from(t.layers), "layer")
            ),
        );
    }
    if p.virtual_stages > 1 && p.schedule != Schedule::Interleaved && !p.schedule.v_shape() {
        c.fail(
            "parallel.virtual_stages",
            format!(
                "{} virtual stages need schedule \"interleaved\" (or 2 with \"zb-v\" or \"dualpipe-v\"); \
                 with \"{}\" valid is 1",
                p.virtual_stages,
                p.schedule.name()
            ),
        );
    }
    let per_step = u64::from(t.micro_batch) * u64::from(p.dp);
    if u64::from(t.global_batch) % per_step != 0 {
        c.fail(
            "workload.global_batch",
            format!(
                "{} does not divide into micro-batches of {} over {}: valid are multiples of {per_step}",
                t.global_batch,
                t.micro_batch,
                counted(u64::from(p.dp), "replica")
            ),
        );
        return;
    }
    let m = u64::from(t.global_batch) / per_step;
    check_split_backward_schedule(c, p, m, per_step);
    if p.schedule == Schedule::Interleaved && m % u64::from(p.pp) != 0 {
        c.fail(
            "workload.global_batch",
            format!(
                "the interleaved schedule needs micro-batches per pipeline ({m}) to be a multiple of pp {}: \
                 valid global_batch are multiples of {}",
                p.pp,
                per_step * u64::from(p.pp)
            ),
        );
    }
    let gemm_rows = u64::from(t.micro_batch) * u64::from(t.seq);
    if o.tp && u64::from(o.tp_chunks) > gemm_rows && !c.refused("overlap.tp_chunks") {
        c.fail(
            "overlap.tp_chunks",
            format!(
                "{} chunks of a GEMM with {}: valid is 1 to {}",
                o.tp_chunks,
                counted(gemm_rows, "row"),
                gemm_rows.min(64)
            ),
        );
    }
}

/// Cross-field checks of expert parallelism (model.md section 4c).
fn check_experts(c: &mut Checker, s: &Scenario, t: &Transformer) {
    let p = &s.parallel;
    let Some(m) = &t.moe else {
        if p.ep > 1 {
            c.fail(
                "parallel.ep",
                format!(
                    "ep {} without experts: set workload.moe.experts, or valid is 1",
                    p.ep
                ),
            );
        }
        return;
    };
    let stage_gpus = p.tp * p.dp;
    if !stage_gpus.is_multiple_of(p.ep) {
        c.fail(
            "parallel.ep",
            format!(
                "ep {} does not divide tp x dp = {stage_gpus}: experts are spread over ranks of one stage, valid is {}",
                p.ep,
                divisors(stage_gpus, 4096)
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
    let gpn = s.hardware.gpus_per_node;
    if !gpn.is_multiple_of(p.ep) && !p.ep.is_multiple_of(gpn) {
        c.fail(
            "parallel.ep",
            format!(
                "ep {} neither divides nor fills whole nodes of {gpn} GPUs, so the ranks of a group \
                 would see different links: valid are divisors or multiples of {gpn}",
                p.ep
            ),
        );
    }
    if p.dp_sharding == DpSharding::Full {
        c.fail(
            "parallel.dp_sharding",
            "\"full\" (FSDP) with experts is not modelled: valid are \"none\" or \"optimizer\""
                .to_string(),
        );
    }
    // The experts' ranks are laid out over a stage's tp x dp and route
    // each rank's whole sequence; CP's split of the sequence, between TP
    // and DP in the rank order, is not modelled with them.
    if p.cp > 1 {
        c.fail(
            "parallel.cp",
            format!(
                "cp {} with experts is not modelled: valid is 1 for a mixture of experts",
                p.cp
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
    // one warm-up micro-batch later (`moe::merged_order`). With fewer than
    // 2 x pp micro-batches the warm-up covers the whole step and the
    // passes the cool-down merges wait on each other across stages: still
    // a cycle with the layer pairs (interleaved at pp 4 with 4
    // micro-batches; found by the layout search on the older merged
    // order), so it stays refused rather than run wrong.
    let m = u64::from(s.micro_batches());
    if crate::workload::moe::merges_passes(s)
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
    // `true` is the schedule's natural form, whose options are never
    // refused together (`workload::moe::ep_form`); a list is checked
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

/// The conditions of the V-shaped schedules (ZB-V, Qi et al. 2024;
/// DualPipeV, DualPipe README): two chunks per GPU, and at least 2 x pp
/// micro-batches, which their warm-up alone runs (DualPipe's reference
/// implementation asserts the same). DualPipeV also keeps DualPipe's even
/// pipeline: its two halves meet in the middle of the GPUs.
fn check_split_backward_schedule(c: &mut Checker, p: &Parallel, m: u64, per_step: u64) {
    if !p.schedule.v_shape() {
        return;
    }
    let name = p.schedule.name();
    if p.virtual_stages != 2 {
        c.fail(
            "parallel.virtual_stages",
            format!(
                "{} with schedule \"{name}\", which runs two chunks per GPU in a V: valid is 2",
                counted(u64::from(p.virtual_stages), "virtual stage")
            ),
        );
    }
    if p.schedule == Schedule::DualPipeV && p.pp % 2 == 1 {
        c.fail(
            "parallel.pp",
            format!(
                "pp {} is odd; schedule \"dualpipe-v\" pairs the GPUs of the pipeline: valid are even pp",
                p.pp
            ),
        );
    }
    let needed = 2 * u64::from(p.pp);
    if m < needed {
        c.fail(
            "workload.global_batch",
            format!(
                "schedule \"{name}\" needs at least 2 x pp = {needed} micro-batches per pipeline, here {m}: \
                 valid global_batch are multiples of {per_step} from {}",
                needed * per_step
            ),
        );
    }
}

/// Millions, as the limits' messages write operation counts.
fn millions(n: u64) -> String {
    format!("{:.1} M", n as f64 / 1e6)
}

/// Why a step is refused whose cost cannot be predicted cheaply: its
/// smallest counting builds (`workload::cost::ShapeCost`) are over
/// [`crate::workload::cost::MAX_COUNTED_OPS`], and a step holds at least
/// as many operations as they do.
fn too_long_to_count() -> String {
    format!(
        "one pipeline fill of this step through two layers per virtual stage would already hold more than {} operations, \
         too many to predict this step's cost cheaply",
        millions(crate::workload::cost::MAX_COUNTED_OPS)
    )
}

/// Why the figures of this step are over the budget, or `None` when they
/// fit: the step's operations against [`MAX_SIMULATED_OPS`], each run the
/// figures simulate against [`MAX_TIMELINE_OPS`], their events against
/// [`MAX_PLANNED_EVENTS`]. Predicted (`workload::cost::predict`) from
/// builds of at most `MAX_COUNTED_OPS`, so that a step far over budget
/// costs little to refuse.
fn overshoot(s: &Scenario) -> Option<String> {
    let whole = crate::workload::schedule::steady_counts(s).is_none();
    let Some(budget) = crate::workload::cost::budget_within(s, MAX_TIMELINE_OPS) else {
        return Some(too_long_to_count());
    };
    let (step, figures) = (budget.step, budget.figures);
    if step.ops > MAX_SIMULATED_OPS {
        return Some(format!(
            "this step would hold {} operations, more than the limit of {}",
            millions(step.ops),
            millions(MAX_SIMULATED_OPS)
        ));
    }
    if figures.ops > MAX_TIMELINE_OPS && !whole {
        return Some(format!(
            "the short runs this step's figures are extrapolated from would hold {} operations, \
             more than the limit of {} for one run",
            millions(figures.ops),
            millions(MAX_TIMELINE_OPS)
        ));
    }
    if figures.ops > MAX_TIMELINE_OPS {
        return Some(format!(
            "this step's figures would simulate it whole, all {} of its operations at once (no steady state \
             to extrapolate from: a GPipe, inference or param_gather step, or too few micro-batches past \
             the pipeline's fill), more than the limit of {} for one run",
            millions(step.ops),
            millions(MAX_TIMELINE_OPS)
        ));
    }
    if figures.rerate_work > MAX_RERATE_WORK {
        return Some(format!(
            "this step's flows would share its links so densely that re-rating them could visit {} link \
             usages, more than the limit of {} (many concurrent transfers through one shared link, such \
             as an oversubscribed core)",
            millions(figures.rerate_work),
            millions(MAX_RERATE_WORK)
        ));
    }
    (figures.planned_events > MAX_PLANNED_EVENTS).then(|| {
        format!(
            "this step and its baseline could take up to {} engine events, more than the limit of {MAX_PLANNED_EVENTS}",
            figures.planned_events
        )
    })
}

fn fits(s: &Scenario) -> bool {
    overshoot(s).is_none()
}

/// Whether the whole step, and its baseline, can be simulated in one run:
/// within [`MAX_TIMELINE_OPS`], [`MAX_PLANNED_EVENTS`] and
/// [`MAX_RERATE_WORK`].
fn whole_step_fits(s: &Scenario) -> bool {
    crate::workload::cost::cost_within(s, MAX_TIMELINE_OPS).is_some_and(|c| {
        c.ops <= MAX_TIMELINE_OPS
            && c.planned_events <= MAX_PLANNED_EVENTS
            && c.rerate_work <= MAX_RERATE_WORK
    })
}

/// The whole step's operations (scenario or baseline, the larger), counted
/// from builds of at most one run's limit; `None` when one is over it.
fn step_ops(s: &Scenario) -> Option<u64> {
    crate::workload::cost::budget_within(s, MAX_TIMELINE_OPS).map(|b| b.step.ops)
}

/// Why the page and `overlap-lab trace` do not build this step's timeline,
/// naming the control that would bring it within [`MAX_TIMELINE_OPS`] and
/// the value that would (`workload.global_batch` for a step whose figures
/// fit); `None` when the timeline fits. The step's figures may still be
/// given (`Simulator::simulate_report`): they extrapolate from its steady
/// state. Counts the step from two small builds: cheap.
pub fn timeline_refusal(s: &Scenario) -> Option<FieldError> {
    if whole_step_fits(s) {
        return None;
    }
    let held = match step_ops(s) {
        Some(ops) if ops > MAX_TIMELINE_OPS => format!(
            "this step's timeline would hold {} operations, over the limit of {} for a timeline",
            millions(ops),
            millions(MAX_TIMELINE_OPS)
        ),
        Some(_) => format!(
            "this step's timeline and its baseline could take more engine events than the limit of \
             {MAX_PLANNED_EVENTS}, or more re-rating of flows sharing links than the limit of {}",
            millions(MAX_RERATE_WORK)
        ),
        None => format!(
            "this step's timeline would hold more operations than the limit of {} for a timeline",
            millions(MAX_TIMELINE_OPS)
        ),
    };
    Some(match largest_batch(s, whole_step_fits) {
        Some(batch) => FieldError::new(
            "workload.global_batch",
            &format!("{held}: lower workload.global_batch to {batch} to draw it"),
        ),
        None => FieldError::new(
            "workload.global_batch",
            &format!("{held}, even at one micro-batch per pipeline: lower workload.layers or overlap.tp_chunks to draw it"),
        ),
    })
}

/// The largest trace file `overlap-lab trace` writes, bytes (1 GB): past it
/// Perfetto's in-browser loader and HTA's pandas frames both struggle, and a
/// file that size is no longer something a person opens. The command says
/// which field shortens the step instead.
pub const MAX_TRACE_FILE_BYTES: u64 = 1_000_000_000;

/// How far over [`MAX_TRACE_FILE_BYTES`] a trace's estimate
/// from a small run ([`small_run_bytes_per_bar`]) must be for the step to
/// be refused before it is simulated: a step's mix of bars differs a little
/// from its small run's (the fill weighs more there), so a trace estimated
/// nearer the limit is built and measured instead.
pub const TRACE_ESTIMATE_MARGIN: f64 = 1.1;

/// The bytes per bar of the trace `trace_bytes` writes of the step run at
/// one unit of micro-batches (a fraction of the step), over its predicted
/// bars (`workload::cost::Cost::bars`): what [`trace_refusal`] scales the
/// step's bars by. `None` for a step whose timeline is refused
/// ([`timeline_refusal`] says why) or that is too long to predict.
pub fn small_run_bytes_per_bar(
    s: &Scenario,
    trace_bytes: impl Fn(&Scenario) -> u64,
) -> Option<f64> {
    let Workload::Transformer(_) = &s.workload else {
        return None;
    };
    if !whole_step_fits(s) {
        return None;
    }
    let small = with_micro_batches(s, batch_unit(s).min(s.micro_batches()));
    let bars = crate::workload::cost::run_cost_within(&small, u64::MAX)?.bars;
    Some(trace_bytes(&small) as f64 / bars.max(1) as f64)
}

/// Why `overlap-lab trace` does not write this step's trace: its size,
/// estimated as its bars (`workload::cost::Cost::bars`, predicted from
/// the small counting builds) at `bytes_per_bar` (measured on a small run,
/// [`small_run_bytes_per_bar`], before the step is simulated; or on the
/// step's own trace once built), is over
/// [`MAX_TRACE_FILE_BYTES`] times `margin`. Names
/// `workload.global_batch` and the largest value whose estimate is within
/// the limit by [`TRACE_ESTIMATE_MARGIN`] and whose timeline is drawn.
pub fn trace_refusal(s: &Scenario, bytes_per_bar: f64, margin: f64) -> Option<FieldError> {
    let bars = |x: &Scenario| crate::workload::cost::run_cost_within(x, u64::MAX).map(|c| c.bars);
    let estimate = |x: &Scenario| bars(x).map(|b| b as f64 * bytes_per_bar);
    let bytes = estimate(s)?;
    let limit = MAX_TRACE_FILE_BYTES as f64;
    if bytes <= limit * margin {
        return None;
    }
    let fits = |x: &Scenario| {
        estimate(x).is_some_and(|b| b <= limit / TRACE_ESTIMATE_MARGIN) && whole_step_fits(x)
    };
    let held = format!(
        "this step's trace would be about {:.2} GB ({} bars at about {:.0} bytes each), more than the \
         {:.0} GB overlap-lab trace writes",
        bytes / 1e9,
        bars(s)?,
        bytes_per_bar,
        limit / 1e9
    );
    Some(match largest_batch(s, fits) {
        Some(batch) => FieldError::new(
            "workload.global_batch",
            &format!("{held}: lower workload.global_batch to {batch} to write it"),
        ),
        None => FieldError::new(
            "workload.global_batch",
            &format!(
                "{held}, even at one micro-batch per pipeline: lower workload.layers or overlap.tp_chunks to write it"
            ),
        ),
    })
}

/// The refusal of a step whose steady state could not be extrapolated at
/// run time (its three runs disagree) and whose whole step is over
/// [`MAX_TIMELINE_OPS`]: the figures would then have to simulate it all at
/// once. Names `workload.global_batch` and the largest value simulated in
/// full here.
pub fn no_steady_state_refusal(s: &Scenario) -> FieldError {
    let ops = step_ops(s).map_or(format!("over {}", millions(MAX_TIMELINE_OPS)), millions);
    let hint = match largest_batch(s, whole_step_fits) {
        Some(batch) => format!("the largest valid global_batch here is {batch}"),
        None => "lower workload.layers or overlap.tp_chunks".to_string(),
    };
    FieldError::new(
        "workload.global_batch",
        &format!(
            "this step's short runs did not repeat exactly, so its figures cannot be extrapolated from its \
             steady state, and simulating all {ops} of its operations at once is over the limit of {} for one run: {hint}",
            millions(MAX_TIMELINE_OPS)
        ),
    )
}

/// Micro-batches per pipeline the schedule steps in.
fn batch_unit(s: &Scenario) -> u32 {
    match s.parallel.schedule {
        Schedule::Interleaved => s.parallel.pp,
        Schedule::ZeroBubbleV | Schedule::DualPipeV => 2 * s.parallel.pp,
        _ => 1,
    }
}

/// The scenario with `micro_batches` per pipeline.
fn with_micro_batches(s: &Scenario, micro_batches: u32) -> Scenario {
    crate::workload::cost::with_micro_batches(s, micro_batches)
}

/// The largest global batch below the scenario's, in the steps the schedule
/// allows, for which `ok` holds; `None` when not even one step does (or the
/// workload has no batch). Costs are affine in the micro-batch count, so the
/// largest is solved for from the whole step's cost (against the timeline's
/// limit and, for a step with a steady state, the step's), then checked;
/// should the check fail (a count near the steady state's threshold), a
/// search below it finds one that holds.
fn largest_batch(s: &Scenario, ok: impl Fn(&Scenario) -> bool) -> Option<u32> {
    use crate::workload::cost::cost_within;
    let Workload::Transformer(t) = &s.workload else {
        return None;
    };
    let unit = batch_unit(s);
    let per_mb = t.micro_batch * s.parallel.dp;
    let m = s.micro_batches();
    let units = m / unit;
    if units <= 1 || !ok(&with_micro_batches(s, unit)) {
        return None;
    }
    // Units of micro-batches within `cap` ops and, for a whole step
    // simulated at once, the events' limit.
    let step_cost = |m: u32| cost_within(&with_micro_batches(s, m), MAX_TIMELINE_OPS);
    let solve = |cap: u64, whole: bool| -> u32 {
        let (Some(one), Some(two)) = (step_cost(unit), step_cost(2 * unit)) else {
            return 1;
        };
        let steps = |at_one: u64, at_two: u64, limit: u64| {
            let slope = at_two.saturating_sub(at_one).max(1);
            1 + limit.saturating_sub(at_one) / slope
        };
        let mut k = steps(one.ops, two.ops, cap);
        if whole {
            k = k.min(steps(
                one.planned_events,
                two.planned_events,
                MAX_PLANNED_EVENTS,
            ));
        }
        u32::try_from(k).unwrap_or(u32::MAX).clamp(1, units - 1)
    };
    let whole = solve(MAX_TIMELINE_OPS, true);
    let step = solve(MAX_SIMULATED_OPS, false);
    let k = [step, whole]
        .into_iter()
        .find(|&k| ok(&with_micro_batches(s, k * unit)))
        .unwrap_or_else(|| largest(1, whole, |k| ok(&with_micro_batches(s, k * unit))));
    Some(k * unit * per_mb)
}

/// Refuses, before anything runs, a scenario whose figures' predicted cost
/// exceeds the budget. The field named is the control that most directly
/// caused the overshoot, with the largest value of it that fits, in this
/// order: TP overlap (its chunks multiply the layer's ops), the global batch
/// (ops grow with micro-batches), then the layers.
fn over_budget(s: &Scenario) -> Option<FieldError> {
    let reason = overshoot(s)?;
    let Workload::Transformer(t) = &s.workload else {
        return Some(FieldError {
            field: "overlap.tp_chunks".into(),
            message: format!("{reason}: lower overlap.tp_chunks"),
        });
    };
    let err = |field: &str, hint: String| {
        Some(FieldError {
            field: field.to_string(),
            message: format!("{reason}: {hint}"),
        })
    };
    if s.overlap.tp && s.parallel.tp > 1 {
        let with_chunks = |c: u32| {
            let mut x = s.clone();
            x.overlap.tp_chunks = c;
            x
        };
        if s.overlap.tp_chunks > 2 && fits(&with_chunks(2)) {
            let best = largest(2, s.overlap.tp_chunks - 1, |c| fits(&with_chunks(c)));
            return err(
                "overlap.tp_chunks",
                format!("the largest valid overlap.tp_chunks here is {best}"),
            );
        }
        let mut off = s.clone();
        off.overlap.tp = false;
        if fits(&off) {
            return err(
                "overlap.tp",
                "switch TP overlap off here (even 2 chunks per GEMM do not fit), or lower global_batch"
                    .to_string(),
            );
        }
    }
    if let Some(batch) = largest_batch(s, fits) {
        return err(
            "workload.global_batch",
            format!("the largest valid global_batch here is {batch}"),
        );
    }
    let unit = batch_unit(s);
    let m = s.micro_batches();
    let per_mb = t.micro_batch * s.parallel.dp;
    let stages = s.parallel.pp * s.parallel.virtual_stages;
    let with_layers = |k: u32| {
        let mut x = with_micro_batches(s, unit.min(m));
        if let Workload::Transformer(xt) = &mut x.workload {
            xt.layers = k * stages;
        }
        x
    };
    if t.layers > stages && fits(&with_layers(1)) {
        let best = largest(1, t.layers / stages - 1, |k| fits(&with_layers(k)));
        return err(
            "workload.layers",
            format!(
                "the largest valid layers here is {} (with global_batch {})",
                best * stages,
                unit.min(m) * per_mb
            ),
        );
    }
    err(
        "parallel.pp",
        "even one layer per stage and one micro-batch do not fit: use fewer pipeline stages".into(),
    )
}

/// The largest `k` in `lo..=hi` with `ok(k)`, given `ok(lo)` and that `ok`
/// holds up to some point and not after (costs grow with `k`).
fn largest(lo: u32, hi: u32, ok: impl Fn(u32) -> bool) -> u32 {
    let (mut lo, mut hi) = (lo, hi);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// CoCoNet's two moves need what they act on (model.md section 5): the
/// sliced boundary needs a pipeline boundary, a TP group to slice across
/// and Megatron's scatter/gather; fusion needs a TP collective with
/// pointwise work after it, which only the transformer has. Fusion with TP
/// overlap off is valid: the fused collective then runs in the compute
/// stream's order, with the pointwise kernels inside it.
fn check_coconet(c: &mut Checker, s: &Scenario) {
    fn benchmark_name(s: &Scenario) -> &'static str {
        match s.workload {
            Workload::Collective(_) => "the collective workload",
            _ => "the matmul_allreduce micro-benchmark",
        }
    }
    let (p, o) = (&s.parallel, &s.overlap);
    let transformer = match &s.workload {
        Workload::Transformer(t) => Some(t),
        Workload::MatmulAllreduce(_) | Workload::Collective(_) => None,
    };
    if o.pp_chunks > 1 {
        let why = match transformer {
            None => Some(format!("{} has no pipeline boundary", benchmark_name(s))),
            Some(_) if p.pp == 1 => Some("pp is 1, so there is no pipeline boundary to slice".to_string()),
            Some(_) if p.tp == 1 => Some("tp is 1, so there is no TP group to slice the boundary across".to_string()),
            Some(_) if !p.scatter_gather => {
                Some("slicing is CoCoNet's form of scatter/gather and needs parallel.scatter_gather true".to_string())
            }
            Some(t) if t.sequence_parallel => Some(
                "with sequence_parallel the boundary is already sliced across the TP group".to_string(),
            ),
            Some(_) => None,
        };
        if let Some(why) = why {
            c.fail(
                "overlap.pp_chunks",
                format!("{} chunks: {why}; valid here is 1", o.pp_chunks),
            );
        }
    }
    if o.fuse {
        let why = match transformer {
            None if matches!(s.workload, Workload::Collective(_)) => {
                Some("the collective workload has no pointwise work after its collective")
            }
            None => Some(
                "the matmul_allreduce micro-benchmark has no pointwise work after its AllReduce",
            ),
            Some(_) if p.tp == 1 => Some("tp is 1, so there is no TP collective to fuse with"),
            Some(_) => None,
        };
        if let Some(why) = why {
            c.fail("overlap.fuse", format!("true: {why}; valid here is false"));
        }
    }
}

/// DP sharding needs replicas to shard across, and each sharding's own
/// switch applies to it alone: `param_gather` to the distributed optimizer,
/// `grad_sync` to FSDP.
fn check_dp_sharding(c: &mut Checker, p: &Parallel, o: &Overlap) {
    let name = |v: DpSharding| match v {
        DpSharding::None => "none",
        DpSharding::Optimizer => "optimizer",
        DpSharding::Full => "full",
    };
    if p.dp_sharding != DpSharding::None && p.dp == 1 {
        c.fail(
            "parallel.dp_sharding",
            format!(
                "\"{}\" shards across DP replicas, but dp is 1: valid with dp 1 is \"none\"",
                name(p.dp_sharding)
            ),
        );
    }
    if o.param_gather && p.dp_sharding != DpSharding::Optimizer {
        c.fail(
            "overlap.param_gather",
            format!(
                "overlaps the distributed optimizer's parameter all-gather, but dp_sharding is \"{}\": \
                 valid is true only with dp_sharding \"optimizer\"",
                name(p.dp_sharding)
            ),
        );
    }
    if o.grad_sync != GradSync::EveryMicroBatch && p.dp_sharding != DpSharding::Full {
        c.fail(
            "overlap.grad_sync",
            format!(
                "chooses when FSDP reduce-scatters, but dp_sharding is \"{}\": \
                 valid is \"last_micro_batch\" only with dp_sharding \"full\"",
                name(p.dp_sharding)
            ),
        );
    }
}
