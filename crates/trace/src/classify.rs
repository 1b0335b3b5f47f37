//! What a GPU kernel of a real trace is: communication (and of which
//! library and collective), a memory copy or set, or compute. Communication
//! is recognised by name, from [`RULES`], a table read top to bottom, the
//! first row that matches deciding; a kernel no row matches is compute.
//!
//! To recognise another library's kernels, add a row: its pattern, the
//! family and operation it stands for, the axis when the library serves only
//! one, and where the name comes from (`tests/trace_import.rs` checks every
//! row against a name of its own).
//!
//! The axis of a collective whose library serves several comes from its
//! process group, where the trace states it ([`axis_of_group`]).

use overlap_core::Axis;
use serde::Serialize;

/// Which library a communication kernel comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Family {
    /// NCCL's collective and point-to-point kernels.
    Nccl,
    /// DeepEP's expert-parallel dispatch and combine.
    DeepEp,
    /// PyTorch's SymmetricMemory (and the Async TP built on it).
    SymmetricMemory,
    /// A peer-to-peer copy-engine transfer (`Memcpy PtoP`).
    PeerCopy,
    /// DeepSeek's own expert-parallel kernels (`dpsk::ep::...`), in its
    /// published profiles.
    DeepSeekEp,
    /// A rule the user gave (`--classify`).
    User,
}

impl Family {
    /// The name readers see.
    pub fn label(self) -> &'static str {
        match self {
            Family::Nccl => "NCCL",
            Family::DeepEp => "DeepEP",
            Family::SymmetricMemory => "SymmetricMemory",
            Family::PeerCopy => "P2P",
            Family::DeepSeekEp => "DeepSeek EP",
            Family::User => "User",
        }
    }
}

/// What a communication kernel does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Op {
    /// All-reduce.
    AllReduce,
    /// All-gather.
    AllGather,
    /// Reduce-scatter.
    ReduceScatter,
    /// All-to-all (NCCL runs it as send/recv; PyTorch's record names it).
    AllToAll,
    /// Point-to-point send and receive.
    SendRecv,
    /// Broadcast.
    Broadcast,
    /// Reduce to one rank.
    Reduce,
    /// A barrier or signal between ranks.
    Barrier,
    /// DeepEP's token dispatch to experts.
    Dispatch,
    /// DeepEP's combine of expert outputs.
    Combine,
    /// DeepEP's exchange of token counts before a dispatch or combine.
    Notify,
    /// A copy between GPUs.
    Copy,
    /// A kernel of the family whose operation the name does not say.
    Other,
}

impl Op {
    /// The name readers see.
    pub fn label(self) -> &'static str {
        match self {
            Op::AllReduce => "AllReduce",
            Op::AllGather => "AllGather",
            Op::ReduceScatter => "ReduceScatter",
            Op::AllToAll => "AllToAll",
            Op::SendRecv => "SendRecv",
            Op::Broadcast => "Broadcast",
            Op::Reduce => "Reduce",
            Op::Barrier => "Barrier",
            Op::Dispatch => "dispatch",
            Op::Combine => "combine",
            Op::Notify => "notify",
            Op::Copy => "copy",
            Op::Other => "other",
        }
    }
}

/// The name shown for the axis of a collective whose trace does not say it.
pub const UNKNOWN_AXIS: &str = "unknown";

/// The key of an axis in the figures: the model's code (`tp`, ...), or
/// [`UNKNOWN_AXIS`] where the trace does not say.
pub fn axis_name(axis: Option<Axis>) -> &'static str {
    axis.map_or(UNKNOWN_AXIS, Axis::name)
}

/// How a row recognises a kernel's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// The name starts with this.
    Prefix(&'static str),
    /// The kernel's function is `name`, inside a namespace whose path
    /// contains `scope` (any namespace when `scope` is empty). The function
    /// is read from the demangled name: the return type, template and call
    /// arguments and anonymous namespaces set aside, so that
    /// `void deep_ep::intranode::dispatch<8, 768>(int4*, ...)` is the
    /// function `dispatch` in `deep_ep::intranode`.
    Function {
        /// A part of the namespace path, e.g. `deep_ep`.
        scope: &'static str,
        /// The function's own name.
        name: &'static str,
    },
}

/// What a matching row says of the operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpFrom {
    /// Always this operation.
    Fixed(Op),
    /// The word after the prefix names it, as NCCL's kernels do
    /// (`ncclDevKernel_AllReduce_Sum_bf16_RING_LL`): read by [`NCCL_WORDS`].
    NameWord,
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// How the name is recognised.
    pub pattern: Pattern,
    /// The library.
    pub family: Family,
    /// The operation.
    pub op: OpFrom,
    /// The axis, when the library serves only one.
    pub axis: Option<Axis>,
    /// Where the name comes from: the source that defines the kernel.
    pub source: &'static str,
}

const fn function(scope: &'static str, name: &'static str) -> Pattern {
    Pattern::Function { scope, name }
}

const fn rule(
    pattern: Pattern,
    family: Family,
    op: OpFrom,
    axis: Option<Axis>,
    source: &'static str,
) -> Rule {
    Rule {
        pattern,
        family,
        op,
        axis,
        source,
    }
}

use Family::{DeepEp, DeepSeekEp, Nccl, PeerCopy, SymmetricMemory};
use OpFrom::{Fixed, NameWord};

const DEEPEP_V1: &str = "DeepEP csrc/kernels/{intranode,internode,internode_ll}.cu \
     (namespaces deep_ep::intranode, ::internode, ::internode_ll; since v2 under deep_ep::legacy)";
const DEEPEP_V2: &str = "DeepEP deep_ep/include/deep_ep/impls/*.cuh (namespace deep_ep::elastic)";
const DEEPSEEK_EP: &str = "deepseek-ai/profile-data train.json: DeepSeek's own expert-parallel \
     kernels (namespace dpsk::ep::internode), neither NCCL's nor open-source DeepEP's";
const SYMM_OPS: &str = "PyTorch torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu";
const SYMM_SIGNALS: &str = "PyTorch torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemory.cu \
     (barrier, put_signal, wait_signal; Async TP orders its copies with them)";

/// The table, read top to bottom; the first matching row decides.
pub static RULES: &[Rule] = &[
    // NCCL: the kernel's name is the collective's, then the reduction,
    // type, algorithm and protocol (NCCL src/device/generate.py).
    rule(
        Pattern::Prefix("ncclDevKernel_"),
        Nccl,
        NameWord,
        None,
        "NCCL >= 2.19 src/device/generate.py: ncclDevKernel_<Coll>_<Op>_<Type>_<Algo>_<Proto>",
    ),
    rule(
        Pattern::Prefix("ncclSymkDevKernel_"),
        Nccl,
        NameWord,
        None,
        "NCCL >= 2.27 symmetric kernels: ncclSymkDevKernel_<Coll>_...",
    ),
    rule(
        Pattern::Prefix("ncclKernel_"),
        Nccl,
        NameWord,
        None,
        "NCCL < 2.19: ncclKernel_<Coll>_<Algo>_<Proto>_<Op>_<Type> (HTA's test traces)",
    ),
    // HolisticTraceAnalysis 0.5.0 counts every kernel whose name starts
    // with "nccl" as communication (hta/utils/utils.py, NCCL_KERNEL_RE).
    rule(
        Pattern::Prefix("nccl"),
        Nccl,
        Fixed(Op::Other),
        None,
        "HolisticTraceAnalysis 0.5.0: any kernel named ^nccl is communication",
    ),
    // DeepEP, first version and its legacy namespace.
    rule(function("deep_ep", "dispatch"), DeepEp, Fixed(Op::Dispatch), Some(Axis::Ep), DEEPEP_V1),
    rule(function("deep_ep", "combine"), DeepEp, Fixed(Op::Combine), Some(Axis::Ep), DEEPEP_V1),
    rule(function("deep_ep", "notify_dispatch"), DeepEp, Fixed(Op::Notify), Some(Axis::Ep), DEEPEP_V1),
    rule(function("deep_ep", "cached_notify_dispatch"), DeepEp, Fixed(Op::Notify), Some(Axis::Ep), DEEPEP_V1),
    rule(function("deep_ep", "cached_notify_combine"), DeepEp, Fixed(Op::Notify), Some(Axis::Ep), DEEPEP_V1),
    rule(function("deep_ep", "cached_notify"), DeepEp, Fixed(Op::Notify), Some(Axis::Ep), DEEPEP_V1),
    rule(function("deep_ep", "clean_low_latency_buffer"), DeepEp, Fixed(Op::Notify), Some(Axis::Ep), DEEPEP_V1),
    rule(function("deep_ep", "barrier"), DeepEp, Fixed(Op::Barrier), Some(Axis::Ep), DEEPEP_V1),
    // DeepSeek's own expert parallelism, as its published training profile
    // names it; its `dpsk::ep::cuda::get_dispatch_layout` is local work.
    rule(function("dpsk::ep", "dispatch"), DeepSeekEp, Fixed(Op::Dispatch), Some(Axis::Ep), DEEPSEEK_EP),
    rule(function("dpsk::ep", "combine"), DeepSeekEp, Fixed(Op::Combine), Some(Axis::Ep), DEEPSEEK_EP),
    rule(function("dpsk::ep", "notify_dispatch"), DeepSeekEp, Fixed(Op::Notify), Some(Axis::Ep), DEEPSEEK_EP),
    rule(function("dpsk::ep", "cached_notify"), DeepSeekEp, Fixed(Op::Notify), Some(Axis::Ep), DEEPSEEK_EP),
    // DeepEP v2 ("elastic"): its epilogues are local copies and reductions,
    // compute; its pipeline send and receive serve PP.
    rule(function("deep_ep", "dispatch_impl"), DeepEp, Fixed(Op::Dispatch), Some(Axis::Ep), DEEPEP_V2),
    rule(function("deep_ep", "hybrid_dispatch_impl"), DeepEp, Fixed(Op::Dispatch), Some(Axis::Ep), DEEPEP_V2),
    rule(function("deep_ep", "combine_impl"), DeepEp, Fixed(Op::Combine), Some(Axis::Ep), DEEPEP_V2),
    rule(function("deep_ep", "hybrid_combine_impl"), DeepEp, Fixed(Op::Combine), Some(Axis::Ep), DEEPEP_V2),
    rule(function("deep_ep", "barrier_impl"), DeepEp, Fixed(Op::Barrier), Some(Axis::Ep), DEEPEP_V2),
    rule(function("deep_ep", "pp_send_impl"), DeepEp, Fixed(Op::SendRecv), Some(Axis::Pp), DEEPEP_V2),
    rule(function("deep_ep", "pp_recv_impl"), DeepEp, Fixed(Op::SendRecv), Some(Axis::Pp), DEEPEP_V2),
    // PyTorch SymmetricMemory collectives (torch.ops.symm_mem.*), in an
    // anonymous namespace.
    rule(function("", "one_shot_all_reduce_kernel"), SymmetricMemory, Fixed(Op::AllReduce), None, SYMM_OPS),
    rule(function("", "two_shot_all_reduce_kernel"), SymmetricMemory, Fixed(Op::AllReduce), None, SYMM_OPS),
    rule(function("", "two_shot_all_reduce_kernel_inplace"), SymmetricMemory, Fixed(Op::AllReduce), None, SYMM_OPS),
    rule(function("", "multimem_all_reduce_kernel"), SymmetricMemory, Fixed(Op::AllReduce), None, SYMM_OPS),
    rule(function("", "multimem_one_shot_all_reduce_kernel"), SymmetricMemory, Fixed(Op::AllReduce), None, SYMM_OPS),
    rule(function("", "multimem_all_gather_kernel"), SymmetricMemory, Fixed(Op::AllGather), None, SYMM_OPS),
    rule(function("", "barrier_kernel"), SymmetricMemory, Fixed(Op::Barrier), None, SYMM_SIGNALS),
    rule(function("", "put_signal_kernel"), SymmetricMemory, Fixed(Op::Barrier), None, SYMM_SIGNALS),
    rule(function("", "wait_signal_kernel"), SymmetricMemory, Fixed(Op::Barrier), None, SYMM_SIGNALS),
    // Async TP (torch.distributed._symmetric_memory) moves its shards with
    // the copy engine; Kineto names a peer-to-peer copy "Memcpy PtoP".
    rule(
        Pattern::Prefix("Memcpy PtoP"),
        PeerCopy,
        Fixed(Op::Copy),
        None,
        "Kineto's name for CUPTI's peer-to-peer memcpy kind (libkineto, memcpyKindString: \"PtoP\")",
    ),
];

/// NCCL's collective words, as its kernel names spell them.
pub const NCCL_WORDS: &[(&str, Op)] = &[
    ("AllReduce", Op::AllReduce),
    ("AllGather", Op::AllGather),
    ("ReduceScatter", Op::ReduceScatter),
    ("SendRecv", Op::SendRecv),
    ("Broadcast", Op::Broadcast),
    ("Reduce", Op::Reduce),
    ("AllToAll", Op::AllToAll),
];

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
    RULES.iter().find(|r| match r.pattern {
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
            (NameWord, Pattern::Prefix(p)) => name_word(name, p),
            (NameWord, Pattern::Function { .. }) => Op::Other,
        };
        return Class::Comm {
            family: r.family,
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
pub const GROUP_DESCRIPTIONS: &[(&str, Axis)] = &[
    ("EXPERT", Axis::Ep),
    ("TENSOR_MODEL_PARALLEL", Axis::Tp),
    ("PIPELINE_MODEL_PARALLEL", Axis::Pp),
    ("EMBEDDING", Axis::Pp),
    ("POSITION_EMBEDDING", Axis::Pp),
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
