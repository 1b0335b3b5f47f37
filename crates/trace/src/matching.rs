//! Collectives matched across ranks: the k-th collective of each process
//! group on one rank is the k-th of the same group on every other rank.
//!
//! A collective cannot finish on any rank before its last rank arrives: the
//! ranks that launched it earlier spin in the kernel, waiting. So the
//! shortest of its kernels, the last rank's, is the collective's transfer
//! (its time on the wire once all ranks are there), and on every rank the
//! rest of its kernel is waiting for later ranks. The transfer is the
//! kernel's last part, ending with it. Durations are compared, never start
//! times, so that the ranks' clocks need not agree.
//!
//! The key of a collective, per GPU, in launch order:
//! - its process group where PyTorch states it (`Process Group Ranks`,
//!   `Process Group Name` on the kernel or the record around its launch,
//!   the ranks of a named group from `distributedInfo.pg_config`), and its
//!   operation;
//! - else its stream, its kernel's name and its size (`In msg nelems`),
//!   as ranks running the same program issue them in the same order.
//!
//! Where no kernel states its group and every rank of the world is read,
//! the groups are inferred from when the matched kernels end
//! (`infer_groups`), and each inferred group's collectives are matched
//! within it, its axis read from its ranks as a stated group's would be.
//!
//! One pass over each GPU's communication kernels and one over the
//! collectives found: linear in the events (hash maps), never a pass over
//! GPUs per GPU.

use std::collections::HashMap;
use std::sync::Arc;

use overlap_core::Axis;

use crate::classify::{axis_of_group, Group, Op};
use crate::identify::Identified;
use crate::infer_groups::groups_of;
use crate::read::FileTrace;

/// One GPU of the import, as the matching sees it.
pub(crate) struct GpuRef<'a> {
    /// Its file, by position in the import's order.
    pub file: usize,
    /// Its kernels' indices in the file.
    pub kernels: &'a [u32],
}

/// What a collective is known by on each of its ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// Its process group (by its place among the import's groups) and operation.
    Group(u32, Op),
    /// Its stream, its name (by its place among the import's names), its size.
    Stream(i64, u32, Option<u64>),
    /// As `Stream`, within the inferred group of this index.
    Inferred(u32, i64, u32, Option<u64>),
}

/// One rank's kernel of a collective.
#[derive(Clone, Copy)]
struct Part {
    gpu: u32,
    kernel: u32,
    dur_us: f64,
    end_us: f64,
    rank: Option<u64>,
}

/// A process group inferred from the matching.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct InferredGroup {
    /// Its ranks, sorted.
    pub ranks: Arc<[u64]>,
    /// Its axis, read from its ranks as a stated group's.
    pub axis: Option<Axis>,
}

/// How often one GPU arrived last, and what it cost the others.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Lateness {
    /// Matched collectives it took part in (launched in its step window).
    pub collectives: usize,
    /// Those it arrived last at while some other rank waited.
    pub last: usize,
    /// The other ranks' wait on those, µs summed over ranks.
    pub idle_caused_us: f64,
}

/// The matching of an import's collectives.
#[derive(Debug, Default)]
pub(crate) struct Matched {
    /// Per file, its matched kernels and their transfer, µs, by kernel index.
    pub transfer_us: Vec<Vec<(u32, f64)>>,
    /// Per GPU: collectives matched and found on its rank alone.
    pub counts: Vec<(usize, usize)>,
    /// Per GPU.
    pub late: Vec<Lateness>,
    /// What could not be matched, in sentences.
    pub messages: Vec<String>,
    /// Collectives matched across two ranks or more.
    pub matched: usize,
    /// Groups inferred where the trace states none.
    pub inferred: Vec<InferredGroup>,
    /// Per file, its kernels in an inferred group, by kernel index.
    pub inferred_of: Vec<Vec<(u32, u32)>>,
}

impl Matched {
    /// The transfer of a kernel of file `f`, if it was matched.
    pub fn transfer_of(&self, f: usize, kernel: u32) -> Option<f64> {
        let list = self.transfer_us.get(f)?;
        list.binary_search_by_key(&kernel, |p| p.0)
            .ok()
            .map(|i| list[i].1)
    }

    /// The inferred group of a kernel of file `f`, if any.
    pub fn inferred_group(&self, f: usize, kernel: u32) -> Option<&InferredGroup> {
        let list = self.inferred_of.get(f)?;
        let i = list.binary_search_by_key(&kernel, |p| p.0).ok()?;
        self.inferred.get(list[i].1 as usize)
    }
}

/// A rank list as messages show it: `[0, 1, 2, 3]`, or its ends and size.
fn shown_ranks(ranks: &[u64]) -> String {
    if ranks.len() <= 8 {
        format!("{ranks:?}")
    } else {
        format!(
            "[{}, {}, ..., {}] ({} ranks)",
            ranks[0],
            ranks[1],
            ranks[ranks.len() - 1],
            ranks.len()
        )
    }
}

/// Matches the collectives of `gpus` (files in `files`' order).
pub(crate) fn match_collectives(
    files: &[&FileTrace],
    ids: &[Identified],
    gpus: &[GpuRef],
) -> Matched {
    let mut out = Matched {
        transfer_us: vec![Vec::new(); files.len()],
        counts: vec![(0, 0); gpus.len()],
        late: vec![Lateness::default(); gpus.len()],
        messages: Vec::new(),
        matched: 0,
        inferred: Vec::new(),
        inferred_of: vec![Vec::new(); files.len()],
    };
    let comm_kernels = |g: &GpuRef| {
        g.kernels
            .iter()
            .filter(|&&i| ids[g.file].comm[i as usize].is_some())
            .count()
    };
    let total: usize = gpus.iter().map(comm_kernels).sum();
    if total == 0 {
        return out;
    }
    if gpus.len() < 2 {
        let f = files[gpus[0].file];
        let of = match (f.rank, f.world_size) {
            (Some(r), Some(w)) => format!(" (rank {r} of {w})"),
            (Some(r), None) => format!(" (rank {r})"),
            _ => String::new(),
        };
        out.messages.push(format!(
            "one GPU read{of}: a collective's transfer and wait are found by matching it across its ranks, so they need the traces of the other ranks"
        ));
        return out;
    }
    let worlds: Vec<u64> = {
        let mut w: Vec<u64> = files.iter().filter_map(|f| f.world_size).collect();
        w.sort_unstable();
        w.dedup();
        w
    };
    if worlds.len() > 1 {
        out.messages.push(format!(
            "the files disagree on world_size ({}): they are not one job's ranks, so their collectives are not matched",
            worlds.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
        ));
        return out;
    }
    if let Some(f) = files
        .iter()
        .find(|f| matches!((f.rank, f.world_size), (Some(r), Some(w)) if r >= w))
    {
        out.messages.push(format!(
            "{} says rank {} of a world of {}: its collectives are not matched",
            f.source,
            f.rank.unwrap_or(0),
            f.world_size.unwrap_or(0)
        ));
    }
    let bad_rank = |f: &FileTrace| matches!((f.rank, f.world_size), (Some(r), Some(w)) if r >= w);

    // The import's groups and names, each file's mapped onto them once.
    let mut groups: Vec<&Group> = Vec::new();
    let mut group_ids: HashMap<&Group, u32> = HashMap::new();
    let mut names: HashMap<&str, u32> = HashMap::new();
    let mut file_groups: Vec<Vec<u32>> = Vec::with_capacity(files.len());
    let mut file_names: Vec<Vec<u32>> = Vec::with_capacity(files.len());
    for f in files {
        file_groups.push(
            f.groups
                .iter()
                .map(|g| {
                    *group_ids.entry(g).or_insert_with(|| {
                        groups.push(g);
                        groups.len() as u32 - 1
                    })
                })
                .collect(),
        );
        let mut mine = Vec::with_capacity(f.names.len());
        for n in &f.names {
            let next = names.len() as u32;
            mine.push(*names.entry(n.as_str()).or_insert(next));
        }
        file_names.push(mine);
    }

    let mut by_key: HashMap<(Key, u32), Vec<Part>> = HashMap::new();
    let mut keyed_by_stream = 0usize;
    let mut peerless = 0usize;
    for (gi, g) in gpus.iter().enumerate() {
        let f = files[g.file];
        if bad_rank(f) {
            continue;
        }
        let id = &ids[g.file];
        let mut comm: Vec<u32> = g
            .kernels
            .iter()
            .copied()
            .filter(|&i| id.comm[i as usize].is_some())
            .collect();
        // Launch order on the GPU: its kernels by start.
        comm.sort_by(|&a, &b| {
            f.kernels[a as usize]
                .ts_us
                .total_cmp(&f.kernels[b as usize].ts_us)
                .then(a.cmp(&b))
        });
        let mut seen: HashMap<Key, u32> = HashMap::new();
        for i in comm {
            let k = &f.kernels[i as usize];
            let c = id.comm[i as usize].expect("filtered to communication");
            let key = match k.group {
                // A send or receive in a group of more than two ranks (a
                // pipeline's group, [0, 8, 16, 24]) goes to one peer the
                // trace does not name: the k-th of two ranks need not be
                // one exchange. Left unmatched, and said.
                Some(local)
                    if c.op == Op::SendRecv
                        && f.groups[local as usize]
                            .ranks
                            .as_ref()
                            .is_some_and(|r| r.len() > 2) =>
                {
                    out.counts[gi].1 += 1;
                    peerless += 1;
                    continue;
                }
                Some(local) => Key::Group(file_groups[g.file][local as usize], c.op),
                None => {
                    keyed_by_stream += 1;
                    Key::Stream(k.stream, file_names[g.file][k.name as usize], k.size)
                }
            };
            let n = seen.entry(key).or_insert(0);
            *n += 1;
            by_key.entry((key, *n)).or_default().push(Part {
                gpu: gi as u32,
                kernel: i,
                dur_us: (k.end_us - k.ts_us).max(0.0),
                end_us: k.end_us,
                rank: f.rank,
            });
        }
    }

    // In a fixed order, so that sums are the same on every run.
    let mut found: Vec<((Key, u32), Vec<Part>)> = by_key.into_iter().collect();
    found.sort_by_key(|(_, parts)| (parts[0].gpu, parts[0].kernel));
    let world = worlds.first().copied();
    let ranks_read = files.iter().filter(|f| f.rank.is_some()).count() as u64;
    if keyed_by_stream > 0 {
        let whole_world = world == Some(ranks_read) && files.iter().all(|f| f.rank.is_some());
        let per_node = files.iter().find_map(|f| f.devices_listed);
        let ops = |p: &Part| {
            ids[gpus[p.gpu as usize].file].comm[p.kernel as usize].map_or(Op::Other, |c| c.op)
        };
        found = infer(
            &mut out,
            found,
            whole_world,
            ranks_read,
            world,
            per_node,
            &ops,
            gpus,
        );
    }
    let (mut matched, mut alone, mut partial) = (0usize, 0usize, 0usize);
    let mut partial_example: Option<(usize, usize)> = None;
    for ((key, _), parts) in &found {
        if parts.len() < 2 {
            alone += 1;
            out.counts[parts[0].gpu as usize].1 += 1;
            continue;
        }
        matched += 1;
        if let Key::Group(g, _) = key {
            if let Some(ranks) = &groups[*g as usize].ranks {
                if parts.len() < ranks.len() {
                    partial += 1;
                    partial_example.get_or_insert((*g as usize, parts.len()));
                }
            }
        }
        // The last to arrive: the shortest kernel (the first such by GPU).
        let (late_at, transfer) =
            parts
                .iter()
                .enumerate()
                .fold((0, f64::INFINITY), |best, (i, p)| {
                    if p.dur_us < best.1 {
                        (i, p.dur_us)
                    } else {
                        best
                    }
                });
        let mut idle = 0.0;
        for p in parts {
            let g = &gpus[p.gpu as usize];
            out.transfer_us[g.file].push((p.kernel, transfer));
            out.counts[p.gpu as usize].0 += 1;
            idle += p.dur_us - transfer;
            if files[g.file].kernels[p.kernel as usize].in_step {
                out.late[p.gpu as usize].collectives += 1;
            }
        }
        let late = parts[late_at];
        let g = &gpus[late.gpu as usize];
        if idle > 0.0 && files[g.file].kernels[late.kernel as usize].in_step {
            let l = &mut out.late[late.gpu as usize];
            l.last += 1;
            l.idle_caused_us += idle;
        }
    }
    out.matched = matched;
    for list in &mut out.transfer_us {
        list.sort_unstable_by_key(|p| p.0);
    }
    if keyed_by_stream > 0 && matched > 0 {
        out.messages.push(format!(
            "{keyed_by_stream} communication kernels state no process group: matched across ranks by stream, kernel name and size, in launch order"
        ));
    }
    if peerless > 0 {
        out.messages.push(format!(
            "{peerless} sends and receives in groups of more than two ranks are not matched (their peer is not in the trace): each counts whole as transfer"
        ));
    }
    if alone > 0 {
        out.messages.push(format!(
            "{alone} of {} collectives were found on one rank only (its group's other ranks not read, or ranks whose collectives differ): each counts whole as transfer",
            matched + alone
        ));
    }
    match (partial_example, worlds.first()) {
        (None, Some(&w)) if matched > 0 && ranks_read < w => out.messages.push(format!(
            "{ranks_read} of the world's {w} ranks read: a collective's transfer is the shortest among the ranks read, so wait is a lower bound where its other ranks were not read"
        )),
        _ => {}
    }
    if let Some((g, read)) = partial_example {
        let ranks = groups[g].ranks.as_deref().unwrap_or(&[]);
        out.messages.push(format!(
            "{partial} collectives were read on only some of their group's ranks (group {} on {read} of {}): transfer is the shortest among the ranks read, so wait is a lower bound",
            shown_ranks(ranks),
            ranks.len()
        ));
    }
    out
}

/// Splits the collectives matched by stream, name and size into the groups
/// inferred from when they end, where the whole world was read; says what
/// was inferred and what could not be.
#[allow(clippy::too_many_arguments)]
fn infer(
    out: &mut Matched,
    found: Vec<((Key, u32), Vec<Part>)>,
    whole_world: bool,
    ranks_read: u64,
    world: Option<u64>,
    per_node: Option<u64>,
    op_of: &dyn Fn(&Part) -> Op,
    gpus: &[GpuRef],
) -> Vec<((Key, u32), Vec<Part>)> {
    if !whole_world {
        let read = match world {
            Some(w) => format!("{ranks_read} of the world's {w} ranks were read"),
            None => "the traces do not state their world_size".to_string(),
        };
        out.messages.push(format!(
            "no process group is stated and {read}: groups are inferred only when every rank's trace is read, so the axes of those collectives are unknown"
        ));
        return found;
    }
    // Each stream key's collectives, in the order first found.
    let mut keys: Vec<Key> = Vec::new();
    let mut of_key: HashMap<Key, Vec<usize>> = HashMap::new();
    for (i, ((key, _), _)) in found.iter().enumerate() {
        if let Key::Stream(..) = key {
            of_key
                .entry(*key)
                .or_insert_with(|| {
                    keys.push(*key);
                    Vec::new()
                })
                .push(i);
        }
    }
    let mut group_ids: HashMap<Arc<[u64]>, u32> = HashMap::new();
    // For each found collective, its group per rank, where inferred.
    let mut rank_group: Vec<Option<HashMap<u64, u32>>> = vec![None; found.len()];
    let mut said: Vec<String> = Vec::new();
    let mut not: Vec<String> = Vec::new();
    for key in &keys {
        let Key::Stream(stream, ..) = *key else {
            continue;
        };
        let list = &of_key[key];
        let collectives: Vec<Vec<(u64, f64)>> = list
            .iter()
            .map(|&i| {
                found[i]
                    .1
                    .iter()
                    .map(|p| (p.rank.unwrap_or(u64::MAX), p.end_us))
                    .collect()
            })
            .collect();
        let op = op_of(&found[list[0]].1[0]);
        match groups_of(&collectives) {
            Ok(groups) => {
                let mut by_rank: HashMap<u64, u32> = HashMap::new();
                let mut axis = None;
                for g in &groups {
                    let ranks: Arc<[u64]> = g.as_slice().into();
                    let group = Group {
                        ranks: Some(ranks.clone()),
                        name: None,
                        desc: None,
                    };
                    axis = axis_of_group(&group, op, world, per_node);
                    let next = out.inferred.len() as u32;
                    let id = *group_ids.entry(ranks.clone()).or_insert_with(|| {
                        out.inferred.push(InferredGroup { ranks, axis });
                        next
                    });
                    for &r in g {
                        by_rank.insert(r, id);
                    }
                }
                if said.len() < 4 {
                    said.push(format!(
                        "stream {stream} {}: {} group{} of {} ({}{}), read as {}",
                        op.label(),
                        groups.len(),
                        if groups.len() == 1 { "" } else { "s" },
                        groups[0].len(),
                        shown_ranks(&groups[0]),
                        if groups.len() > 1 { ", ..." } else { "" },
                        axis.map_or("unknown", |a| a.label())
                    ));
                }
                for &i in list {
                    rank_group[i] = Some(by_rank.clone());
                }
            }
            Err(why) => {
                if not.len() < 4 {
                    not.push(format!("stream {stream} {}: {}", op.label(), why.why()));
                }
            }
        }
    }
    if !said.is_empty() {
        out.messages.push(format!(
            "no process group is stated: groups inferred from the ranks that end each collective together ({}); a group's name and description cannot be inferred, so CP reads as DP",
            said.join("; ")
        ));
    }
    if !not.is_empty() {
        out.messages.push(format!(
            "no process group could be inferred for {} (their axis is unknown)",
            not.join("; ")
        ));
    }
    let mut split: Vec<((Key, u32), Vec<Part>)> = Vec::with_capacity(found.len());
    for (((key, n), parts), groups) in found.into_iter().zip(rank_group) {
        let (Key::Stream(s, name, size), Some(groups)) = (key, groups) else {
            split.push(((key, n), parts));
            continue;
        };
        let mut by_group: Vec<(u32, Vec<Part>)> = Vec::new();
        for p in parts {
            let Some(&g) = p.rank.and_then(|r| groups.get(&r)) else {
                continue;
            };
            out.inferred_of[gpus[p.gpu as usize].file].push((p.kernel, g));
            match by_group.iter_mut().find(|(id, _)| *id == g) {
                Some((_, list)) => list.push(p),
                None => by_group.push((g, vec![p])),
            }
        }
        for (g, list) in by_group {
            split.push(((Key::Inferred(g, s, name, size), n), list));
        }
    }
    for list in &mut out.inferred_of {
        list.sort_unstable_by_key(|p| p.0);
    }
    split
}
