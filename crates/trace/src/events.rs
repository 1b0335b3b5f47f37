//! The JSON of a trace as the reader visits it: each event read into the
//! few fields kept ([`Event`]), every other field skipped as it is read,
//! and the document's `distributedInfo` and `deviceProperties`. A field of
//! an unexpected shape is passed over (read as absent), never refused: a
//! trace from another tool may carry one.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::classify::parse_ranks;
use crate::event::{whole, Args, Event};
use crate::sink::Sink;

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

/// An object's visitor: an array or a scalar where the object was
/// expected reads as `None`, its contents skipped.
macro_rules! others_read_as_none {
    () => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
            while s.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        scalars_read_as_none!();
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
    "In msg nelems",
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
                Some(7) => a.msg_nelems = whole(m.next_value_seed(Loose(LooseNum))?),
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(a))
    }
    others_read_as_none!();
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
    others_read_as_none!();
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
pub(crate) struct EventsSeed<'s>(pub(crate) &'s mut Sink);
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

/// For a visitor that hands what it reads to the sink: any JSON scalar is
/// passed over (a field of the wrong shape, never refused).
macro_rules! scalars_ignored {
    () => {
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
    };
}

/// `distributedInfo`: the rank, the world size and the process groups
/// (`pg_config`).
struct DistSeed<'s>(&'s mut Sink);
sink_seed!(DistSeed, deserialize_any);
impl<'de> Visitor<'de> for DistSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("distributedInfo as an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        while let Some(key) = m.next_key_seed(KeyOf(&["rank", "world_size", "pg_config"]))? {
            match key {
                Some(0) => self.0.rank = whole(m.next_value_seed(Loose(LooseNum))?),
                Some(1) => self.0.world_size = whole(m.next_value_seed(Loose(LooseNum))?),
                Some(2) => m.next_value_seed(PgConfigSeed(self.0))?,
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
    scalars_ignored!();
}

/// `distributedInfo.pg_config`: PyTorch's list of the job's process groups
/// (`pg_name`, `pg_desc`, `ranks`), each kept as a group.
struct PgConfigSeed<'s>(&'s mut Sink);
impl<'de> DeserializeSeed<'de> for PgConfigSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}
impl<'de> Visitor<'de> for PgConfigSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of process groups")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        while let Some(g) = s.next_element_seed(Loose(PgSeed))? {
            if let Some(args) = g {
                self.0.config_group(args).map_err(de::Error::custom)?;
            }
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
    scalars_ignored!();
}

/// One entry of `pg_config`, read as the process-group fields of `args`.
struct PgSeed;
impl<'de> Visitor<'de> for PgSeed {
    type Value = Option<Args>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a process group")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut a = Args::default();
        while let Some(key) = m.next_key_seed(KeyOf(&["pg_name", "pg_desc", "ranks"]))? {
            match key {
                Some(0) => a.pg_name = m.next_value_seed(Loose(LooseName))?,
                Some(1) => a.pg_desc = m.next_value_seed(Loose(LooseStr))?,
                Some(2) => a.pg_ranks = m.next_value_seed(Loose(LooseRanks))?,
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(a))
    }
    others_read_as_none!();
}

/// A name written as a string or a number (`"pg_name": "0"` or `0`).
struct LooseName;
impl<'de> Visitor<'de> for LooseName {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    drain_compound!();
}

/// `deviceProperties`: how many devices it lists, and the first one's name
/// (the GPU a scenario is proposed for).
struct DevicesSeed;
impl<'de> Visitor<'de> for DevicesSeed {
    type Value = Option<(u64, Option<String>)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
        let mut n = 0;
        let mut name = None;
        while let Some(device) = s.next_element_seed(Loose(DeviceSeed))? {
            if n == 0 {
                name = device;
            }
            n += 1;
        }
        Ok(Some((n, name)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    scalars_read_as_none!();
}

/// One device of `deviceProperties`: its `name`.
struct DeviceSeed;
impl<'de> Visitor<'de> for DeviceSeed {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a device")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut name = None;
        while let Some(key) = m.next_key_seed(KeyOf(&["name"]))? {
            match key {
                Some(0) => name = m.next_value_seed(Loose(LooseStr))?,
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(name)
    }
    others_read_as_none!();
}

/// The whole document: an object with `traceEvents` (Kineto, Chrome's
/// object format) or a bare array of events (Chrome's array format).
pub(crate) struct RootSeed<'s>(pub(crate) &'s mut Sink);
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
                Some(2) => {
                    if let Some((n, name)) = m.next_value_seed(Loose(DevicesSeed))? {
                        self.0.devices_listed = Some(n);
                        self.0.device_name = name;
                    }
                }
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
