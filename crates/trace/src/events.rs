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

/// One JSON value as the loose readers below see it: a string, a number
/// of the kind serde_json read it as, or anything else (a boolean, null,
/// or an array or object, its contents skipped).
enum Json<'a> {
    Str(&'a str),
    I64(i64),
    U64(u64),
    F64(f64),
    Other,
}

/// A value read loosely: what cannot be the expected kind is read as
/// `None` rather than failing the file. One visitor ([`Scalar`]) serves
/// every such reader, so each says only what each kind of value reads as.
trait Loosely {
    type Value;
    const EXPECTING: &'static str;
    fn read(v: Json<'_>) -> Self::Value;
}

/// A [`Loosely`] reader as the seed and visitor of whatever value comes.
struct Scalar<R>(R);
impl<'de, R: Loosely> DeserializeSeed<'de> for Scalar<R> {
    type Value = R::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<R::Value, D::Error> {
        d.deserialize_any(self)
    }
}
impl<'de, R: Loosely> Visitor<'de> for Scalar<R> {
    type Value = R::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(R::EXPECTING)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<R::Value, E> {
        Ok(R::read(Json::Str(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<R::Value, E> {
        Ok(R::read(Json::I64(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<R::Value, E> {
        Ok(R::read(Json::U64(v)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<R::Value, E> {
        Ok(R::read(Json::F64(v)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<R::Value, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(R::read(Json::Other))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<R::Value, A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(R::read(Json::Other))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<R::Value, E> {
        Ok(R::read(Json::Other))
    }
    fn visit_unit<E: de::Error>(self) -> Result<R::Value, E> {
        Ok(R::read(Json::Other))
    }
}

struct LooseStr;
impl Loosely for LooseStr {
    type Value = Option<String>;
    const EXPECTING: &'static str = "a string";
    fn read(v: Json<'_>) -> Option<String> {
        match v {
            Json::Str(s) => Some(s.to_string()),
            _ => None,
        }
    }
}

struct LooseNum;
impl Loosely for LooseNum {
    type Value = Option<f64>;
    const EXPECTING: &'static str = "a number";
    fn read(v: Json<'_>) -> Option<f64> {
        match v {
            Json::Str(s) => s.trim().parse::<f64>().ok(),
            Json::I64(n) => Some(n as f64),
            Json::U64(n) => Some(n as f64),
            Json::F64(n) => Some(n),
            Json::Other => None,
        }
    }
}

/// A time stamp, and whether pandas would read it into a fractional column
/// (a JSON number with a fraction or exponent, or anything but a number).
struct TimeNum;
impl Loosely for TimeNum {
    type Value = (Option<f64>, bool);
    const EXPECTING: &'static str = "a number";
    fn read(v: Json<'_>) -> (Option<f64>, bool) {
        let integral = matches!(v, Json::I64(_) | Json::U64(_));
        (LooseNum::read(v), !integral)
    }
}

struct LooseId;
impl Loosely for LooseId {
    type Value = Option<i64>;
    const EXPECTING: &'static str = "an id";
    fn read(v: Json<'_>) -> Option<i64> {
        match v {
            Json::Str(s) => Some(s.trim().parse::<i64>().unwrap_or_else(|_| hash_str(s))),
            Json::I64(n) => Some(n),
            Json::U64(n) => Some(n as i64),
            Json::F64(n) => (n.is_finite() && n.fract() == 0.0).then_some(n as i64),
            Json::Other => None,
        }
    }
}

/// A name written as a string or a number (`"pg_name": "0"` or `0`).
struct LooseName;
impl Loosely for LooseName {
    type Value = Option<String>;
    const EXPECTING: &'static str = "a name";
    fn read(v: Json<'_>) -> Option<String> {
        match v {
            Json::Str(s) => Some(s.to_string()),
            Json::I64(n) => Some(n.to_string()),
            Json::U64(n) => Some(n.to_string()),
            Json::F64(_) | Json::Other => None,
        }
    }
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
        while let Some(v) = s.next_element_seed(Scalar(LooseNum))? {
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

/// Reads an object's fields among `keys`, each by `read` with its index in
/// `keys`; any other field is skipped as it is read. `read` must read the
/// field's value whatever its index.
fn each_field<'de, A: MapAccess<'de>>(
    m: &mut A,
    keys: &'static [&'static str],
    mut read: impl FnMut(usize, &mut A) -> Result<(), A::Error>,
) -> Result<(), A::Error> {
    while let Some(key) = m.next_key_seed(KeyOf(keys))? {
        match key {
            Some(i) => read(i, m)?,
            None => {
                m.next_value::<IgnoredAny>()?;
            }
        }
    }
    Ok(())
}

/// An object read loosely into a value: its fields among `KEYS`, each read
/// by `field` with its index in `KEYS`, any other skipped. One visitor
/// ([`Object`]) serves every such object, so each says only its fields.
trait Fields {
    type Value: Default;
    const EXPECTING: &'static str;
    const KEYS: &'static [&'static str];
    fn field<'de, A: MapAccess<'de>>(
        v: &mut Self::Value,
        key: usize,
        m: &mut A,
    ) -> Result<(), A::Error>;
}

/// A [`Fields`] reader as a visitor: an array or a scalar where the object
/// was expected reads as `None`, its contents skipped.
struct Object<F>(F);
impl<'de, F: Fields> Visitor<'de> for Object<F> {
    type Value = Option<F::Value>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(F::EXPECTING)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut v = F::Value::default();
        each_field(&mut m, F::KEYS, |key, m| F::field(&mut v, key, m))?;
        Ok(Some(v))
    }
    others_read_as_none!();
}

/// An event's `args`.
struct ArgsFields;
impl Fields for ArgsFields {
    type Value = Args;
    const EXPECTING: &'static str = "an object";
    const KEYS: &'static [&'static str] = &[
        "stream",
        "device",
        "correlation",
        "Collective name",
        "Process Group Ranks",
        "Process Group Name",
        "Process Group Description",
        "In msg nelems",
    ];
    fn field<'de, A: MapAccess<'de>>(a: &mut Args, key: usize, m: &mut A) -> Result<(), A::Error> {
        match key {
            0 => a.stream = m.next_value_seed(Scalar(LooseId))?,
            1 => a.device = m.next_value_seed(Scalar(LooseId))?,
            2 => a.correlation = m.next_value_seed(Scalar(LooseId))?,
            3 => a.collective = m.next_value_seed(Scalar(LooseStr))?,
            4 => a.pg_ranks = m.next_value_seed(Loose(LooseRanks))?,
            5 => a.pg_name = m.next_value_seed(Scalar(LooseStr))?,
            6 => a.pg_desc = m.next_value_seed(Scalar(LooseStr))?,
            7 => a.msg_nelems = whole(m.next_value_seed(Scalar(LooseNum))?),
            _ => m.next_value::<IgnoredAny>().map(drop)?,
        }
        Ok(())
    }
}

/// One element of `traceEvents`: an event object, or anything else skipped.
struct EventFields;
impl Fields for EventFields {
    type Value = Event;
    const EXPECTING: &'static str = "an event object";
    const KEYS: &'static [&'static str] = &["ph", "cat", "name", "pid", "tid", "ts", "dur", "args"];
    fn field<'de, A: MapAccess<'de>>(e: &mut Event, key: usize, m: &mut A) -> Result<(), A::Error> {
        match key {
            0 => e.ph = m.next_value_seed(Scalar(LooseStr))?,
            1 => e.cat = m.next_value_seed(Scalar(LooseStr))?,
            2 => e.name = m.next_value_seed(Scalar(LooseStr))?,
            3 => e.pid = m.next_value_seed(Scalar(LooseId))?,
            4 => e.tid = m.next_value_seed(Scalar(LooseId))?,
            5 => {
                let (ts, fraction) = m.next_value_seed(Scalar(TimeNum))?;
                e.ts = ts;
                e.ts_fraction = fraction;
            }
            6 => e.dur = m.next_value_seed(Scalar(LooseNum))?,
            7 => {
                e.args = m
                    .next_value_seed(Loose(Object(ArgsFields)))?
                    .unwrap_or_default()
            }
            _ => m.next_value::<IgnoredAny>().map(drop)?,
        }
        Ok(())
    }
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
        while let Some(e) = s.next_element_seed(Loose(Object(EventFields)))? {
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
        each_field(&mut m, &["rank", "world_size", "pg_config"], |key, m| {
            match key {
                0 => self.0.rank = whole(m.next_value_seed(Scalar(LooseNum))?),
                1 => self.0.world_size = whole(m.next_value_seed(Scalar(LooseNum))?),
                2 => m.next_value_seed(PgConfigSeed(self.0))?,
                _ => m.next_value::<IgnoredAny>().map(drop)?,
            }
            Ok(())
        })
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
sink_seed!(PgConfigSeed, deserialize_any);
impl<'de> Visitor<'de> for PgConfigSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of process groups")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        while let Some(g) = s.next_element_seed(Loose(Object(PgFields)))? {
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
struct PgFields;
impl Fields for PgFields {
    type Value = Args;
    const EXPECTING: &'static str = "a process group";
    const KEYS: &'static [&'static str] = &["pg_name", "pg_desc", "ranks"];
    fn field<'de, A: MapAccess<'de>>(a: &mut Args, key: usize, m: &mut A) -> Result<(), A::Error> {
        match key {
            0 => a.pg_name = m.next_value_seed(Scalar(LooseName))?,
            1 => a.pg_desc = m.next_value_seed(Scalar(LooseStr))?,
            2 => a.pg_ranks = m.next_value_seed(Loose(LooseRanks))?,
            _ => m.next_value::<IgnoredAny>().map(drop)?,
        }
        Ok(())
    }
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
        while let Some(device) = s.next_element_seed(Loose(Object(DeviceFields)))? {
            if n == 0 {
                // A device that is not an object, or has no name, names none.
                name = device.flatten();
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
struct DeviceFields;
impl Fields for DeviceFields {
    type Value = Option<String>;
    const EXPECTING: &'static str = "a device";
    const KEYS: &'static [&'static str] = &["name"];
    fn field<'de, A: MapAccess<'de>>(
        name: &mut Option<String>,
        key: usize,
        m: &mut A,
    ) -> Result<(), A::Error> {
        match key {
            0 => *name = m.next_value_seed(Scalar(LooseStr))?,
            _ => m.next_value::<IgnoredAny>().map(drop)?,
        }
        Ok(())
    }
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
        each_field(&mut m, keys, |key, m| {
            match key {
                0 => m.next_value_seed(EventsSeed(self.0))?,
                1 => m.next_value_seed(DistSeed(self.0))?,
                2 => {
                    if let Some((n, name)) = m.next_value_seed(Loose(DevicesSeed))? {
                        self.0.devices_listed = Some(n);
                        self.0.device_name = name;
                    }
                }
                _ => m.next_value::<IgnoredAny>().map(drop)?,
            }
            Ok(())
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, s: A) -> Result<(), A::Error> {
        EventsSeed(self.0).visit_seq(s)
    }
}
