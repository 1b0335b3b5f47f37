//! The search space: every layout of one scenario's model on N GPUs, in a
//! fixed order, enumerated without building any scenario (cheap: a few
//! nested loops over small lists).
//!
//! A layout sets the parallel degrees (`tp`, `cp`, `pp`, `dp`, `ep`), the
//! schedule and its virtual stages, the micro-batch (and, with a maximum
//! batch, the global batch), recomputation, sequence parallelism, DP
//! sharding and the overlap switches. Everything else is the scenario's.
//! The lists are generous where a rule of the scenario format is not cheap
//! to state (a TP degree that does not divide the heads, an expert degree
//! that does not divide a stage's GPUs): the core's own validation refuses
//! those candidates and the search counts them (`mod.rs`).

use serde::Serialize;

use crate::input::parse::ScenarioInput;
use crate::model::scenario::{
    DpSharding, GradSync, Mode, Recompute, Scenario, Schedule, Transformer, Workload,
};

/// Sequence length from which the search also tries context parallelism
/// (when the scenario does not use it already). Llama 3 trained its 8K
/// stage without CP and its 131,072-token stage with CP 16 (arXiv
/// 2407.21783, Table 4; published.md section 12): twice the 8K stage that
/// ran without it is where the search starts to ask. A project choice
/// between the two published points, not a measurement.
pub const CP_FROM_SEQ: u32 = 16_384;

/// A scenario field the search varies, unless it is fixed to the
/// scenario's value (`overlap-lab search --fix PATH`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dimension {
    /// `parallel.tp`: divisors of a node's GPUs.
    Tp,
    /// `parallel.cp`: where the scenario has long sequences.
    Cp,
    /// `parallel.pp`: divisors of the GPUs left, at most the layers.
    Pp,
    /// `parallel.schedule`: every schedule a pipeline has.
    Schedule,
    /// `parallel.virtual_stages`: for the interleaved schedule.
    VirtualStages,
    /// `parallel.ep`: divisors of the experts, for a mixture of experts.
    Ep,
    /// `workload.micro_batch`: divisors of a replica's share of the batch.
    MicroBatch,
    /// `workload.recompute`: none, selective, full.
    Recompute,
    /// `workload.sequence_parallel`: with TP.
    SequenceParallel,
    /// `parallel.dp_sharding`: none, optimizer, full, with DP.
    DpSharding,
    /// `overlap.tp`.
    OverlapTp,
    /// `overlap.pp`.
    OverlapPp,
    /// `overlap.dp`.
    OverlapDp,
    /// `overlap.ep`.
    OverlapEp,
    /// `overlap.cp`.
    OverlapCp,
    /// `overlap.param_gather`: with the distributed optimizer.
    ParamGather,
}

impl Dimension {
    /// Every dimension, in the order a layout lists them.
    pub const ALL: [Dimension; 16] = [
        Dimension::Tp,
        Dimension::Cp,
        Dimension::Pp,
        Dimension::Schedule,
        Dimension::VirtualStages,
        Dimension::Ep,
        Dimension::MicroBatch,
        Dimension::Recompute,
        Dimension::SequenceParallel,
        Dimension::DpSharding,
        Dimension::OverlapTp,
        Dimension::OverlapPp,
        Dimension::OverlapDp,
        Dimension::OverlapEp,
        Dimension::OverlapCp,
        Dimension::ParamGather,
    ];

    /// The scenario field's path, as scenario JSON and `overlap-lab fields` name it.
    pub const fn path(self) -> &'static str {
        match self {
            Dimension::Tp => "parallel.tp",
            Dimension::Cp => "parallel.cp",
            Dimension::Pp => "parallel.pp",
            Dimension::Schedule => "parallel.schedule",
            Dimension::VirtualStages => "parallel.virtual_stages",
            Dimension::Ep => "parallel.ep",
            Dimension::MicroBatch => "workload.micro_batch",
            Dimension::Recompute => "workload.recompute",
            Dimension::SequenceParallel => "workload.sequence_parallel",
            Dimension::DpSharding => "parallel.dp_sharding",
            Dimension::OverlapTp => "overlap.tp",
            Dimension::OverlapPp => "overlap.pp",
            Dimension::OverlapDp => "overlap.dp",
            Dimension::OverlapEp => "overlap.ep",
            Dimension::OverlapCp => "overlap.cp",
            Dimension::ParamGather => "overlap.param_gather",
        }
    }

    /// The dimension of a field path, or a message naming the valid ones.
    pub fn from_path(path: &str) -> Result<Dimension, String> {
        Dimension::ALL
            .into_iter()
            .find(|d| d.path() == path.trim())
            .ok_or_else(|| {
                let valid: Vec<&str> = Dimension::ALL.iter().map(|d| d.path()).collect();
                crate::input::parse::clip_echoes(&format!(
                    "{path:?} is not a field the search varies: valid are {}",
                    valid.join(", ")
                ))
            })
    }
}

/// The overlap switches of a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Switches {
    /// `overlap.tp`.
    pub tp: bool,
    /// `overlap.pp`.
    pub pp: bool,
    /// `overlap.dp`.
    pub dp: bool,
    /// `overlap.ep`.
    pub ep: bool,
    /// `overlap.cp`.
    pub cp: bool,
    /// `overlap.param_gather`.
    pub param_gather: bool,
}

/// One candidate: the fields a layout sets. `tp x cp x pp x dp` is the GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Layout {
    /// `parallel.tp`.
    pub tp: u32,
    /// `parallel.cp`.
    pub cp: u32,
    /// `parallel.pp`.
    pub pp: u32,
    /// `parallel.dp`: the GPUs over `tp x cp x pp`.
    pub dp: u32,
    /// `parallel.ep`.
    pub ep: u32,
    /// `parallel.schedule`.
    pub schedule: Schedule,
    /// `parallel.virtual_stages`.
    pub virtual_stages: u32,
    /// `workload.micro_batch`.
    pub micro_batch: u32,
    /// `workload.global_batch`: the scenario's, or from the maximum batch.
    pub global_batch: u32,
    /// `workload.recompute`.
    pub recompute: Recompute,
    /// `workload.sequence_parallel`.
    pub sequence_parallel: bool,
    /// `parallel.dp_sharding`.
    pub dp_sharding: DpSharding,
    /// The overlap switches.
    pub overlap: Switches,
}

impl Layout {
    /// The canonical description: every field the layout sets, in one
    /// order, so that two layouts are equal exactly when their
    /// descriptions are (ties in a ranking are broken by it).
    pub fn describe(&self) -> String {
        let mut out = format!("tp {}", self.tp);
        if self.cp > 1 {
            out += &format!(", cp {}", self.cp);
        }
        out += &format!(", pp {}", self.pp);
        if self.pp > 1 {
            out += &format!(" {}", self.schedule.name());
            if self.schedule == Schedule::Interleaved {
                out += &format!(" x{}", self.virtual_stages);
            }
        }
        out += &format!(", dp {}", self.dp);
        if self.ep > 1 {
            out += &format!(", ep {}", self.ep);
        }
        out += &format!(
            ", mb {}, batch {}, recompute {}",
            self.micro_batch,
            self.global_batch,
            recompute_name(self.recompute)
        );
        if self.sequence_parallel {
            out += ", sp";
        }
        if self.dp_sharding != DpSharding::None {
            out += &format!(", sharding {}", sharding_name(self.dp_sharding));
        }
        let o = self.overlap;
        let on: Vec<&str> = [
            (o.tp, "tp"),
            (o.pp, "pp"),
            (o.dp, "dp"),
            (o.ep, "ep"),
            (o.cp, "cp"),
            (o.param_gather, "param_gather"),
        ]
        .into_iter()
        .filter_map(|(set, name)| set.then_some(name))
        .collect();
        out += &match on.is_empty() {
            true => ", overlap none".to_string(),
            false => format!(", overlap {}", on.join("+")),
        };
        out
    }

    /// The scenario input of this candidate: `base` (its hardware set to
    /// the search's GPUs) with the layout's fields set. A knob of the
    /// scenario that does not apply to this layout and that validation
    /// would refuse for it (`overlap.pp_chunks` without a TP group to
    /// slice across, `overlap.fuse` without TP, `overlap.grad_sync`
    /// without FSDP) is left at its neutral value for it.
    pub fn apply(&self, base: &ScenarioInput, filled: &Scenario) -> ScenarioInput {
        let mut input = base.clone();
        let p = &mut input.parallel;
        p.tp = Some(self.tp);
        p.cp = Some(self.cp);
        p.pp = Some(self.pp);
        p.dp = Some(self.dp);
        p.ep = Some(self.ep);
        p.schedule = Some(self.schedule);
        p.virtual_stages = Some(self.virtual_stages);
        p.dp_sharding = Some(self.dp_sharding);
        // A pipeline layout names one count of virtual stages: a candidate
        // of another count splits its layers evenly.
        let stages = u64::from(self.pp) * u64::from(self.virtual_stages);
        if p.pipeline_layout
            .as_ref()
            .is_some_and(|l| l.0.len() as u64 != stages)
        {
            p.pipeline_layout = None;
        }
        let w = &mut input.workload;
        w.micro_batch = Some(self.micro_batch);
        w.global_batch = Some(self.global_batch);
        w.recompute = Some(self.recompute);
        w.sequence_parallel = Some(self.sequence_parallel);
        let o = &mut input.overlap;
        o.tp = Some(self.overlap.tp);
        o.pp = Some(self.overlap.pp);
        o.dp = Some(self.overlap.dp);
        o.ep = Some(self.overlap.ep.into());
        o.cp = Some(self.overlap.cp);
        o.param_gather = Some(self.overlap.param_gather);
        let slices =
            self.pp > 1 && self.tp > 1 && filled.parallel.scatter_gather && !self.sequence_parallel;
        if filled.overlap.pp_chunks > 1 && !slices {
            o.pp_chunks = Some(1);
        }
        if filled.overlap.fuse && self.tp == 1 {
            o.fuse = Some(false);
        }
        if filled.overlap.grad_sync != GradSync::EveryMicroBatch
            && self.dp_sharding != DpSharding::Full
        {
            o.grad_sync = Some(GradSync::EveryMicroBatch);
        }
        input
    }

    /// The layout a scenario has (a published layout, to compare the best
    /// found with); `None` for a workload other than a transformer.
    pub fn of(s: &Scenario) -> Option<Layout> {
        let Workload::Transformer(t) = &s.workload else {
            return None;
        };
        let (p, o) = (&s.parallel, &s.overlap);
        Some(Layout {
            tp: p.tp,
            cp: p.cp,
            pp: p.pp,
            dp: p.dp,
            ep: p.ep,
            schedule: p.schedule,
            virtual_stages: p.virtual_stages,
            micro_batch: t.micro_batch,
            global_batch: t.global_batch,
            recompute: t.recompute,
            sequence_parallel: t.sequence_parallel,
            dp_sharding: p.dp_sharding,
            overlap: Switches {
                tp: o.tp,
                pp: o.pp,
                dp: o.dp,
                ep: o.ep.is_on(),
                cp: o.cp,
                param_gather: o.param_gather,
            },
        })
    }

    /// Micro-batches per pipeline.
    pub fn micro_batches(&self) -> u32 {
        self.global_batch / (self.micro_batch * self.dp).max(1)
    }
}

/// `workload.recompute` as scenario JSON names it.
pub fn recompute_name(r: Recompute) -> &'static str {
    match r {
        Recompute::None => "none",
        Recompute::Selective => "selective",
        Recompute::Full => "full",
    }
}

/// `parallel.dp_sharding` as scenario JSON names it.
pub fn sharding_name(s: DpSharding) -> &'static str {
    match s {
        DpSharding::None => "none",
        DpSharding::Optimizer => "optimizer",
        DpSharding::Full => "full",
    }
}

/// The space of one search: the scenario's model on `gpus` GPUs.
pub struct Space<'a> {
    /// The scenario filled (not checked), its hardware on the search's GPUs.
    pub filled: &'a Scenario,
    /// Its transformer.
    pub model: &'a Transformer,
    /// Fields kept at the scenario's value.
    pub fixed: &'a [Dimension],
    /// With a maximum batch, each layout's global batch is the largest
    /// multiple of `dp x micro_batch` (x `pp` for the interleaved schedule,
    /// which needs whole rounds of micro-batches) not above it.
    pub max_batch: Option<u32>,
}

/// Divisors of `n`, ascending.
fn divisors(n: u64) -> Vec<u64> {
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut d = 1;
    while d * d <= n {
        if n.is_multiple_of(d) {
            small.push(d);
            if d * d != n {
                large.push(n / d);
            }
        }
        d += 1;
    }
    small.extend(large.into_iter().rev());
    small
}

fn divisors_u32(n: u32) -> Vec<u32> {
    divisors(u64::from(n))
        .into_iter()
        .map(|d| d as u32)
        .collect()
}

/// `[false, true]` when the switch applies and is free, else the one value.
fn switch(free: bool, applies: bool, given: bool) -> Vec<bool> {
    match (free, applies) {
        (false, _) => vec![given],
        (true, true) => vec![false, true],
        (true, false) => vec![false],
    }
}

impl Space<'_> {
    fn free(&self, d: Dimension) -> bool {
        !self.fixed.contains(&d)
    }

    /// GPUs the layouts share.
    pub fn gpus(&self) -> u64 {
        self.filled.hardware.gpus()
    }

    /// Every layout, in the space's order, to `f`.
    pub fn for_each(&self, mut f: impl FnMut(Layout)) {
        let s = self.filled;
        let t = self.model;
        let gpus = self.gpus();
        let node = s.hardware.gpus_per_node;
        let train = t.mode == Mode::Train;
        let given = &s.parallel;
        let tps = match self.free(Dimension::Tp) {
            true => divisors_u32(node),
            false => vec![given.tp],
        };
        for tp in tps {
            if tp == 0 || !gpus.is_multiple_of(u64::from(tp)) {
                continue;
            }
            let long = t.seq >= CP_FROM_SEQ || given.cp > 1;
            let cps: Vec<u32> = match (self.free(Dimension::Cp), long) {
                (false, _) => vec![given.cp],
                (true, false) => vec![1],
                (true, true) => divisors(gpus / u64::from(tp))
                    .into_iter()
                    .map(|c| c as u32)
                    .collect(),
            };
            for cp in cps {
                let per_pipeline = u64::from(tp) * u64::from(cp);
                if cp == 0 || !gpus.is_multiple_of(per_pipeline) {
                    continue;
                }
                let pps: Vec<u32> = match self.free(Dimension::Pp) {
                    true => divisors(gpus / per_pipeline)
                        .into_iter()
                        .filter(|&p| p <= u64::from(t.layers))
                        .map(|p| p as u32)
                        .collect(),
                    false => vec![given.pp],
                };
                for pp in pps {
                    let stage = per_pipeline * u64::from(pp);
                    if pp == 0 || !gpus.is_multiple_of(stage) {
                        continue;
                    }
                    let dp = (gpus / stage) as u32;
                    for (schedule, v) in self.schedules(pp) {
                        for ep in self.experts(tp, cp, dp) {
                            self.batches(tp, cp, pp, dp, ep, schedule, v, train, &mut f);
                        }
                    }
                }
            }
        }
    }

    /// The schedules and virtual stages of a pipeline of `pp` stages. One
    /// stage has no pipeline: the scenario format ignores the schedule
    /// there (1F1B's loop, one chunk). Interleaving takes virtual stages
    /// that split every stage's layers evenly (Megatron-LM's rule without
    /// a custom layout, and Calculon's); the V-shaped schedules take two.
    fn schedules(&self, pp: u32) -> Vec<(Schedule, u32)> {
        let given = &self.filled.parallel;
        if pp == 1 {
            return vec![(Schedule::OneFOneB, 1)];
        }
        let layers = self.model.layers;
        let schedules: Vec<Schedule> = match self.free(Dimension::Schedule) {
            true => Schedule::ALL.to_vec(),
            false => vec![given.schedule],
        };
        let mut out = Vec::new();
        for schedule in schedules {
            match schedule {
                Schedule::Interleaved => {
                    let vs: Vec<u32> = match self.free(Dimension::VirtualStages) {
                        true => (2..=layers / pp)
                            .filter(|v| layers.is_multiple_of(pp * v))
                            .collect(),
                        false => vec![given.virtual_stages],
                    };
                    out.extend(vs.into_iter().map(|v| (schedule, v)));
                }
                s if s.v_shape() => out.push((s, 2)),
                s => out.push((s, 1)),
            }
        }
        out
    }

    /// Expert-parallel degrees: divisors of the experts no larger than a
    /// stage's `tp x cp x dp` (validation refuses those that do not divide
    /// it); 1 for a dense model.
    fn experts(&self, tp: u32, cp: u32, dp: u32) -> Vec<u32> {
        let Some(m) = &self.model.moe else {
            return vec![1];
        };
        if !self.free(Dimension::Ep) {
            return vec![self.filled.parallel.ep];
        }
        let stage = u64::from(tp) * u64::from(cp) * u64::from(dp);
        divisors_u32(m.experts)
            .into_iter()
            .filter(|&e| u64::from(e) <= stage)
            .collect()
    }

    /// Micro-batches and global batches for one layout of the degrees, then
    /// the rest of the layout.
    #[allow(clippy::too_many_arguments)]
    fn batches(
        &self,
        tp: u32,
        cp: u32,
        pp: u32,
        dp: u32,
        ep: u32,
        schedule: Schedule,
        v: u32,
        train: bool,
        f: &mut impl FnMut(Layout),
    ) {
        let t = self.model;
        let rounds = if schedule == Schedule::Interleaved {
            u64::from(pp)
        } else {
            1
        };
        // (micro_batch, global_batch) pairs.
        let pairs: Vec<(u32, u32)> = match self.max_batch {
            Some(max) => {
                let per_replica = u64::from(max) / u64::from(dp);
                let mbs: Vec<u32> = match self.free(Dimension::MicroBatch) {
                    true => divisors(per_replica)
                        .into_iter()
                        .map(|m| m as u32)
                        .collect(),
                    false => vec![t.micro_batch],
                };
                mbs.into_iter()
                    .filter_map(|mb| {
                        let unit = u64::from(dp) * u64::from(mb) * rounds;
                        let batch = u64::from(max) / unit * unit;
                        (batch > 0).then_some((mb, batch as u32))
                    })
                    .collect()
            }
            None => {
                let batch = t.global_batch;
                let mbs: Vec<u32> =
                    match (self.free(Dimension::MicroBatch), batch.is_multiple_of(dp)) {
                        (true, true) => divisors_u32(batch / dp),
                        // Nothing divides: the scenario's own micro-batch, which
                        // validation refuses (and the search counts).
                        _ => vec![t.micro_batch],
                    };
                mbs.into_iter().map(|mb| (mb, batch)).collect()
            }
        };
        let given = &self.filled;
        let recomputes: Vec<Recompute> = match (self.free(Dimension::Recompute), train) {
            (true, true) => vec![Recompute::None, Recompute::Selective, Recompute::Full],
            _ => vec![t.recompute],
        };
        let sps = match self.free(Dimension::SequenceParallel) {
            true if tp > 1 => vec![false, true],
            true => vec![false],
            false => vec![t.sequence_parallel],
        };
        let replicas = dp * cp;
        let shardings = match self.free(Dimension::DpSharding) {
            true if train && replicas > 1 => {
                vec![DpSharding::None, DpSharding::Optimizer, DpSharding::Full]
            }
            true => vec![DpSharding::None],
            false => vec![given.parallel.dp_sharding],
        };
        let o = &given.overlap;
        let moe = t.moe.is_some();
        for (micro_batch, global_batch) in pairs {
            for &recompute in &recomputes {
                for &sequence_parallel in &sps {
                    for &dp_sharding in &shardings {
                        let gathers = dp_sharding == DpSharding::Optimizer;
                        for otp in switch(self.free(Dimension::OverlapTp), tp > 1, o.tp) {
                            for opp in switch(self.free(Dimension::OverlapPp), pp > 1, o.pp) {
                                let dp_applies = train && replicas > 1;
                                for odp in switch(self.free(Dimension::OverlapDp), dp_applies, o.dp)
                                {
                                    let ep_applies = moe && ep > 1;
                                    for oep in switch(
                                        self.free(Dimension::OverlapEp),
                                        ep_applies,
                                        o.ep.is_on(),
                                    ) {
                                        for ocp in
                                            switch(self.free(Dimension::OverlapCp), cp > 1, o.cp)
                                        {
                                            for gather in switch(
                                                self.free(Dimension::ParamGather),
                                                gathers,
                                                o.param_gather,
                                            ) {
                                                f(Layout {
                                                    tp,
                                                    cp,
                                                    pp,
                                                    dp,
                                                    ep,
                                                    schedule,
                                                    virtual_stages: v,
                                                    micro_batch,
                                                    global_batch,
                                                    recompute,
                                                    sequence_parallel,
                                                    dp_sharding,
                                                    overlap: Switches {
                                                        tp: otp,
                                                        pp: opp,
                                                        dp: odp,
                                                        ep: oep,
                                                        cp: ocp,
                                                        param_gather: gather,
                                                    },
                                                });
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// How many layouts the space holds.
    pub fn size(&self) -> u64 {
        let mut n = 0u64;
        self.for_each(|_| n += 1);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisors_are_ascending_and_complete() {
        assert_eq!(divisors(1), [1]);
        assert_eq!(divisors(12), [1, 2, 3, 4, 6, 12]);
        assert_eq!(divisors(64), [1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(divisors(49), [1, 7, 49]);
    }

    #[test]
    fn every_dimension_is_named_by_its_path() {
        for d in Dimension::ALL {
            assert_eq!(Dimension::from_path(d.path()), Ok(d));
        }
        let e = Dimension::from_path("parallel.dp").unwrap_err();
        assert!(e.contains("valid are parallel.tp"), "{e}");
    }
}
