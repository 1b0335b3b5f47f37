//! One trace event as the import reads it: the fields `events` fills in as
//! it streams the file, and `sink` keeps what the figures need of.

/// The fields of one event that the import reads.
#[derive(Default)]
pub(crate) struct Event {
    pub(crate) ph: Option<String>,
    pub(crate) cat: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) pid: Option<i64>,
    pub(crate) tid: Option<i64>,
    pub(crate) ts: Option<f64>,
    /// `ts` was written as a fraction (or is not a number).
    pub(crate) ts_fraction: bool,
    pub(crate) dur: Option<f64>,
    pub(crate) args: Args,
}

/// The fields of an event's `args` that the import reads.
#[derive(Default)]
pub(crate) struct Args {
    pub(crate) stream: Option<i64>,
    pub(crate) device: Option<i64>,
    pub(crate) correlation: Option<i64>,
    pub(crate) collective: Option<String>,
    pub(crate) pg_ranks: Option<Vec<u64>>,
    pub(crate) pg_name: Option<String>,
    pub(crate) pg_desc: Option<String>,
    /// `In msg nelems`: the collective's size in elements, where PyTorch
    /// records it (a collective is matched across ranks by it when no
    /// process group is stated).
    pub(crate) msg_nelems: Option<u64>,
}

impl Args {
    /// Whether the event states a process group.
    pub(crate) fn has_group(&self) -> bool {
        self.pg_ranks.is_some() || self.pg_name.is_some() || self.pg_desc.is_some()
    }
}

/// A whole number of at most 10^15, or nothing.
pub(crate) fn whole(v: Option<f64>) -> Option<u64> {
    v.filter(|x| *x >= 0.0 && x.fract() == 0.0 && *x < 1e15)
        .map(|x| x as u64)
}
