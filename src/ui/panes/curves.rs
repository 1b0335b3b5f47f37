//! The job of the sweep and bus-bandwidth panes: their curves, computed in
//! one worker of their own, point by point, as
//! `overlap_session::SweepSession` decides (the newest sweep or hardware
//! wins), driven as every job is (`client::job`). Closing both panes lets
//! the worker go, with the memory it grew.

use std::cell::{Ref, RefCell};
use std::rc::{Rc, Weak};

use leptos::prelude::*;
use overlap_core::scenario::HardwareInput;
use overlap_core::ScenarioInput;
use overlap_session::{SweepAction, SweepEvent, SweepSession};
use serde_json::Value;

use crate::client::job::{self, Host};
use crate::client::worker_client::{Received, WorkerClient};

/// How long replies are gathered into one redraw, ms: about a frame. One
/// redraw per reply held the main thread for most of a 32-point curve
/// (bench-page's sweep section: 244 ms for 44 ms of the worker's time).
const REDRAW_MS: u32 = 16;

/// A sweep as the page asked for it: the field, the values as the link
/// wrote them, and the scenario with the swept field cleared (a point
/// loaded changes only the swept field, which needs no new sweep).
pub type SweepKey = (String, Option<String>, ScenarioInput);

/// The curves' job.
pub struct Curves {
    me: Weak<Curves>,
    session: RefCell<SweepSession>,
    client: WorkerClient,
    /// Bumped when the curves are to be drawn again.
    pub version: RwSignal<u64>,
    /// Why the curves cannot be drawn, if something stops them.
    pub problem: RwSignal<Option<String>>,
    /// The GPUs the bus curves are measured on, as the reader chose
    /// (`None`: the scenario's first group, `bus_group::first`).
    pub bus_group: RwSignal<Option<overlap_view::bus_group::BusGroup>>,
    asked: RefCell<Asked>,
}

/// What the panes asked for last, and a redraw on its way.
#[derive(Default)]
struct Asked {
    sweep: Option<SweepKey>,
    bus: Option<HardwareInput>,
    /// A redraw is scheduled: replies that come before it share it.
    redraw_pending: bool,
}

impl Curves {
    /// The job, with no worker until the first curve is asked for.
    pub fn new() -> Rc<Curves> {
        Rc::new_cyclic(|me| Curves {
            me: me.clone(),
            session: RefCell::default(),
            client: job::client_for(me.clone()),
            version: RwSignal::new(0),
            problem: RwSignal::new(None),
            bus_group: RwSignal::new(None),
            asked: RefCell::default(),
        })
    }

    /// The sweeps and bus curves so far.
    pub fn session(&self) -> Ref<'_, SweepSession> {
        self.session.borrow()
    }

    /// Whether `key` is the sweep asked for last (and not closed since).
    pub fn has_sweep(&self, key: &SweepKey) -> bool {
        self.asked.borrow().sweep.as_ref() == Some(key)
    }

    /// Sweeps `field` over `values`, the other fields from `input`: the
    /// sweep `key` names.
    pub fn sweep(&self, key: SweepKey, input: ScenarioInput, field: &str, values: Vec<Value>) {
        self.asked.borrow_mut().sweep = Some(key);
        job::feed(
            self,
            SweepEvent::Sweep {
                input: Box::new(input),
                field: field.to_string(),
                values,
            },
            None,
        );
    }

    /// The bus curves of `hardware`, unless they are the ones asked for last.
    pub fn bus(&self, hardware: &HardwareInput) {
        if self.asked.borrow().bus.as_ref() == Some(hardware) {
            return;
        }
        self.asked.borrow_mut().bus = Some(hardware.clone());
        let hardware = Box::new(hardware.clone());
        job::feed(self, SweepEvent::Bus { hardware }, None);
    }

    /// Both panes closed: the worker goes; reopening starts afresh.
    pub fn close(&self) {
        {
            let mut asked = self.asked.borrow_mut();
            asked.sweep = None;
            asked.bus = None;
        }
        job::feed(self, SweepEvent::Close, None);
    }

    /// Redraws once, a frame from now, for every reply until then.
    fn redraw_soon(&self) {
        let mut asked = self.asked.borrow_mut();
        if asked.redraw_pending {
            return;
        }
        asked.redraw_pending = true;
        let me = self.me.clone();
        gloo_timers::callback::Timeout::new(REDRAW_MS, move || {
            if let Some(me) = me.upgrade() {
                me.asked.borrow_mut().redraw_pending = false;
                me.version.update(|v| *v += 1);
            }
        })
        .forget();
    }
}

impl Host for Curves {
    type Machine = SweepSession;

    fn machine(&self) -> &RefCell<SweepSession> {
        &self.session
    }

    fn client(&self) -> &WorkerClient {
        &self.client
    }

    fn context(&self) {}

    fn perform(&self, action: SweepAction, _received: Option<&Received>) {
        match action {
            SweepAction::Post(request) => {
                job::post(self, &request);
            }
            SweepAction::Terminate => self.client.terminate(),
            SweepAction::Redraw => self.version.update(|v| *v += 1),
            SweepAction::RedrawSoon => self.redraw_soon(),
            SweepAction::Problem(text) => self.problem.set(Some(text)),
        }
    }
}
