//! The sweep view's curves in the page, computed in a worker of their own.
//!
//! A sweep runs one point at a time, so that points arrive as they are
//! simulated and a newer sweep (another field, other values, an edited
//! scenario) supersedes an older one at once: the older one's next point
//! is never asked for, and a reply of its generation is dropped. The
//! bus-bandwidth view's curves, one per collective, come from the same
//! worker, and newer hardware supersedes them the same way.
//!
//! As [`crate::machine`], this holds no timer and no worker:
//! [`SweepSession`] takes [`SweepEvent`]s and returns the [`SweepAction`]s
//! the page performs ([`Machine`]).

use overlap_core::scenario::{CollectiveOp, HardwareInput};
use overlap_core::sweep::{BusPoint, Row};
use overlap_core::ScenarioInput;
use serde_json::Value;

use crate::job::{Heard, Machine};
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

/// A collective's bus-bandwidth curve, once it came: its points, or why
/// it could not be simulated.
pub type BusCurve = Option<Result<Vec<BusPoint>, String>>;

/// What happened to the sweep view's curves.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepEvent {
    /// Sweep `field` (a dotted path) over `values`, the other fields from
    /// `input`: supersedes any sweep.
    Sweep {
        input: Box<ScenarioInput>,
        field: String,
        values: Vec<Value>,
    },
    /// The bus-bandwidth curves of every collective over `hardware`:
    /// supersede any asked for before.
    Bus { hardware: Box<HardwareInput> },
    /// A sweep's point came: its row, and the core's time for it, ms.
    Point {
        gen: u64,
        index: u32,
        row: Row,
        sim_ms: f64,
    },
    /// A collective's bus curve came.
    BusCurve {
        gen: u64,
        collective: CollectiveOp,
        points: Result<Vec<BusPoint>, String>,
    },
    /// Both views closed: their worker goes, and the memory it grew.
    Close,
    /// The worker could not be started, did not take a request, panicked
    /// or stopped: the page's sentence saying so.
    Failed(String),
}

/// What the page does, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepAction {
    /// Post this request to the curves' worker (started if there is none).
    Post(Box<WorkerRequest>),
    /// Terminate the worker: the next request starts a new one.
    Terminate,
    /// Draw the curves again now: a new sweep or bus view began.
    Redraw,
    /// Draw the curves again within about a frame: replies that come
    /// before then share one redraw.
    RedrawSoon,
    /// Say this problem beside the curves.
    Problem(String),
}

/// The page's sweeps and bus curves: the newest wins.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSession {
    gen: u64,
    run: Option<SweepRun>,
    /// The generation of the bus curves asked for last.
    bus_gen: u64,
    /// Per collective of `CollectiveOp::ALL`, its curve once it came.
    bus: Vec<BusCurve>,
}

impl Default for SweepSession {
    fn default() -> Self {
        Self {
            gen: 0,
            run: None,
            bus_gen: 0,
            bus: vec![None; CollectiveOp::ALL.len()],
        }
    }
}

impl SweepSession {
    /// The sweep being run or last run.
    pub fn run(&self) -> Option<&SweepRun> {
        self.run.as_ref()
    }

    /// The bus curves, in the order of `CollectiveOp::ALL`.
    pub fn bus(&self) -> &[BusCurve] {
        &self.bus
    }

    /// Asks for the bus curves of every collective over `hardware`,
    /// superseding those asked for before: the requests to post.
    fn bus_curves(&mut self, hardware: &HardwareInput) -> Vec<WorkerRequest> {
        self.gen += 1;
        self.bus_gen = self.gen;
        self.bus = vec![None; CollectiveOp::ALL.len()];
        CollectiveOp::ALL
            .iter()
            .map(|&collective| WorkerRequest::BusCurve {
                gen: self.gen,
                hardware: hardware.clone(),
                collective,
            })
            .collect()
    }

    /// Keeps a bus curve of the newest request.
    fn bus_curve(
        &mut self,
        gen: u64,
        collective: CollectiveOp,
        points: Result<Vec<BusPoint>, String>,
    ) {
        if gen != self.bus_gen {
            return;
        }
        if let Some(i) = CollectiveOp::ALL.iter().position(|c| *c == collective) {
            self.bus[i] = Some(points);
        }
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
        self.point(now_ms, *gen, *index, row, *sim_ms)
    }

    /// Keeps a point of the current sweep: the request for the next point
    /// not yet asked for, if any.
    fn point(
        &mut self,
        now_ms: f64,
        gen: u64,
        index: u32,
        row: &Row,
        sim_ms: f64,
    ) -> Option<WorkerRequest> {
        let run = self.run.as_mut().filter(|r| r.gen == gen)?;
        let slot = run.rows.get_mut(index as usize)?;
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

impl Machine for SweepSession {
    type Event = SweepEvent;
    type Action = SweepAction;
    type Context = ();

    fn handle(&mut self, now_ms: f64, event: SweepEvent) -> Vec<SweepAction> {
        let post = |r: WorkerRequest| SweepAction::Post(Box::new(r));
        match event {
            SweepEvent::Sweep {
                input,
                field,
                values,
            } => {
                let mut out: Vec<SweepAction> = self
                    .start(now_ms, *input, &field, values)
                    .into_iter()
                    .map(post)
                    .collect();
                out.push(SweepAction::Redraw);
                out
            }
            SweepEvent::Bus { hardware } => {
                let mut out: Vec<SweepAction> =
                    self.bus_curves(&hardware).into_iter().map(post).collect();
                out.push(SweepAction::Redraw);
                out
            }
            SweepEvent::Point {
                gen,
                index,
                row,
                sim_ms,
            } => {
                let next = self.point(now_ms, gen, index, &row, sim_ms);
                let mut out: Vec<SweepAction> = next.into_iter().map(post).collect();
                out.push(SweepAction::RedrawSoon);
                out
            }
            SweepEvent::BusCurve {
                gen,
                collective,
                points,
            } => {
                self.bus_curve(gen, collective, points);
                vec![SweepAction::RedrawSoon]
            }
            SweepEvent::Close => vec![SweepAction::Terminate],
            SweepEvent::Failed(why) => vec![SweepAction::Terminate, SweepAction::Problem(why)],
        }
    }

    fn heard(heard: Heard<'_>, (): ()) -> Vec<SweepEvent> {
        let event = match heard {
            Heard::SpawnFailed(why) => {
                SweepEvent::Failed(format!("The sweep could not start a worker: {why}"))
            }
            Heard::PostFailed => {
                SweepEvent::Failed("The sweep's worker did not accept a request.".to_string())
            }
            Heard::Reply(reply) => match reply {
                WorkerReply::SweepPoint {
                    gen,
                    index,
                    row,
                    sim_ms,
                } => SweepEvent::Point {
                    gen: *gen,
                    index: *index,
                    row: row.clone(),
                    sim_ms: *sim_ms,
                },
                WorkerReply::BusCurve {
                    gen,
                    collective,
                    points,
                } => SweepEvent::BusCurve {
                    gen: *gen,
                    collective: *collective,
                    points: points.clone(),
                },
                WorkerReply::Panic { message } | WorkerReply::Crashed { message } => {
                    SweepEvent::Failed(format!("The sweep's worker stopped: {message}"))
                }
                // Ready: what was posted before it is posted by the page's
                // side of the worker, which queued it.
                _ => return Vec::new(),
            },
        };
        vec![event]
    }

    fn busy(&self) -> bool {
        self.run.as_ref().is_some_and(|r| !r.done())
            || (self.bus_gen > 0 && self.bus.iter().any(Option::is_none))
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
