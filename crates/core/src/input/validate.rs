//! Turns a `ScenarioInput` into a `Scenario`: defaults, then every check, each
//! refusal naming its field and what would be valid. Limits keep absurd
//! scenarios from hanging the page or exhausting memory.

pub use crate::input::fill::filled;
pub use crate::input::table::{DEEPEP_SMS, MAX_NODES_PER_TOKEN};

pub use crate::input::checker::counted;
use crate::input::cost_budget::over_budget;
pub(crate) use crate::input::cost_budget::{
    batch_unit, global_batch_refusal, whole_step_fits, with_micro_batches,
};
pub use crate::input::cost_budget::{
    no_steady_state_refusal, timeline_refusal, MAX_PLANNED_EVENTS, MAX_RERATE_WORK,
    MAX_SIMULATED_OPS, MAX_TIMELINE_OPS,
};

use crate::input::checker::{divisors, Checker};
use crate::input::error::{FieldError, ScenarioError};
use crate::input::expert_checks::check_experts;
use crate::input::kind::DefaultFrom;
use crate::input::table::{ScenarioInput, FIELDS};
use crate::model::hardware::Hardware;
use crate::model::pipeline_layout::{LayoutError, PipelineLayout};
use crate::model::scenario::*;

/// The largest cluster accepted. The reduced simulation does not grow with DP,
/// but a clear limit is friendlier than a number no one can check.
pub const MAX_GPUS: u64 = 65_536;

pub(crate) fn resolve(input: &ScenarioInput) -> Result<Scenario, ScenarioError> {
    let scenario = resolve_unbudgeted(input)?;
    if let Some(e) = over_budget(&scenario, valid) {
        return Err(ScenarioError { errors: vec![e] });
    }
    Ok(scenario)
}

/// Every check of [`resolve`] but the cost budget.
pub(crate) fn resolve_unbudgeted(input: &ScenarioInput) -> Result<Scenario, ScenarioError> {
    let scenario = filled(input);
    checked(&scenario, Some(input))?;
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
    over_budget(scenario, valid)
}

/// Whether a variant the budget's hints try passes every check but the
/// budget.
fn valid(s: &Scenario) -> bool {
    checked(s, None).is_ok()
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

    if let Some(input) = input {
        say_derived(&mut c.errors, input);
    }
    if c.errors.is_empty() {
        Ok(())
    } else {
        Err(ScenarioError { errors: c.errors })
    }
}

/// Marks each refusal of a field the input leaves to its rule
/// ([`DefaultFrom::Derived`]): the reader never wrote that value, so the
/// message says where it came from and which fields to change.
fn say_derived(errors: &mut [FieldError], input: &ScenarioInput) {
    for e in errors {
        let Some(field) = FIELDS.iter().find(|f| f.path == e.field) else {
            continue;
        };
        if let (DefaultFrom::Derived(rule), None) = (field.default, (field.get)(input)) {
            e.message = format!(
                "{} ({} is not given, so it is derived as {rule}: set it, or change what it is derived from)",
                e.message, field.path
            );
        }
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
    if !matches!(scenario.workload, Workload::Transformer(_))
        && input.parallel.pipeline_layout.is_some()
    {
        c.fail(
            "parallel.pipeline_layout",
            "only applies to workload.kind \"transformer\", whose layers it places".to_string(),
        );
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
    // Uneven shares are fine (workload::cost::stage_layers); an empty stage is not.
    let stages = p.pp * p.virtual_stages;
    if let Some(layout) = &p.pipeline_layout {
        if let Err(e) = layout.check(stages, t.layers) {
            c.fail("parallel.pipeline_layout", layout_refusal(layout, &e));
        }
    } else if t.layers < stages {
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

/// A refused layout's message: the entry at fault, as given, and why.
fn layout_refusal(layout: &PipelineLayout, e: &LayoutError) -> String {
    match e.entry {
        Some(i) => {
            let given = &layout.0[i];
            // An entry past the length limit is not echoed whole.
            let shown: String = given.chars().take(40).collect();
            let more = if shown.len() < given.len() { "..." } else { "" };
            format!(
                "entry {i} ({shown:?}{more}) {}; valid is {}",
                e.message,
                crate::model::pipeline_layout::VALID_FORM
            )
        }
        None => format!("the layout {}", e.message),
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
    // The shards span the DP x CP group, the ranks that reduce each
    // gradient (`Parallel::dp_group`): Megatron-LM's distributed optimizer
    // shards over `intra_dp_cp_group` (megatron/core/optimizer/__init__.py
    // :1204 at d98e8a6) and torchtitan's FSDP over its `fsdp` mesh of dp_shard x cp
    // (torchtitan/distributed/parallel_dims.py:225, 281 at b5bcd76).
    if p.dp_sharding != DpSharding::None && p.dp_group() == 1 {
        c.fail(
            "parallel.dp_sharding",
            format!(
                "\"{}\" shards across the DP x CP group, but dp x cp is 1: valid with dp 1 and cp 1 is \"none\"",
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
