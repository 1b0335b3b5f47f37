//! The engine's events: what each entity's pending event stands for, and
//! the heap entry (time, push order, entity in 16 bytes).

/// What an entity's pending event stands for; kept beside the entity (the
/// heap entry carries only time, order and entity).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Kind {
    /// No event pending.
    None,
    /// Latency paid: the bytes start moving.
    LatencyDone,
    /// Compute finished, or the last byte arrived.
    Done,
    /// The last op of a compute run (`compute_run`) finished; the entity is
    /// the run's first op.
    RunDone,
    /// A collective timed alone on its links, from its start, ended (see
    /// `Engine::pay_latency`).
    AloneDone,
    /// A collective that lost the SM race to a GEMM's first wave starts
    /// (`race`).
    RaceLost,
}

/// A heap entry in 16 bytes: the time's bit pattern (a non-negative f64
/// orders like the number), then the sequence number of its push, then the
/// entity (a task below the task count, else a flow class at task count +
/// class). Ordered by that one number: by time, then by push order, so equal
/// times break the same way on every run. The sequence number also tells a
/// live entry from a superseded one: only the entity's latest push is live.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Event(u128);

impl Event {
    pub(super) fn new(time_bits: u64, seq: u32, entity: u32) -> Self {
        Self(u128::from(time_bits) << 64 | u128::from(seq) << 32 | u128::from(entity))
    }

    pub(super) fn time_bits(self) -> u64 {
        (self.0 >> 64) as u64
    }

    pub(super) fn time_s(self) -> f64 {
        f64::from_bits(self.time_bits())
    }

    pub(super) fn seq(self) -> u32 {
        (self.0 >> 32) as u32
    }

    pub(super) fn entity(self) -> u32 {
        self.0 as u32
    }
}
