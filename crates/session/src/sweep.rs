//! A sweep's run in the page: one point at a time to a worker of its own,
//! so that points arrive as they are simulated and a newer sweep (another
//! field, other values, an edited scenario) supersedes an older one at
//! once: the older one's next point is never asked for, and a reply of
//! its generation is dropped.

use overlap_core::sweep::Row;
use overlap_core::ScenarioInput;
use serde_json::Value;

use crate::messages::{WorkerReply, WorkerRequest};

/// Points asked for ahead of the replies: the worker always has the next
/// one waiting while the page takes in a reply (one at a time, the worker
/// stood idle for each round trip: on didactic 246 ms for a curve it
/// computed in 46, bench-page's sweep section), and a superseded sweep
/// costs the worker at most this many points.
pub const IN_FLIGHT: usize = 4;

/// The sweep being run or last run.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRun {
    /// Its generation: replies of another are an older sweep's.
    pub gen: u64,
    /// The scenario its other fields come from.
    pub input: ScenarioInput,
    /// The field's dotted path.
    pub field: String,
    /// The values, in the order drawn.
    pub values: Vec<Value>,
    /// Each value's row once it came.
    pub rows: Vec<Option<Row>>,
    /// When it was asked for (ms since the epoch, the page's clock).
    pub started_ms: f64,
    /// When its first point came.
    pub first_ms: Option<f64>,
    /// When its last point came.
    pub done_ms: Option<f64>,
    /// The workers' time for its points, ms.
    pub sim_ms: f64,
    /// How many points have been asked for.
    sent: usize,
}

impl SweepRun {
    /// Whether every point has come.
    pub fn done(&self) -> bool {
        self.done_ms.is_some()
    }

    /// How many points have come.
    pub fn arrived(&self) -> usize {
        self.rows.iter().filter(|r| r.is_some()).count()
    }

    fn request(&self, index: usize) -> WorkerRequest {
        WorkerRequest::SweepPoint {
            gen: self.gen,
            input: self.input.clone(),
            field: self.field.clone(),
            value: self.values[index].clone(),
            index: index as u32,
        }
    }
}

/// The page's sweeps: the newest wins.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepSession {
    gen: u64,
    run: Option<SweepRun>,
}

impl SweepSession {
    /// The sweep being run or last run.
    pub fn run(&self) -> Option<&SweepRun> {
        self.run.as_ref()
    }

    /// Starts a sweep, superseding any other: the requests for its first
    /// points to post, at most [`IN_FLIGHT`] (none for an empty list).
    pub fn start(
        &mut self,
        now_ms: f64,
        input: ScenarioInput,
        field: &str,
        values: Vec<Value>,
    ) -> Vec<WorkerRequest> {
        self.gen += 1;
        let run = SweepRun {
            gen: self.gen,
            input,
            field: field.to_string(),
            rows: vec![None; values.len()],
            done_ms: values.is_empty().then_some(now_ms),
            values,
            started_ms: now_ms,
            first_ms: None,
            sim_ms: 0.0,
            sent: 0,
        };
        let first: Vec<WorkerRequest> = (0..run.values.len().min(IN_FLIGHT))
            .map(|i| run.request(i))
            .collect();
        self.run = Some(run);
        if let Some(r) = self.run.as_mut() {
            r.sent = first.len();
        }
        first
    }

    /// Takes a worker's reply: a point of the current sweep is kept and the
    /// request for the next point not yet asked for returned; anything else
    /// (an older sweep's point, another reply) changes nothing and asks for
    /// nothing.
    pub fn reply(&mut self, now_ms: f64, reply: &WorkerReply) -> Option<WorkerRequest> {
        let WorkerReply::SweepPoint {
            gen,
            index,
            row,
            sim_ms,
        } = reply
        else {
            return None;
        };
        let run = self.run.as_mut().filter(|r| r.gen == *gen)?;
        let slot = run.rows.get_mut(*index as usize)?;
        if slot.is_some() {
            return None;
        }
        *slot = Some(row.clone());
        run.sim_ms += sim_ms;
        run.first_ms.get_or_insert(now_ms);
        if run.rows.iter().all(Option::is_some) {
            run.done_ms = Some(now_ms);
        }
        let next = run.sent;
        (next < run.values.len()).then(|| {
            run.sent += 1;
            run.request(next)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::sweep::Sweep;

    fn input() -> ScenarioInput {
        overlap_core::presets::find("didactic").unwrap().input()
    }

    /// What the worker answers to a point's request.
    fn answer(request: &WorkerRequest) -> WorkerReply {
        let WorkerRequest::SweepPoint {
            gen,
            input,
            field,
            value,
            index,
        } = request
        else {
            panic!("{request:?}")
        };
        let field = overlap_core::input::fields::find(field).unwrap();
        let row = Sweep::new(input.clone(), field)
            .point(&overlap_core::sweep::Candidate::Value(value.clone()));
        WorkerReply::SweepPoint {
            gen: *gen,
            index: *index,
            row,
            sim_ms: 1.0,
        }
    }

    #[test]
    fn points_come_one_after_another_in_order() {
        let mut s = SweepSession::default();
        let values: Vec<Value> = [1, 2, 4, 8, 16, 32].into_iter().map(Value::from).collect();
        // A queue as the worker has it: requests answered first come, first served.
        let mut queue: std::collections::VecDeque<WorkerRequest> =
            s.start(0.0, input(), "overlap.tp_chunks", values).into();
        assert_eq!(queue.len(), IN_FLIGHT);
        let mut t = 1.0;
        let mut most_in_flight = 0;
        while let Some(r) = queue.pop_front() {
            let reply = answer(&r);
            // Through the wire's JSON, as the page reads it.
            let reply = crate::messages::from_json(&crate::messages::to_json(&reply)).unwrap();
            queue.extend(s.reply(t, &reply));
            most_in_flight = most_in_flight.max(queue.len());
            t += 1.0;
        }
        assert!(most_in_flight <= IN_FLIGHT);
        let run = s.run().unwrap();
        assert!(run.done());
        assert_eq!(run.arrived(), 6);
        assert_eq!((run.first_ms, run.done_ms), (Some(1.0), Some(6.0)));
        assert!(run
            .rows
            .iter()
            .all(|r| r.as_ref().unwrap().point().is_some()));
    }

    #[test]
    fn a_newer_sweep_supersedes_an_older_one() {
        let mut s = SweepSession::default();
        let old = s.start(0.0, input(), "overlap.tp_chunks", vec![1.into(), 2.into()]);
        let new = s.start(5.0, input(), "parallel.schedule", vec!["gpipe".into()]);
        let (old, new) = (old[0].clone(), new[0].clone());
        // The older sweep's point comes late: dropped, and nothing more asked.
        assert_eq!(s.reply(6.0, &answer(&old)), None);
        assert_eq!(s.run().unwrap().arrived(), 0);
        assert_eq!(s.reply(7.0, &answer(&new)), None);
        let run = s.run().unwrap();
        assert_eq!(run.field, "parallel.schedule");
        assert!(run.done() && run.arrived() == 1);
        // A repeated point is not counted twice.
        assert_eq!(s.reply(8.0, &answer(&new)), None);
        assert_eq!(s.run().unwrap().arrived(), 1);
        // Other replies ask for nothing.
        assert_eq!(s.reply(9.0, &WorkerReply::Ready), None);
    }
}
