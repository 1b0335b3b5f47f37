//! Turns a `ScenarioInput` into a `Scenario`: defaults, then every check, each
//! refusal naming its field and what would be valid. Limits keep absurd
//! scenarios from hanging the page or exhausting memory.

pub use crate::input::fill::filled;
pub use crate::input::table::{DEEPEP_SMS, MAX_NODES_PER_TOKEN};

pub use crate::input::checker::counted;

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
    // Uneven shares are fine (workload::stage_layers); an empty stage is not.
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
             to extrapolate from: a GPipe, ZB-V, DualPipeV, inference or param_gather step, or too few micro-batches past \
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
pub(crate) fn whole_step_fits(s: &Scenario) -> bool {
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
    Some(global_batch_refusal(s, &held, whole_step_fits, "draw"))
}

/// A refusal of the step as it is (`held` says why) naming the largest
/// `workload.global_batch` for which `fits` holds, else the fields that
/// shorten even one micro-batch per pipeline; `verb` is what lowering it
/// lets the page or command do ("draw", "write").
pub(crate) fn global_batch_refusal(
    s: &Scenario,
    held: &str,
    fits: impl Fn(&Scenario) -> bool,
    verb: &str,
) -> FieldError {
    let message = match largest_batch(s, fits) {
        Some(batch) => format!("{held}: lower workload.global_batch to {batch} to {verb} it"),
        None => format!(
            "{held}, even at one micro-batch per pipeline: lower workload.layers or overlap.tp_chunks to {verb} it"
        ),
    };
    FieldError::new("workload.global_batch", &message)
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
pub(crate) fn batch_unit(s: &Scenario) -> u32 {
    match s.parallel.schedule {
        Schedule::Interleaved => s.parallel.pp,
        Schedule::ZeroBubbleV | Schedule::DualPipeV => 2 * s.parallel.pp,
        _ => 1,
    }
}

/// The scenario with `micro_batches` per pipeline.
pub(crate) fn with_micro_batches(s: &Scenario, micro_batches: u32) -> Scenario {
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
        // A layout names the layers it was written for: the hint's depths
        // are split evenly.
        x.parallel.pipeline_layout = None;
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
    // Fewer stages, the GPUs they free going to data parallelism: the
    // largest divisor of pp whose step, at its fewest micro-batches, fits.
    let pp = s.parallel.pp;
    let fewer = (1..pp)
        .rev()
        .filter(|p| pp.is_multiple_of(*p))
        .find_map(|p| {
            let mut x = s.clone();
            x.parallel.pp = p;
            x.parallel.dp = s.parallel.dp * (pp / p);
            x.parallel.pipeline_layout = None;
            let x = with_micro_batches(&x, batch_unit(&x));
            (checked(&x, None).is_ok() && fits(&x)).then_some(x)
        });
    let hint = match fewer {
        Some(x) => format!(
            "even one layer per stage and one micro-batch do not fit: the largest valid pp here is {} \
             (with dp {} and global_batch {})",
            x.parallel.pp,
            x.parallel.dp,
            x.micro_batches() * per_mb_of(&x)
        ),
        None => format!(
            "even one layer per stage and one micro-batch do not fit, nor does any pp below {pp}: \
             lower workload.layers or the model's size"
        ),
    };
    err("parallel.pp", hint)
}

/// Samples per micro-batch across the data-parallel ranks.
fn per_mb_of(s: &Scenario) -> u32 {
    match &s.workload {
        Workload::Transformer(t) => t.micro_batch * s.parallel.dp,
        _ => 1,
    }
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
