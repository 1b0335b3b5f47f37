//! The SM race (`sim::sm_race`) in the fast engine: a collective that may
//! lose it is held to the end of the instant it becomes ready, then starts
//! at once or when the first wave of a GEMM its members started at that
//! instant drains.

use super::{Engine, Kind, NO_RUN};
use crate::sim::bandwidth_model::BandwidthModel;
use crate::sim::sm_race;
use crate::workload::graph::task::TaskId;

impl<N: BandwidthModel> Engine<'_, N> {
    /// Task `t` is ready now: it starts, unless it is a collective that may
    /// lose the SM race, which waits for the end of the instant.
    pub(super) fn start(&mut self, t: TaskId) {
        if sm_race::may_lose(self.g, self.sharing, &self.streams, t) {
            self.racing.push(t);
        } else {
            self.start_now(t);
        }
    }

    /// Every event of the instant is processed: each collective held to its
    /// end starts now, or is planned to start when the first wave it lost
    /// to drains.
    pub(super) fn settle_races(&mut self) {
        let mut racing = std::mem::take(&mut self.racing);
        // Starting one may make others ready (`start`), which join the list.
        while !racing.is_empty() {
            for t in racing.drain(..) {
                let now = self.now;
                let at = sm_race::start_s(self.g, self.sharing, t, now, |m| self.started_now(m));
                if at > now {
                    self.push(at, t, Kind::RaceLost);
                } else {
                    self.start_now(t);
                }
            }
            std::mem::swap(&mut racing, &mut self.racing);
        }
        self.racing = racing;
    }

    /// The compute op of `gpu` that started at this instant, if one did:
    /// the op running, or the op of its compute run that began now.
    fn started_now(&self, gpu: u32) -> Option<TaskId> {
        let st = &self.gpu[gpu as usize];
        let now = self.now;
        if st.run_head == NO_RUN {
            return st.running.filter(|&k| self.res.start_s[k as usize] == now);
        }
        let mut start_s = self.res.start_s[st.run_head as usize];
        for op in &st.run {
            let end_s = op.end_s();
            if start_s == now && end_s > now {
                return Some(op.task());
            }
            if start_s > now {
                break;
            }
            start_s = end_s;
        }
        None
    }
}
