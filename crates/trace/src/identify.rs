//! A file's kernels as the figures read them, worked out once per file:
//! each name's class, each communication kernel's operation, axis and
//! kind, and each device's kernels in time order. Every later pass (the
//! figures, the bars, the matching across ranks) indexes these, so that an
//! import stays linear in its events: a process group's axis is worked
//! out once per group and operation, not per kernel (a group may list
//! thousands of ranks), and a device's kernels are found once, not by a
//! pass over the file per device.

use std::collections::HashMap;

use overlap_core::Axis;
use serde::{Deserialize, Serialize};

use crate::classify::{axis_of_group, function_of, Class, GpuCat, Op};
use crate::read::FileTrace;
use crate::rules::Classifier;

/// What a communication kernel is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommId {
    /// The operation, PyTorch's record read where the name does not say.
    pub op: Op,
    /// Its axis (`None`: the trace does not say).
    pub axis: Option<Axis>,
    /// Index into [`Identified::kinds`].
    pub kind: u16,
}

/// A file's kernels, identified.
#[derive(Clone, Debug)]
pub struct Identified {
    /// The class of each name, by [`crate::Kernel::name`].
    pub classes: Vec<Class>,
    /// Per kernel, what it is if it is communication.
    pub comm: Vec<Option<CommId>>,
    /// The kinds' names ("NCCL AllReduce", "DeepEP dispatch", ...).
    pub kinds: Vec<String>,
    /// Each device and its kernels' indices in file order: devices in order.
    pub devices: Vec<(i64, Vec<u32>)>,
}

/// Identifies the file's kernels with `classifier`.
pub fn identify(file: &FileTrace, classifier: &Classifier) -> Identified {
    let mut cats = vec![None; file.names.len()];
    for k in &file.kernels {
        cats[k.name as usize].get_or_insert(k.cat);
    }
    // A name seen under two categories is classified by its first;
    // Kineto gives each name one.
    let classes: Vec<Class> = file
        .names
        .iter()
        .zip(cats)
        .map(|(n, c)| classifier.classify(c.unwrap_or(GpuCat::Kernel), n))
        .collect();
    let mut kinds: Vec<String> = Vec::new();
    let mut kind_ids: HashMap<String, u16> = HashMap::new();
    let mut group_axes: HashMap<(u32, Op), Option<Axis>> = HashMap::new();
    let comm = file
        .kernels
        .iter()
        .map(|k| {
            let Class::Comm { family, op, axis } = classes[k.name as usize] else {
                return None;
            };
            // PyTorch's record names the collective NCCL runs as send/recv
            // (all-to-all), or one the kernel's name does not.
            let op = match (op, k.op_hint) {
                (Op::SendRecv, Some(Op::AllToAll)) => Op::AllToAll,
                (Op::Other, Some(hint)) => hint,
                (op, _) => op,
            };
            let axis = axis.or_else(|| {
                let g = k.group?;
                *group_axes.entry((g, op)).or_insert_with(|| {
                    axis_of_group(
                        &file.groups[g as usize],
                        op,
                        file.world_size,
                        file.devices_listed,
                    )
                })
            });
            let label = format!("{} {}", family.label(), op.label());
            let kind = match kind_ids.get(&label) {
                Some(&id) => id,
                None => {
                    // A kind is a family and an operation: a few dozen at most.
                    let id = kinds.len() as u16;
                    kinds.push(label.clone());
                    kind_ids.insert(label, id);
                    id
                }
            };
            Some(CommId { op, axis, kind })
        })
        .collect();
    Identified {
        classes,
        comm,
        kinds,
        devices: devices_of(file),
    }
}

/// Each device and its kernels' indices in file order, in one sort (the
/// figures read a device's kernels in file order, as they always have).
fn devices_of(file: &FileTrace) -> Vec<(i64, Vec<u32>)> {
    let mut order: Vec<u32> = (0..file.kernels.len() as u32).collect();
    let k = &file.kernels;
    order.sort_by_key(|&i| (k[i as usize].device, i));
    let mut out: Vec<(i64, Vec<u32>)> = Vec::new();
    for i in order {
        let d = k[i as usize].device;
        match out.last_mut() {
            Some((last, list)) if *last == d => list.push(i),
            _ => out.push((d, vec![i])),
        }
    }
    out
}

/// A kernel that may be communication the table does not know: one of the
/// longest on a stream other than the GPU's compute stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The name of its first kernel as the trace writes it, cut at 300
    /// characters.
    pub name: String,
    /// Its function, as a `--classify` pattern would name it
    /// (`dpsk::ep::internode::combine`).
    pub function: String,
    /// The stream it runs on.
    pub stream: i64,
    /// How many kernels of the function the GPU ran on the stream in its
    /// step window.
    pub kernels: usize,
    /// Their time, ms per step.
    pub ms: f64,
}

/// A candidate's kernels, time (µs) and the name of its first kernel.
type Tally = (usize, f64, u32);

/// Candidates listed per GPU.
const CANDIDATES: usize = 5;
/// A candidate's name is cut here: template arguments run to kilobytes.
const CANDIDATE_NAME_CHARS: usize = 300;

/// The longest kernels of one GPU (`kernels`, within `from..to`) on streams
/// other than its compute stream, by name and stream, longest first. The
/// compute stream is the one that runs the most kernels (then the most
/// time): a step's compute is many short kernels, a library's
/// communication a few long ones on streams of their own.
pub(crate) fn candidates(
    file: &FileTrace,
    id: &Identified,
    kernels: &[u32],
    from: f64,
    to: f64,
    steps: u32,
) -> Vec<Candidate> {
    let mut busy: HashMap<i64, (usize, f64)> = HashMap::new();
    for &i in kernels {
        let k = &file.kernels[i as usize];
        if id.classes[k.name as usize] == Class::Compute {
            let b = busy.entry(k.stream).or_default();
            b.0 += 1;
            b.1 += k.end_us - k.ts_us;
        }
    }
    let Some(compute_stream) = busy
        .iter()
        .max_by(|a, b| {
            (a.1 .0)
                .cmp(&b.1 .0)
                .then(a.1 .1.total_cmp(&b.1 .1))
                .then(b.0.cmp(a.0))
        })
        .map(|(&s, _)| s)
    else {
        return Vec::new();
    };
    // By function and stream: a kernel's template instances are one
    // candidate, as one --classify pattern names them all.
    let mut functions: HashMap<u32, String> = HashMap::new();
    let mut by: HashMap<(String, i64), Tally> = HashMap::new();
    for &i in kernels {
        let k = &file.kernels[i as usize];
        let (a, b) = (k.ts_us.max(from), k.end_us.min(to));
        if k.stream == compute_stream || b < a || id.classes[k.name as usize] != Class::Compute {
            continue;
        }
        let function = functions
            .entry(k.name)
            .or_insert_with(|| {
                let (path, own) = function_of(&file.names[k.name as usize]);
                if path.is_empty() {
                    own.to_string()
                } else {
                    format!("{path}::{own}")
                }
            })
            .clone();
        let e = by.entry((function, k.stream)).or_insert((0, 0.0, k.name));
        e.0 += 1;
        e.1 += b - a;
    }
    let mut list: Vec<_> = by.into_iter().collect();
    list.sort_by(|x: &((String, i64), Tally), y| y.1 .1.total_cmp(&x.1 .1).then(x.0.cmp(&y.0)));
    list.truncate(CANDIDATES);
    list.into_iter()
        .map(|((function, stream), (count, us, name))| Candidate {
            name: file.names[name as usize]
                .chars()
                .take(CANDIDATE_NAME_CHARS)
                .collect(),
            function,
            stream,
            kernels: count,
            ms: us / 1e3 / f64::from(steps.max(1)),
        })
        .collect()
}
