//! What reading one trace keeps: the GPU events ([`Kernel`]), with the
//! launches, collectives' records and profiler steps needed to place them,
//! gathered by [`Sink`] as the events stream past and handed over as a
//! [`FileTrace`].

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use crate::classify::{op_of_record, GpuCat, Group, Op};
use crate::event::{Args, Event};

/// One GPU event kept: a kernel, a copy or a set, in the trace's µs.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// Start, µs.
    pub ts_us: f64,
    /// End, µs (start + duration).
    pub end_us: f64,
    /// `args.device`, else the event's `pid`.
    pub device: i64,
    /// `args.stream`, else the event's `tid`.
    pub stream: i64,
    /// Index into [`FileTrace::names`].
    pub name: u32,
    /// The event's category.
    pub cat: GpuCat,
    /// `args.correlation`: the launch that issued it.
    pub correlation: Option<i64>,
    /// The collective PyTorch names for it (`Collective name`, or the
    /// record around its launch).
    pub op_hint: Option<Op>,
    /// Index into [`FileTrace::groups`]: its process group, where stated.
    pub group: Option<u32>,
    /// Its size in elements (`In msg nelems`), where PyTorch records it.
    pub size: Option<u64>,
    /// Whether it was launched inside a `ProfilerStep#N` (true when the
    /// trace marks no steps).
    pub in_step: bool,
    /// When the host event sharing its correlation (its launch) started, µs.
    pub launch_us: Option<f64>,
}

/// What one file holds, once read.
#[derive(Clone, Debug, Default)]
pub struct FileTrace {
    /// The file as named to the reader.
    pub source: String,
    /// `distributedInfo.rank`.
    pub rank: Option<u64>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<u64>,
    /// How many devices `deviceProperties` lists: the GPUs of a node.
    pub devices_listed: Option<u64>,
    /// The first device's name in `deviceProperties` ("NVIDIA H100 80GB HBM3").
    pub device_name: Option<String>,
    /// The job's process groups as `distributedInfo.pg_config` lists them.
    pub pg_config: Vec<Group>,
    /// The GPU events kept, in file order.
    pub kernels: Vec<Kernel>,
    /// Distinct kernel names.
    pub names: Vec<String>,
    /// Distinct process groups.
    pub groups: Vec<Group>,
    /// Distinct `ProfilerStep#N` numbers seen (0 when none).
    pub steps: u32,
    /// Those numbers, sorted.
    pub step_numbers: Vec<u64>,
    /// The start of the last `ProfilerStep#N` to start, µs.
    pub last_step_start_us: Option<f64>,
    /// Whether HolisticTraceAnalysis rounds this file's times inwards: its
    /// table's `ts` column is fractional when some event's `ts` is written
    /// as a fraction or is missing (hta/common/trace_parser.py,
    /// `round_down_time_stamps`).
    pub hta_rounds: bool,
}

/// A host launch (`cuda_runtime` or `cuda_driver` with a correlation).
pub(crate) struct Launch {
    thread: u64,
    ts_us: f64,
}

/// A host record of a collective (`nccl:all_reduce`, `record_param_comms`).
pub(crate) struct Record {
    ts_us: f64,
    end_us: f64,
    op: Option<Op>,
    group: Option<u32>,
    size: Option<u64>,
}

/// Ranks the distinct process-group lists of one import may hold in all
/// (8 bytes each: 128 MiB). A rank is two or three characters of JSON and
/// a list repeats well under gzip, so a file of a few hundred KB could
/// otherwise name gigabytes of distinct lists (issue 56: 86 KB of gzip
/// held 727 MB). A job of 100,000 GPUs lists each rank in a handful of
/// groups (its TP, PP, DP, EP and world groups): well within.
pub const MAX_HELD_RANKS: usize = 1 << 24;

/// Process groups' rank lists, each held once however many events and
/// files repeat it: a job's world group is listed on every collective's
/// record of every rank, and may hold thousands of ranks. The lists held
/// over an import are bounded ([`MAX_HELD_RANKS`]).
#[derive(Clone, Debug)]
pub struct RankLists {
    lists: HashSet<Arc<[u64]>>,
    /// Ranks over the distinct lists held.
    ranks: usize,
    /// The most ranks held: [`MAX_HELD_RANKS`] but in tests.
    max_ranks: usize,
}

impl Default for RankLists {
    fn default() -> Self {
        Self::with_max_ranks(MAX_HELD_RANKS)
    }
}

impl RankLists {
    /// Lists that may hold `max_ranks` ranks in all (tests show the bound
    /// at a size they can write quickly).
    pub fn with_max_ranks(max_ranks: usize) -> Self {
        Self {
            lists: HashSet::new(),
            ranks: 0,
            max_ranks: max_ranks.min(MAX_HELD_RANKS),
        }
    }

    /// The most ranks these lists may hold.
    pub fn max_ranks(&self) -> usize {
        self.max_ranks
    }

    /// The one copy of `ranks`; `None` when holding it would take the
    /// import past [`MAX_HELD_RANKS`] (it is then not held).
    pub fn intern(&mut self, ranks: Vec<u64>) -> Option<Arc<[u64]>> {
        if let Some(held) = self.lists.get(ranks.as_slice()) {
            return Some(held.clone());
        }
        if self.ranks + ranks.len() > self.max_ranks {
            return None;
        }
        self.ranks += ranks.len();
        let held: Arc<[u64]> = ranks.into();
        self.lists.insert(held.clone());
        Some(held)
    }

    /// How many distinct lists are held.
    pub fn len(&self) -> usize {
        self.lists.len()
    }

    /// Ranks over the distinct lists held (at most [`RankLists::max_ranks`]).
    pub fn ranks_held(&self) -> usize {
        self.ranks
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.lists.is_empty()
    }
}

/// The largest timestamp, either side of zero, an event may carry: 2^53
/// microseconds (about 285 years). Beyond it an f64 cannot hold a single
/// microsecond, so a kernel's start and end round together and every figure
/// built from them (step, compute, exposed) is noise or infinite.
pub const MAX_TIME_US: f64 = 9_007_199_254_740_992.0;

/// The longest duration an event may carry: a day. A profiled step runs for
/// milliseconds to seconds; a day bounds the sums over millions of kernels
/// well inside the range where they stay exact to a microsecond.
pub const MAX_DURATION_US: f64 = 86_400_000_000.0;

/// Why reading stopped early, beyond what serde_json says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Stop {
    None,
    Kernels,
    /// An event's time lies outside [`MAX_TIME_US`] or its duration outside
    /// [`MAX_DURATION_US`]; the event is kept in [`Sink::bad_time`].
    Time,
    /// The process groups' distinct rank lists passed [`MAX_HELD_RANKS`].
    Ranks,
}

/// Everything gathered while the events stream past.
pub(crate) struct Sink {
    pub(crate) kernels: Vec<Kernel>,
    pub(crate) names: Vec<String>,
    pub(crate) name_ids: HashMap<String, u32>,
    pub(crate) groups: Vec<Group>,
    pub(crate) group_ids: HashMap<Group, u32>,
    pub(crate) launches: HashMap<i64, Launch>,
    pub(crate) records: HashMap<u64, Vec<Record>>,
    pub(crate) steps: Vec<(f64, f64)>,
    pub(crate) step_numbers: BTreeSet<u64>,
    pub(crate) last_step_start_us: Option<f64>,
    pub(crate) rank: Option<u64>,
    pub(crate) world_size: Option<u64>,
    pub(crate) devices_listed: Option<u64>,
    pub(crate) device_name: Option<String>,
    pub(crate) pg_config: Vec<Group>,
    pub(crate) rank_lists: RankLists,
    pub(crate) events_seen: bool,
    pub(crate) hta_rounds: bool,
    pub(crate) max_kernels: usize,
    pub(crate) stop: Stop,
    /// The first event whose time or duration was out of range: its name,
    /// `ts` and `dur` in microseconds.
    pub(crate) bad_time: Option<(String, f64, f64)>,
}

impl Sink {
    pub(crate) fn new(max_kernels: usize, rank_lists: RankLists) -> Self {
        Self {
            kernels: Vec::new(),
            names: Vec::new(),
            name_ids: HashMap::new(),
            groups: Vec::new(),
            group_ids: HashMap::new(),
            launches: HashMap::new(),
            records: HashMap::new(),
            steps: Vec::new(),
            step_numbers: BTreeSet::new(),
            last_step_start_us: None,
            rank: None,
            world_size: None,
            devices_listed: None,
            device_name: None,
            pg_config: Vec::new(),
            rank_lists,
            events_seen: false,
            hta_rounds: false,
            max_kernels,
            stop: Stop::None,
            bad_time: None,
        }
    }

    fn name_id(&mut self, name: String) -> u32 {
        if let Some(&id) = self.name_ids.get(&name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.clone());
        self.name_ids.insert(name, id);
        id
    }

    /// The process group an event's `args` state, its rank list interned;
    /// an error when the import's rank lists are over their bound.
    fn group_of(&mut self, args: &mut Args) -> Result<Option<Group>, &'static str> {
        if !args.has_group() {
            return Ok(None);
        }
        let ranks = match args.pg_ranks.take() {
            Some(r) => match self.rank_lists.intern(r) {
                Some(held) => Some(held),
                None => {
                    self.stop = Stop::Ranks;
                    return Err("too many process-group ranks");
                }
            },
            None => None,
        };
        Ok(Some(Group {
            ranks,
            name: args.pg_name.take(),
            desc: args.pg_desc.take(),
        }))
    }

    /// Keeps one group of `pg_config`; an error when the import's rank
    /// lists are over their bound.
    pub(crate) fn config_group(&mut self, mut args: Args) -> Result<(), &'static str> {
        // More groups than a job has are not kept (a malformed list).
        if self.pg_config.len() < 1 << 16 {
            if let Some(g) = self.group_of(&mut args)? {
                self.pg_config.push(g);
            }
        }
        Ok(())
    }

    fn group_id(&mut self, group: Group) -> u32 {
        if let Some(&id) = self.group_ids.get(&group) {
            return id;
        }
        let id = self.groups.len() as u32;
        self.groups.push(group.clone());
        self.group_ids.insert(group, id);
        id
    }

    /// Keeps what the event says that the figures need; `Err` stops the read.
    pub(crate) fn take(&mut self, mut e: Event) -> Result<(), &'static str> {
        self.hta_rounds |= e.ts.is_none() || e.ts_fraction;
        if e.ph.as_deref() != Some("X") {
            return Ok(());
        }
        let (Some(ts), Some(dur)) = (e.ts, e.dur) else {
            return Ok(());
        };
        if !(ts.abs() <= MAX_TIME_US && (0.0..=MAX_DURATION_US).contains(&dur)) {
            self.stop = Stop::Time;
            self.bad_time = Some((e.name.unwrap_or_default(), ts, dur));
            return Err("an event's time is out of range");
        }
        let end = ts + dur;
        let cat = e.cat.as_deref().unwrap_or("");
        let gpu_cat = match cat {
            "kernel" => Some(GpuCat::Kernel),
            "gpu_memcpy" => Some(GpuCat::Memcpy),
            "gpu_memset" => Some(GpuCat::Memset),
            _ => None,
        };
        let group = self.group_of(&mut e.args)?.map(|g| self.group_id(g));
        let size = e.args.msg_nelems;
        let op_hint = e.args.collective.as_deref().and_then(op_of_record);
        if let Some(gpu_cat) = gpu_cat {
            if self.kernels.len() >= self.max_kernels {
                self.stop = Stop::Kernels;
                return Err("too many GPU kernels");
            }
            let name = self.name_id(e.name.unwrap_or_default());
            self.kernels.push(Kernel {
                ts_us: ts,
                end_us: end,
                device: e.args.device.or(e.pid).unwrap_or(0),
                stream: e.args.stream.or(e.tid).unwrap_or(0),
                name,
                cat: gpu_cat,
                correlation: e.args.correlation,
                op_hint,
                group,
                size,
                in_step: true,
                launch_us: None,
            });
            return Ok(());
        }
        let thread = thread_key(e.pid, e.tid);
        if cat == "cuda_runtime" || cat == "cuda_driver" {
            if let Some(c) = e.args.correlation {
                self.launches.insert(c, Launch { thread, ts_us: ts });
            }
            return Ok(());
        }
        let name = e.name.as_deref().unwrap_or("");
        if let Some(n) = name.strip_prefix("ProfilerStep#") {
            // HTA takes its last step's start over every host-side event so
            // named; the step windows here are the host's own annotations.
            if self.last_step_start_us.is_none_or(|s| ts > s) {
                self.last_step_start_us = Some(ts);
            }
            if cat != "gpu_user_annotation" {
                self.steps.push((ts, end));
            }
            if let Ok(n) = n.trim().parse::<u64>() {
                if self.step_numbers.len() < 1 << 16 {
                    self.step_numbers.insert(n);
                }
            }
            return Ok(());
        }
        let names_op = if name.starts_with("nccl:") {
            op_of_record(name)
        } else {
            None
        };
        if (cat == "cpu_op" || cat == "user_annotation")
            && (names_op.is_some() || op_hint.is_some() || group.is_some())
        {
            self.records.entry(thread).or_default().push(Record {
                ts_us: ts,
                end_us: end,
                op: names_op.or(op_hint),
                group,
                size,
            });
        }
        Ok(())
    }

    /// Links each communication-capable kernel to the record around its
    /// launch, marks the kernels launched outside every profiler step, and
    /// hands the result over.
    pub(crate) fn finish(mut self, source: String) -> (FileTrace, RankLists) {
        // A group stated by its name alone takes its ranks from pg_config
        // (its first entry of that name), looked up by name: a scan of
        // pg_config per group was quadratic in the groups.
        let mut by_name: HashMap<&str, &Group> = HashMap::new();
        for c in &self.pg_config {
            if let Some(name) = &c.name {
                by_name.entry(name.as_str()).or_insert(c);
            }
        }
        for g in &mut self.groups {
            if g.ranks.is_some() {
                continue;
            }
            let Some(name) = &g.name else { continue };
            if let Some(c) = by_name.get(name.as_str()) {
                g.ranks = c.ranks.clone();
                if g.desc.is_none() {
                    g.desc = c.desc.clone();
                }
            }
        }
        for list in self.records.values_mut() {
            list.sort_by(|a, b| a.ts_us.total_cmp(&b.ts_us));
        }
        self.steps.sort_by(|a, b| a.0.total_cmp(&b.0));
        let steps = &self.steps;
        let in_steps = |t: f64| {
            let i = steps.partition_point(|s| s.0 <= t);
            // Step windows do not nest; the last one starting by `t` decides.
            i > 0 && steps[i - 1].1 >= t
        };
        for k in &mut self.kernels {
            let launch = k.correlation.and_then(|c| self.launches.get(&c));
            k.launch_us = launch.map(|l| l.ts_us);
            if !steps.is_empty() {
                k.in_step = in_steps(launch.map_or(k.ts_us, |l| l.ts_us));
            }
            if k.op_hint.is_some() && k.group.is_some() && k.size.is_some() {
                continue;
            }
            let Some(l) = launch else { continue };
            let Some(list) = self.records.get(&l.thread) else {
                continue;
            };
            // The records that began by the launch, latest first: the first
            // that still runs at the launch is the innermost. A bounded look
            // back: collectives' records are short and seldom deeply nested.
            let upto = list.partition_point(|r| r.ts_us <= l.ts_us);
            for r in list[..upto].iter().rev().take(64) {
                if r.end_us < l.ts_us {
                    continue;
                }
                if k.op_hint.is_none() {
                    k.op_hint = r.op;
                }
                if k.group.is_none() {
                    k.group = r.group;
                }
                if k.size.is_none() {
                    k.size = r.size;
                }
                if k.op_hint.is_some() && k.group.is_some() && k.size.is_some() {
                    break;
                }
            }
        }
        let step_count = self
            .step_numbers
            .len()
            .max(usize::from(!self.steps.is_empty())) as u32;
        let step_numbers = self.step_numbers.into_iter().collect();
        let trace = FileTrace {
            last_step_start_us: self.last_step_start_us,
            hta_rounds: self.hta_rounds,
            step_numbers,
            source,
            rank: self.rank,
            world_size: self.world_size,
            devices_listed: self.devices_listed,
            device_name: self.device_name,
            pg_config: self.pg_config,
            kernels: self.kernels,
            names: self.names,
            groups: self.groups,
            steps: step_count,
        };
        (trace, self.rank_lists)
    }
}

/// One key for a host thread, from its process and thread ids.
fn thread_key(pid: Option<i64>, tid: Option<i64>) -> u64 {
    let (p, t) = (pid.unwrap_or(0) as u64, tid.unwrap_or(0) as u64);
    p.rotate_left(32) ^ t
}
