//! Reading one trace file as a stream: the `traceEvents` array is visited
//! event by event and each event is read into the few fields kept
//! ([`Kernel`], a launch, a collective's record, a profiler step); every
//! other field, `args` included, is skipped as it is read, so memory grows
//! with the GPU kernels kept, never with the bytes of the file.

use std::cell::Cell;
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::rc::Rc;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::classify::{op_of_record, parse_ranks, GpuCat, Group, Op};
use super::split::{split, SplitError};
use super::{ImportError, MAX_KERNELS, MAX_TRACE_BYTES};

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
struct Launch {
    thread: u64,
    ts_us: f64,
}

/// A host record of a collective (`nccl:all_reduce`, `record_param_comms`).
struct Record {
    ts_us: f64,
    end_us: f64,
    op: Option<Op>,
    group: Option<u32>,
}

/// Why reading stopped early, beyond what serde_json says.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stop {
    None,
    Kernels,
}

/// Everything gathered while the events stream past.
struct Sink {
    kernels: Vec<Kernel>,
    names: Vec<String>,
    name_ids: HashMap<String, u32>,
    groups: Vec<Group>,
    group_ids: HashMap<Group, u32>,
    launches: HashMap<i64, Launch>,
    records: HashMap<u64, Vec<Record>>,
    steps: Vec<(f64, f64)>,
    step_numbers: BTreeSet<u64>,
    last_step_start_us: Option<f64>,
    rank: Option<u64>,
    world_size: Option<u64>,
    devices_listed: Option<u64>,
    events_seen: bool,
    hta_rounds: bool,
    max_kernels: usize,
    stop: Stop,
}

impl Sink {
    fn new(max_kernels: usize) -> Self {
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
            events_seen: false,
            hta_rounds: false,
            max_kernels,
            stop: Stop::None,
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
    fn take(&mut self, e: Event) -> Result<(), &'static str> {
        self.hta_rounds |= e.ts.is_none() || e.ts_fraction;
        if e.ph.as_deref() != Some("X") {
            return Ok(());
        }
        let (Some(ts), Some(dur)) = (e.ts, e.dur) else {
            return Ok(());
        };
        if !ts.is_finite() || !dur.is_finite() || dur < 0.0 {
            return Ok(());
        }
        let end = ts + dur;
        let cat = e.cat.as_deref().unwrap_or("");
        let gpu_cat = match cat {
            "kernel" => Some(GpuCat::Kernel),
            "gpu_memcpy" => Some(GpuCat::Memcpy),
            "gpu_memset" => Some(GpuCat::Memset),
            _ => None,
        };
        let group = e.args.group().map(|g| self.group_id(g));
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
            });
        }
        Ok(())
    }

    /// Links each communication-capable kernel to the record around its
    /// launch, marks the kernels launched outside every profiler step, and
    /// hands the result over.
    fn finish(mut self, source: String) -> FileTrace {
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
            if k.op_hint.is_some() && k.group.is_some() {
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
                if k.op_hint.is_some() && k.group.is_some() {
                    break;
                }
            }
        }
        let step_count = self
            .step_numbers
            .len()
            .max(usize::from(!self.steps.is_empty())) as u32;
        let step_numbers = self.step_numbers.into_iter().collect();
        FileTrace {
            last_step_start_us: self.last_step_start_us,
            hta_rounds: self.hta_rounds,
            step_numbers,
            source,
            rank: self.rank,
            world_size: self.world_size,
            devices_listed: self.devices_listed,
            kernels: self.kernels,
            names: self.names,
            groups: self.groups,
            steps: step_count,
        }
    }
}

/// One key for a host thread, from its process and thread ids.
fn thread_key(pid: Option<i64>, tid: Option<i64>) -> u64 {
    let (p, t) = (pid.unwrap_or(0) as u64, tid.unwrap_or(0) as u64);
    p.rotate_left(32) ^ t
}

/// A string id (`"tid": "stream 7"`) as a number, stably.
fn hash_str(s: &str) -> i64 {
    // FNV-1a, 64 bits (http://www.isthe.com/chongo/tech/comp/fnv/).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h as i64
}

/// The fields of one event that the import reads.
#[derive(Default)]
struct Event {
    ph: Option<String>,
    cat: Option<String>,
    name: Option<String>,
    pid: Option<i64>,
    tid: Option<i64>,
    ts: Option<f64>,
    /// `ts` was written as a fraction (or is not a number).
    ts_fraction: bool,
    dur: Option<f64>,
    args: Args,
}

/// The fields of an event's `args` that the import reads.
#[derive(Default)]
struct Args {
    stream: Option<i64>,
    device: Option<i64>,
    correlation: Option<i64>,
    collective: Option<String>,
    pg_ranks: Option<Vec<u64>>,
    pg_name: Option<String>,
    pg_desc: Option<String>,
}

impl Args {
    fn group(&self) -> Option<Group> {
        if self.pg_ranks.is_none() && self.pg_name.is_none() && self.pg_desc.is_none() {
            return None;
        }
        Some(Group {
            ranks: self.pg_ranks.clone(),
            name: self.pg_name.clone(),
            desc: self.pg_desc.clone(),
        })
    }
}

/// A value read loosely: what cannot be the expected kind is skipped as
/// `None` rather than failing the file.
macro_rules! drain_compound {
    () => {
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
            while s.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    };
}

struct LooseStr;
impl<'de> Visitor<'de> for LooseStr {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    drain_compound!();
}

struct LooseNum;
impl<'de> Visitor<'de> for LooseNum {
    type Value = Option<f64>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.trim().parse::<f64>().ok())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    drain_compound!();
}

/// A time stamp, and whether pandas would read it into a fractional column
/// (a JSON number with a fraction or exponent, or anything but a number).
struct TimeNum;
impl<'de> Visitor<'de> for TimeNum {
    type Value = (Option<f64>, bool);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok((v.trim().parse::<f64>().ok(), true))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok((Some(v as f64), false))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok((Some(v as f64), false))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok((Some(v), true))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok((None, true))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok((None, true))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok((None, true))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok((None, true))
    }
}

struct LooseId;
impl<'de> Visitor<'de> for LooseId {
    type Value = Option<i64>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an id")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(
            v.trim().parse::<i64>().unwrap_or_else(|_| hash_str(v)),
        ))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v as i64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok((v.is_finite() && v.fract() == 0.0).then_some(v as i64))
    }
    drain_compound!();
}

/// A visitor whose value is an `Option`, reading any JSON scalar (string,
/// number, boolean, null) as `None`: a field of the wrong shape is passed
/// over, as a trace from another tool may carry one, never refused.
/// `but_strings` leaves strings to the visitor's own `visit_str`.
macro_rules! scalars_read_as_none {
    () => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
        scalars_read_as_none!(but_strings);
    };
    (but_strings) => {
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    };
}

/// Ranks as a string (`"[0, 1]"`) or an array; at most [`MAX_GROUP_RANKS`].
struct LooseRanks;
/// More ranks than any job has; a longer list is not read.
const MAX_GROUP_RANKS: usize = 1 << 20;
impl<'de> Visitor<'de> for LooseRanks {
    type Value = Option<Vec<u64>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of ranks")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(parse_ranks(v).filter(|r| r.len() <= MAX_GROUP_RANKS))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        let mut ranks = Some(Vec::new());
        while let Some(v) = s.next_element_seed(Loose(LooseNum))? {
            match (&mut ranks, v) {
                (Some(list), Some(r))
                    if r >= 0.0 && r.fract() == 0.0 && list.len() < MAX_GROUP_RANKS =>
                {
                    list.push(r as u64)
                }
                _ => ranks = None,
            }
        }
        Ok(ranks)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    scalars_read_as_none!(but_strings);
}

/// Any visitor above as a seed that reads whatever value comes.
struct Loose<V>(V);
impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for Loose<V> {
    type Value = V::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_any(self.0)
    }
}

/// A map key among those the import reads, without allocating it.
struct KeyOf(&'static [&'static str]);
impl<'de> DeserializeSeed<'de> for KeyOf {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}
impl<'de> Visitor<'de> for KeyOf {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.0.iter().position(|k| *k == v))
    }
}

const EVENT_KEYS: &[&str] = &["ph", "cat", "name", "pid", "tid", "ts", "dur", "args"];
const ARGS_KEYS: &[&str] = &[
    "stream",
    "device",
    "correlation",
    "Collective name",
    "Process Group Ranks",
    "Process Group Name",
    "Process Group Description",
];

struct ArgsSeed;
impl<'de> Visitor<'de> for ArgsSeed {
    type Value = Option<Args>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut a = Args::default();
        while let Some(key) = m.next_key_seed(KeyOf(ARGS_KEYS))? {
            match key {
                Some(0) => a.stream = m.next_value_seed(Loose(LooseId))?,
                Some(1) => a.device = m.next_value_seed(Loose(LooseId))?,
                Some(2) => a.correlation = m.next_value_seed(Loose(LooseId))?,
                Some(3) => a.collective = m.next_value_seed(Loose(LooseStr))?,
                Some(4) => a.pg_ranks = m.next_value_seed(Loose(LooseRanks))?,
                Some(5) => a.pg_name = m.next_value_seed(Loose(LooseStr))?,
                Some(6) => a.pg_desc = m.next_value_seed(Loose(LooseStr))?,
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(a))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    scalars_read_as_none!();
}

/// One element of `traceEvents`: an event object, or anything else skipped.
struct EventSeed;
impl<'de> Visitor<'de> for EventSeed {
    type Value = Option<Event>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an event object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut e = Event::default();
        while let Some(key) = m.next_key_seed(KeyOf(EVENT_KEYS))? {
            match key {
                Some(0) => e.ph = m.next_value_seed(Loose(LooseStr))?,
                Some(1) => e.cat = m.next_value_seed(Loose(LooseStr))?,
                Some(2) => e.name = m.next_value_seed(Loose(LooseStr))?,
                Some(3) => e.pid = m.next_value_seed(Loose(LooseId))?,
                Some(4) => e.tid = m.next_value_seed(Loose(LooseId))?,
                Some(5) => {
                    let (ts, fraction) = m.next_value_seed(Loose(TimeNum))?;
                    e.ts = ts;
                    e.ts_fraction = fraction;
                }
                Some(6) => e.dur = m.next_value_seed(Loose(LooseNum))?,
                Some(7) => e.args = m.next_value_seed(Loose(ArgsSeed))?.unwrap_or_default(),
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(e))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    scalars_read_as_none!();
}

/// A seed that hands the sink what it reads, itself its own visitor, read
/// with `deserialize_$how`.
macro_rules! sink_seed {
    ($name:ident, $how:ident) => {
        impl<'de> DeserializeSeed<'de> for $name<'_> {
            type Value = ();
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.$how(self)
            }
        }
    };
}

/// The `traceEvents` array, each event handed to the sink as it is read.
struct EventsSeed<'s>(&'s mut Sink);
sink_seed!(EventsSeed, deserialize_seq);
impl<'de> Visitor<'de> for EventsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("traceEvents as an array of events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        self.0.events_seen = true;
        while let Some(e) = s.next_element_seed(Loose(EventSeed))? {
            if let Some(e) = e {
                self.0.take(e).map_err(de::Error::custom)?;
            }
        }
        Ok(())
    }
}

/// `distributedInfo`: the rank and world size.
struct DistSeed<'s>(&'s mut Sink);
sink_seed!(DistSeed, deserialize_any);
impl<'de> Visitor<'de> for DistSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("distributedInfo as an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        let whole = |v: Option<f64>| {
            v.filter(|x| *x >= 0.0 && x.fract() == 0.0 && *x < 1e15)
                .map(|x| x as u64)
        };
        while let Some(key) = m.next_key_seed(KeyOf(&["rank", "world_size"]))? {
            match key {
                Some(0) => self.0.rank = whole(m.next_value_seed(Loose(LooseNum))?),
                Some(1) => self.0.world_size = whole(m.next_value_seed(Loose(LooseNum))?),
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

/// `deviceProperties`: only how many devices it lists.
struct CountSeed;
impl<'de> Visitor<'de> for CountSeed {
    type Value = Option<u64>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        let mut n = 0;
        while s.next_element::<IgnoredAny>()?.is_some() {
            n += 1;
        }
        Ok(Some(n))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    scalars_read_as_none!();
}

/// The whole document: an object with `traceEvents` (Kineto, Chrome's
/// object format) or a bare array of events (Chrome's array format).
struct RootSeed<'s>(&'s mut Sink);
sink_seed!(RootSeed, deserialize_any);
impl<'de> Visitor<'de> for RootSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace: an object with traceEvents, or an array of events")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        let keys = &["traceEvents", "distributedInfo", "deviceProperties"];
        while let Some(key) = m.next_key_seed(KeyOf(keys))? {
            match key {
                Some(0) => m.next_value_seed(EventsSeed(self.0))?,
                Some(1) => m.next_value_seed(DistSeed(self.0))?,
                Some(2) => self.0.devices_listed = m.next_value_seed(Loose(CountSeed))?,
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, s: A) -> Result<(), A::Error> {
        EventsSeed(self.0).visit_seq(s)
    }
}

/// Counts the bytes read and fails past `limit`, so that a file that
/// inflates beyond it (a gzip bomb, an endless device) stops there.
struct Capped<R> {
    inner: R,
    read: u64,
    limit: u64,
    over: Rc<Cell<bool>>,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.read >= self.limit {
            // One byte past the limit tells a file of exactly the limit
            // from a longer one.
            let mut one = [0u8; 1];
            if self.inner.read(&mut one)? == 0 {
                return Ok(0);
            }
            self.over.set(true);
            return Err(std::io::Error::other("over the limit"));
        }
        let room = (self.limit - self.read).min(buf.len() as u64) as usize;
        let n = self.inner.read(&mut buf[..room])?;
        self.read += n as u64;
        Ok(n)
    }
}

/// Reads one trace from `source` (plain or gzip JSON, told by its first
/// bytes), named `shown` in messages.
pub fn read_trace(source: impl Read, shown: &str) -> Result<FileTrace, ImportError> {
    read_trace_with(source, shown, MAX_TRACE_BYTES, MAX_KERNELS)
}

/// As [`read_trace`], with the limits given (tests use small ones).
pub fn read_trace_with(
    source: impl Read,
    shown: &str,
    max_bytes: u64,
    max_kernels: usize,
) -> Result<FileTrace, ImportError> {
    let mut buffered = BufReader::with_capacity(1 << 16, source);
    let head = buffered
        .fill_buf()
        .map_err(|e| ImportError::new(format!("cannot read {shown}: {e}")))?;
    let gzip = head.starts_with(&[0x1f, 0x8b]);
    let over = Rc::new(Cell::new(false));
    let mut sink = Sink::new(max_kernels);
    let result = if gzip {
        let inflated = flate2::bufread::MultiGzDecoder::new(buffered);
        parse(inflated, &mut sink, max_bytes, over.clone())
    } else {
        parse(buffered, &mut sink, max_bytes, over.clone())
    };
    if let Err(e) = result {
        return Err(explain(&e, &sink, over.get(), gzip, shown, max_bytes));
    }
    if !sink.events_seen {
        return Err(ImportError::new(format!(
            "{shown} is JSON but not a trace: it has no traceEvents array (a PyTorch profiler or Chrome trace holds one)"
        )));
    }
    if sink.kernels.is_empty() {
        return Err(ImportError::new(format!(
            "{shown} holds no GPU kernels (events with cat \"kernel\", \"gpu_memcpy\" or \"gpu_memset\"): profile with ProfilerActivity.CUDA"
        )));
    }
    Ok(sink.finish(shown.to_string()))
}

/// Why a read failed.
enum Failure {
    /// serde_json refused a batch of events (true) or the header (false).
    Json(serde_json::Error, bool),
    /// Cutting the stream failed.
    Split(SplitError<serde_json::Error>),
}

fn parse(
    source: impl Read,
    sink: &mut Sink,
    max_bytes: u64,
    over: Rc<Cell<bool>>,
) -> Result<(), Failure> {
    let capped = Capped {
        inner: source,
        read: 0,
        limit: max_bytes,
        over,
    };
    let header = split(capped, |batch, _| {
        let mut de = serde_json::Deserializer::from_slice(batch);
        EventsSeed(sink).deserialize(&mut de)?;
        de.end()
    })
    .map_err(|e| match e {
        SplitError::Batch(j) => Failure::Json(j, true),
        other => Failure::Split(other),
    })?;
    let mut de = serde_json::Deserializer::from_slice(&header);
    RootSeed(sink)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| Failure::Json(e, false))
}

/// One line that says why the file could not be read.
fn explain(
    f: &Failure,
    sink: &Sink,
    over: bool,
    gzip: bool,
    shown: &str,
    max_bytes: u64,
) -> ImportError {
    let message = if over {
        format!(
            "{shown} holds more than {} of JSON{}: over the import limit; profile fewer steps (torch.profiler.schedule with active=1)",
            bytes(max_bytes),
            if gzip { " once inflated" } else { "" }
        )
    } else if sink.stop == Stop::Kernels {
        format!(
            "{shown} holds more than {} GPU kernels: over the import limit; profile fewer steps (torch.profiler.schedule with active=1)",
            sink.max_kernels
        )
    } else {
        match f {
            Failure::Split(SplitError::Io(e)) if gzip => {
                format!("{shown} is not a whole gzip file (it is cut short or corrupt): {e}")
            }
            Failure::Split(SplitError::Io(e)) => format!("cannot read {shown}: {e}"),
            Failure::Split(SplitError::Truncated(at)) => format!(
                "{shown} ends early (after {at} bytes{}): the trace is cut short; copy it again whole",
                if gzip { " inflated" } else { "" }
            ),
            Failure::Split(SplitError::NotJson(at)) => format!(
                "{shown} is not JSON text (byte {at}): a trace is JSON, or JSON compressed with gzip"
            ),
            Failure::Split(SplitError::Oversized(what, limit)) => format!(
                "{shown}: {what} is longer than {}, the import's limit: not a profiler trace",
                bytes(*limit as u64)
            ),
            Failure::Split(SplitError::Batch(e)) | Failure::Json(e, _) => {
                let place = match f {
                    Failure::Json(_, false) => "outside traceEvents",
                    _ => "in traceEvents",
                };
                let at = format!("{place}, line {} column {}", e.line(), e.column());
                if e.is_eof() {
                    format!("{shown} ends early ({at}): the trace is cut short; copy it again whole")
                } else if e.is_syntax() {
                    format!("{shown} is not valid JSON ({at})")
                } else {
                    let what = e.to_string();
                    let what = what.split(" at line").next().unwrap_or(&what);
                    format!("{shown} is not a trace ({at}): {what}")
                }
            }
        }
    };
    ImportError::new(message)
}

/// A byte count for messages: "1 GiB", "512 MiB", "300 B".
pub fn bytes(n: u64) -> String {
    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;
    if n >= GIB && n.is_multiple_of(GIB) {
        format!("{} GiB", n / GIB)
    } else if n >= GIB {
        format!("{:.1} GiB", n as f64 / GIB as f64)
    } else if n >= MIB {
        format!("{:.0} MiB", n as f64 / MIB as f64)
    } else {
        format!("{n} B")
    }
}
