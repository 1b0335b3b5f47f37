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
//! One pass over each GPU's communication kernels and one over the
//! collectives found: linear in the events (hash maps), never a pass over
//! GPUs per GPU.

use std::collections::HashMap;

use crate::classify::{Group, Op};
use crate::identify::Identified;
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
}

/// One rank's kernel of a collective.
#[derive(Clone, Copy)]
struct Part {
    gpu: u32,
    kernel: u32,
    dur_us: f64,
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
}

impl Matched {
    /// The transfer of a kernel of file `f`, if it was matched.
    pub fn transfer_of(&self, f: usize, kernel: u32) -> Option<f64> {
        let list = self.transfer_us.get(f)?;
        list.binary_search_by_key(&kernel, |p| p.0)
            .ok()
            .map(|i| list[i].1)
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
            });
        }
    }

    // In a fixed order, so that sums are the same on every run.
    let mut found: Vec<((Key, u32), Vec<Part>)> = by_key.into_iter().collect();
    found.sort_by_key(|(_, parts)| (parts[0].gpu, parts[0].kernel));
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
    let ranks_read = files.iter().filter(|f| f.rank.is_some()).count() as u64;
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
