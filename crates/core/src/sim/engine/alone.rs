//! Collectives timed alone: a collective that meets nothing on its links
//! is timed from its start with one event, and settled into the network
//! when something joins its links first (`Engine::pay_latency`).

use super::{Engine, Kind, NOT_PLANNED};
use crate::sim::bandwidth_model::BandwidthModel;
use crate::workload::graph::task::TaskId;

impl<N: BandwidthModel> Engine<'_, N> {
    /// Collective `t` pays its latency until `latency_end_s`, then moves
    /// its bytes. When nothing moves on its links and none other is timed
    /// alone there, it is timed alone from now: one event at its end, at
    /// the time the network would give it (`latency_end_s` plus its bytes
    /// at its bottleneck rate, the same sum). Whatever joins its links
    /// before then settles it first (`settle_alone`), as if it had joined
    /// the network at `latency_end_s`. Most collectives of a large step
    /// meet nothing on their links: this spares each of them an event and
    /// two rate changes.
    /// Returns the end it is timed alone to, if it is.
    pub(super) fn pay_latency(&mut self, t: TaskId, latency_end_s: f64) -> Option<f64> {
        let task = &self.g.tasks[t as usize];
        if task.work > 0.0 {
            if let Some(rate) = self.net.reserve_alone(t, task.pattern) {
                let end_s = latency_end_s + task.work / rate;
                self.push(end_s, t, Kind::AloneDone);
                return Some(end_s);
            }
        }
        self.push(latency_end_s, t, Kind::LatencyDone);
        None
    }

    /// The GPU's collective timed alone is no longer its only one, or no
    /// longer timed alone: its end no longer tells when the GPU's op speeds
    /// up, so an op planned past it (`begin_compute_phase`) is planned again
    /// as op by op, at the speed it began with.
    pub(super) fn forget_sole_alone(&mut self, gpu: u32) {
        let st = &mut self.gpu[gpu as usize];
        st.sole_alone = None;
        let op = std::mem::replace(&mut st.planned_past_alone, NOT_PLANNED).0;
        if st.running == Some(op) {
            let end_s = st.last_update + st.remaining / st.speed;
            self.push(end_s, op, Kind::Done);
        }
    }

    /// When started collective `t`'s latency ends: the sum `start` made.
    fn latency_end_s(&self, t: TaskId) -> f64 {
        self.res.start_s[t as usize] + self.g.tasks[t as usize].latency_s()
    }

    /// Collective `t`, timed alone since its start, meets a flow joining
    /// its links now: it becomes what the network would have made of it.
    /// Still paying its latency, it joins when that ends; already moving,
    /// it joins as of its latency's end, alone on its links until now.
    pub(super) fn settle_alone(&mut self, t: TaskId) {
        let g = self.g;
        let task = &g.tasks[t as usize];
        self.net.release(task.pattern);
        self.cancel(t);
        for &m in g.members_of(t) {
            if self.gpu[m as usize]
                .sole_alone
                .is_some_and(|(alone, _)| alone == t)
            {
                self.forget_sole_alone(m);
            }
        }
        let latency_end_s = self.latency_end_s(t);
        if self.now <= latency_end_s {
            self.push(latency_end_s, t, Kind::LatencyDone);
        } else {
            let now = std::mem::replace(&mut self.now, latency_end_s);
            self.begin_transfer(t);
            self.now = now;
        }
    }

    /// Collective `t`, timed alone since its start, ended now.
    pub(super) fn finish_alone(&mut self, t: TaskId) {
        let g = self.g;
        let task = &g.tasks[t as usize];
        self.net.release(task.pattern);
        if self.record {
            let span = (self.latency_end_s(t), self.now);
            self.net
                .observe_alone(task.pattern, task.axis, span, &mut self.links);
        }
        self.complete_off_network(t);
    }
}
