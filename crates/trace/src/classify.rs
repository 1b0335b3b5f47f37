//! What a GPU kernel of a real trace is: communication (and of which
//! library and collective), a memory copy or set, or compute. Communication
//! is recognised by name, from [`rules`], a table read top to bottom, the
//! first row that matches deciding; a kernel no row matches is compute.
//!
//! Each collective library the simulator runs contributes its rows through
//! its registry line (`overlap_core::collective::name_rules`); the rows
//! below are of kernels a trace can hold that no simulated library runs
//! (DeepSeek's own expert-parallel kernels). Each row gives its pattern, the
//! family and operation it stands for, the axis when the library serves
//! only one, and where the name comes from (`tests/trace_import.rs` checks
//! every row against a name of its own). The user's rules
//! (`--classify`, `rules.rs`) are read before them all.
//!
//! The axis of a collective whose library serves several comes from its
//! process group, where the trace states it ([`axis_of_group`]).

use overlap_core::Axis;
use serde::Serialize;

/// Which library a communication kernel comes from, by the name readers
/// see: a library's registry line names its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Family(pub &'static str);

impl Family {
    /// NCCL's collective and point-to-point kernels.
    pub const NCCL: Family = Family("NCCL");
    /// DeepEP's expert-parallel dispatch and combine.
    pub const DEEPEP: Family = Family("DeepEP");
    /// PyTorch's SymmetricMemory (and the Async TP built on it).
    pub const SYMMETRIC_MEMORY: Family = Family("SymmetricMemory");
    /// A peer-to-peer copy-engine transfer (`Memcpy PtoP`).
    pub const PEER_COPY: Family = Family("P2P");
    /// DeepSeek's own expert-parallel kernels (`dpsk::ep`), as its
    /// published training trace names them.
    pub const DEEPSEEK_EP: Family = Family("DeepSeek EP");
    /// A rule the user gave (`--classify`).
    pub const USER: Family = Family("User");

    /// The name readers see.
    pub fn label(self) -> &'static str {
        self.0
    }
}

/// What a communication kernel does.
pub use overlap_core::collective::names::TraceOp as Op;
/// How a row recognises a kernel's name, and what it says of the operation.
pub use overlap_core::collective::names::{function, OpFrom, Pattern, NCCL_WORDS};

/// The name shown for the axis of a collective whose trace does not say it.
pub const UNKNOWN_AXIS: &str = "unknown";

/// The key of an axis in the figures: the model's code (`tp`, ...), or
/// [`UNKNOWN_AXIS`] where the trace does not say.
pub fn axis_name(axis: Option<Axis>) -> &'static str {
    axis.map_or(UNKNOWN_AXIS, Axis::name)
}

/// One row of the table: a library's (`overlap_core::collective::names`).
pub use overlap_core::collective::names::NameRule as Rule;

const fn rule(
    pattern: Pattern,
    family: Family,
    op: OpFrom,
    axis: Option<Axis>,
    source: &'static str,
) -> Rule {
    Rule {
        pattern,
        family: family.0,
        op,
        axis,
        source,
    }
}

use OpFrom::Fixed;

const DEEPSEEK_EP: &str = "deepseek-ai/profile-data train.json: DeepSeek's own expert-parallel \
     kernels (namespace dpsk::ep::internode), neither NCCL's nor open-source DeepEP's";

/// Rows of kernels no simulated library runs.
static TRACE_ONLY_RULES: &[Rule] = &[
    deepseek_ep("dispatch", Op::Dispatch),
    deepseek_ep("combine", Op::Combine),
    deepseek_ep("notify_dispatch", Op::Notify),
    deepseek_ep("cached_notify", Op::Notify),
];

/// A row of DeepSeek's own expert-parallel kernels: function `name` of
/// namespace `dpsk::ep`, an EP `op`.
const fn deepseek_ep(name: &'static str, op: Op) -> Rule {
    rule(
        function("dpsk::ep", name),
        Family::DEEPSEEK_EP,
        Fixed(op),
        Some(Axis::Ep),
        DEEPSEEK_EP,
    )
}

/// The table: every library's rows in registry order, then the rows of
/// kernels no simulated library runs.
pub fn rules() -> &'static [Rule] {
    static RULES: std::sync::OnceLock<Vec<Rule>> = std::sync::OnceLock::new();
    RULES.get_or_init(|| {
        overlap_core::collective::name_rules()
            .chain(TRACE_ONLY_RULES)
            .copied()
            .collect()
    })
}

/// What a kernel is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Communication: the library, the operation, the axis if the row fixes it.
    Comm {
        /// The library.
        family: Family,
        /// The operation.
        op: Op,
        /// The axis the row fixes, if any.
        axis: Option<Axis>,
    },
    /// A memory copy on one GPU, or to or from the host.
    Memcpy,
    /// A memory set.
    Memset,
    /// Everything else.
    Compute,
}

/// What the trace's category says of a GPU event, before its name is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GpuCat {
    /// `cat: "kernel"`.
    Kernel,
    /// `cat: "gpu_memcpy"`.
    Memcpy,
    /// `cat: "gpu_memset"`.
    Memset,
}

/// The kernel's function and the namespace path before it, from a
/// demangled name: `("deep_ep::intranode", "dispatch")`.
pub fn function_of(name: &str) -> (String, &str) {
    let mut rest = name.trim_start();
    rest = rest.strip_prefix("void ").unwrap_or(rest).trim_start();
    // Cut at the first template or call argument list that is not the
    // "(anonymous namespace)" of a path.
    let mut cut = rest.len();
    let mut i = 0;
    let bytes = rest.as_bytes();
    while i < bytes.len() {
        match bytes[i] {
            b'(' if rest[i..].starts_with("(anonymous namespace)") => {
                i += "(anonymous namespace)".len();
                continue;
            }
            b'<' | b'(' => {
                cut = i;
                break;
            }
            _ => {}
        }
        i += 1;
    }
    let path = &rest[..cut];
    match path.rfind("::") {
        Some(at) => (
            path[..at].replace("(anonymous namespace)", ""),
            &path[at + 2..],
        ),
        None => (String::new(), path),
    }
}

/// The first rule that recognises the name, if any.
pub fn rule_for(name: &str) -> Option<&'static Rule> {
    let mut function: Option<(String, &str)> = None;
    rules().iter().find(|r| match r.pattern {
        Pattern::Prefix(p) => name.starts_with(p),
        Pattern::Function { scope, name: f } => {
            let (path, own) = function.get_or_insert_with(|| function_of(name));
            *own == f && (scope.is_empty() || path.contains(scope))
        }
    })
}

/// The operation an NCCL-style name spells after `prefix`.
fn name_word(name: &str, prefix: &str) -> Op {
    let word = name[prefix.len()..]
        .split(['_', '(', '<'])
        .next()
        .unwrap_or("");
    NCCL_WORDS
        .iter()
        .find(|(w, _)| *w == word)
        .map_or(Op::Other, |&(_, op)| op)
}

/// What a GPU event is, from its category and name.
pub fn classify(cat: GpuCat, name: &str) -> Class {
    if let Some(r) = rule_for(name) {
        let op = match (r.op, r.pattern) {
            (Fixed(op), _) => op,
            (OpFrom::NameWord, Pattern::Prefix(p)) => name_word(name, p),
            (OpFrom::NameWord, Pattern::Function { .. }) => Op::Other,
        };
        return Class::Comm {
            family: Family(r.family),
            op,
            axis: r.axis,
        };
    }
    match cat {
        GpuCat::Memcpy => Class::Memcpy,
        GpuCat::Memset => Class::Memset,
        // Kineto's names for copies and sets run as kernels' own category
        // on some versions; HTA reads them by name too.
        GpuCat::Kernel if name.starts_with("Memcpy") => Class::Memcpy,
        GpuCat::Kernel if name.starts_with("Memset") => Class::Memset,
        GpuCat::Kernel => Class::Compute,
    }
}

/// The operation a PyTorch collective record names: `nccl:all_to_all`,
/// `c10d::alltoall_base_`, or the `Collective name` argument
/// (`allreduce`, `all_gather_into_tensor_coalesced`, ...).
pub fn op_of_record(name: &str) -> Option<Op> {
    let name = name.strip_prefix("nccl:").unwrap_or(name);
    let name = name.rsplit("::").next().unwrap_or(name);
    let word: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    // Longest words first: "reducescatter" before "reduce".
    const WORDS: &[(&str, Op)] = &[
        ("alltoall", Op::AllToAll),
        ("allreduce", Op::AllReduce),
        ("allgather", Op::AllGather),
        ("reducescatter", Op::ReduceScatter),
        ("broadcast", Op::Broadcast),
        ("barrier", Op::Barrier),
        ("send", Op::SendRecv),
        ("recv", Op::SendRecv),
        ("reduce", Op::Reduce),
    ];
    WORDS
        .iter()
        .find(|(w, _)| word.starts_with(w))
        .map(|&(_, op)| op)
}

/// A process group as PyTorch describes it on a collective's records.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Group {
    /// `Process Group Ranks`: the global ranks in the group, held once
    /// however often the trace repeats them ([`crate::sink::RankLists`]).
    pub ranks: Option<std::sync::Arc<[u64]>>,
    /// `Process Group Name`.
    pub name: Option<String>,
    /// `Process Group Description`: Megatron-LM names its groups here
    /// (`TENSOR_MODEL_PARALLEL_GROUP`, ...).
    pub desc: Option<String>,
}

/// Megatron-LM's group descriptions (megatron/core/parallel_state.py,
/// `group_desc=`), read before the ranks: a name says more than a stride.
/// Checked in order: "EXPERT_TENSOR..." is EP's before it is TP's.
///
/// The embedding groups (`EMBEDDING_GROUP`, `POSITION_EMBEDDING_GROUP`:
/// the first and last pipeline stages) carry one collective, the tied
/// embedding's gradient all-reduce after the backward
/// (`_allreduce_word_embedding_grads`, NVIDIA/Megatron-LM d98e8a6
/// megatron/core/distributed/finalize_model_grads.py:164-200). It sums copies of one gradient before the
/// optimizer step, so it is DP's, as the simulator draws it
/// (`overlap_core::workload::cost::embedding_sync`), though its bytes cross the
/// pipeline's links: a measured trace and a simulated one then put it on
/// the same axis.
pub const GROUP_DESCRIPTIONS: &[(&str, Axis)] = &[
    ("EXPERT", Axis::Ep),
    ("TENSOR_MODEL_PARALLEL", Axis::Tp),
    ("PIPELINE_MODEL_PARALLEL", Axis::Pp),
    ("EMBEDDING", Axis::Dp),
    ("POSITION_EMBEDDING", Axis::Dp),
    ("CONTEXT_PARALLEL", Axis::Cp),
    ("DATA_PARALLEL", Axis::Dp),
];

/// The axis a collective's process group serves.
///
/// 1. A Megatron-LM description names it ([`GROUP_DESCRIPTIONS`]).
/// 2. Else from the ranks, with Megatron's rank order in mind (TP fastest,
///    then DP, then PP):
///    - one rank, or ranks not evenly spaced: unknown;
///    - the whole world (`world_size` ranks): DP for reductions and
///      gathers, EP for an all-to-all (a job's default group is what
///      DDP and FSDP reduce over when it has no other axis);
///    - stride 1 within one node (`gpus_per_node`, the devices the trace
///      lists): TP;
///    - a point-to-point exchange whose group spans the world at its
///      stride (`size x stride = world_size`): PP;
///    - any other even stride: DP (the axis between TP and PP);
/// 3. No group stated: unknown.
///
/// `None` is unknown.
pub fn axis_of_group(
    group: &Group,
    op: Op,
    world_size: Option<u64>,
    gpus_per_node: Option<u64>,
) -> Option<Axis> {
    if let Some(desc) = &group.desc {
        let upper = desc.to_ascii_uppercase();
        if let Some(&(_, axis)) = GROUP_DESCRIPTIONS.iter().find(|(d, _)| upper.contains(d)) {
            return Some(axis);
        }
    }
    let ranks = group.ranks.as_ref()?;
    if ranks.len() < 2 {
        return None;
    }
    let mut sorted = ranks.to_vec();
    sorted.sort_unstable();
    let stride = sorted[1].saturating_sub(sorted[0]);
    if stride == 0 || sorted.windows(2).any(|w| w[1] - w[0] != stride) {
        return None;
    }
    let size = sorted.len() as u64;
    if world_size == Some(size) {
        return Some(if op == Op::AllToAll {
            Axis::Ep
        } else {
            Axis::Dp
        });
    }
    if let Some(per_node) = gpus_per_node.filter(|&n| n > 0) {
        if stride == 1 && sorted[0] / per_node == sorted[sorted.len() - 1] / per_node {
            return Some(Axis::Tp);
        }
    }
    if op == Op::SendRecv && world_size == Some(size * stride) {
        return Some(Axis::Pp);
    }
    Some(Axis::Dp)
}

/// Ranks written as PyTorch writes them on records: `"[0, 1, 2]"`.
pub fn parse_ranks(text: &str) -> Option<Vec<u64>> {
    let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
    if inner.trim().is_empty() {
        return Some(Vec::new());
    }
    inner
        .split(',')
        .map(|r| r.trim().parse::<u64>().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_are_read_past_return_types_templates_and_anonymous_namespaces() {
        assert_eq!(
            function_of("void deep_ep::intranode::dispatch<8, 768>(int4*, float*)"),
            ("deep_ep::intranode".to_string(), "dispatch")
        );
        assert_eq!(
            function_of("void (anonymous namespace)::one_shot_all_reduce_kernel<c10::BFloat16, 16, 8>(c10::BFloat16**)"),
            ("".to_string(), "one_shot_all_reduce_kernel")
        );
        assert_eq!(
            function_of("flash_fwd_kernel"),
            ("".to_string(), "flash_fwd_kernel")
        );
    }

    #[test]
    fn groups_give_axes_by_description_then_stride() {
        let g = |ranks: &[u64], desc: Option<&str>| Group {
            ranks: Some(ranks.into()),
            name: None,
            desc: desc.map(str::to_string),
        };
        let w = Some(16);
        let n = Some(8);
        assert_eq!(
            axis_of_group(&g(&[0, 1, 2, 3], None), Op::AllReduce, w, n),
            Some(Axis::Tp)
        );
        assert_eq!(
            axis_of_group(&g(&[0, 4], None), Op::AllReduce, w, n),
            Some(Axis::Dp)
        );
        assert_eq!(
            axis_of_group(&g(&[0, 8], None), Op::SendRecv, w, n),
            Some(Axis::Pp)
        );
        assert_eq!(
            axis_of_group(&g(&(0..16).collect::<Vec<_>>(), None), Op::AllReduce, w, n),
            Some(Axis::Dp)
        );
        assert_eq!(
            axis_of_group(&g(&(0..16).collect::<Vec<_>>(), None), Op::AllToAll, w, n),
            Some(Axis::Ep)
        );
        assert_eq!(
            axis_of_group(&g(&[0, 1, 5], None), Op::AllReduce, w, n),
            None
        );
        assert_eq!(
            axis_of_group(
                &g(&[0, 4], Some("PIPELINE_MODEL_PARALLEL_GROUP")),
                Op::SendRecv,
                w,
                n
            ),
            Some(Axis::Pp)
        );
        assert_eq!(
            axis_of_group(
                &g(&[0, 1], Some("EXPERT_TENSOR_PARALLEL_GROUP")),
                Op::AllReduce,
                w,
                n
            ),
            Some(Axis::Ep)
        );
        // The tied embedding's all-reduce between the end stages is a
        // gradient reduction: DP's, as the simulator draws it.
        assert_eq!(
            axis_of_group(&g(&[0, 12], Some("EMBEDDING_GROUP")), Op::AllReduce, w, n),
            Some(Axis::Dp)
        );
        assert_eq!(axis_of_group(&Group::default(), Op::AllReduce, w, n), None);
        // A stride-1 group across two nodes is not TP.
        assert_eq!(
            axis_of_group(&g(&[6, 7, 8, 9], None), Op::AllReduce, w, n),
            Some(Axis::Dp)
        );
    }

    #[test]
    fn ranks_parse_as_pytorch_writes_them() {
        assert_eq!(parse_ranks("[0, 1]"), Some(vec![0, 1]));
        assert_eq!(parse_ranks("[]"), Some(vec![]));
        assert_eq!(parse_ranks("[0, x]"), None);
        assert_eq!(parse_ranks("0, 1"), None);
    }

    #[test]
    fn records_name_their_collective() {
        assert_eq!(op_of_record("nccl:all_to_all"), Some(Op::AllToAll));
        assert_eq!(op_of_record("c10d::alltoall_base_"), Some(Op::AllToAll));
        assert_eq!(op_of_record("allreduce"), Some(Op::AllReduce));
        assert_eq!(
            op_of_record("_reduce_scatter_base"),
            Some(Op::ReduceScatter)
        );
        assert_eq!(
            op_of_record("all_gather_into_tensor_coalesced"),
            Some(Op::AllGather)
        );
        assert_eq!(op_of_record("nccl:send"), Some(Op::SendRecv));
        assert_eq!(op_of_record("record_param_comms"), None);
    }
}
