//! One worker's life, as whoever started it sees it: started when first
//! needed, ready once it says so, what is posted before then queued, and
//! gone once it panics or stops. Every job with a worker of its own (the
//! runner, the importer, the sweep view, an export, and the simulation
//! worker's helper) holds one `WorkerClient` and hears every reply
//! through the one callback it was made with.
//!
//! A worker reads nothing until its handler is installed (`Ready`):
//! `sim-worker.js` drops whatever comes before, so a request posted
//! earlier waits here and goes, in order, once `Ready` comes. A worker
//! that panicked or stopped answers nothing more: it is dropped as its
//! `Panic` or `Crashed` reply is heard (a failure of its script, or a
//! message the page cannot read, is heard as `Crashed`), and the next
//! request starts a new one.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use overlap_session::{WorkerReply, WorkerRequest};

use super::spawn::{self, WorkerHandle};
use super::wire;
use crate::dom;

/// A reply as it came, with when: what a job's actions read (a report,
/// the typed arrays after it, how long it travelled).
pub struct Received {
    pub reply: WorkerReply,
    /// The typed arrays that travelled beside it (`wire::open`).
    pub arrays: js_sys::Array,
    /// When it came, on the page's monotonic clock (`dom::now_ms`).
    pub received_ms: f64,
    /// When it came, ms since the epoch (`dom::epoch_ms`).
    pub received_at: f64,
}

/// Why a request did not reach the worker.
#[derive(Debug)]
pub enum NotSent {
    /// No worker could be started: why.
    Spawn(String),
    /// The worker did not accept the message.
    Post,
}

/// One worker's life; clones share it.
#[derive(Clone)]
pub struct WorkerClient(Rc<Shared>);

struct Shared {
    life: RefCell<Life>,
    on_reply: Box<dyn Fn(Received)>,
}

#[derive(Default)]
struct Life {
    worker: Option<WorkerHandle>,
    /// The worker said `Ready`: its handler reads messages.
    ready: bool,
    /// Messages posted before `Ready`, in order.
    queue: Vec<js_sys::Array>,
}

impl WorkerClient {
    /// A client with no worker yet; `on_reply` hears every reply of
    /// every worker it starts (`Ready`, `Panic` and `Crashed` included),
    /// after the client has taken it in.
    pub fn new(on_reply: impl Fn(Received) + 'static) -> Self {
        Self(Rc::new(Shared {
            life: RefCell::default(),
            on_reply: Box::new(on_reply),
        }))
    }

    /// Starts a new worker, terminating any before it (and dropping what
    /// waited for it).
    pub fn start(&self) -> Result<(), String> {
        self.terminate();
        let weak = Rc::downgrade(&self.0);
        let on_message = {
            let weak = weak.clone();
            move |reply: WorkerReply, arrays: js_sys::Array| heard(&weak, reply, arrays)
        };
        let on_error = move |message: String| {
            heard(
                &weak,
                WorkerReply::Crashed { message },
                js_sys::Array::new(),
            )
        };
        let handle = spawn::spawn(on_message, on_error)?;
        self.0.life.borrow_mut().worker = Some(handle);
        Ok(())
    }

    /// Posts `request`, starting a worker if there is none; a worker
    /// not ready yet gets it once it is.
    pub fn post(&self, request: &WorkerRequest) -> Result<(), NotSent> {
        self.post_envelope(wire::envelope(request, &[]))
    }

    /// Posts `request` with `items` after it in the envelope (the
    /// reader's `File`s for an import: cloned as handles, not read).
    pub fn post_with(&self, request: &WorkerRequest, items: &js_sys::Array) -> Result<(), NotSent> {
        let message = wire::envelope(request, &[]);
        for item in items.iter() {
            message.push(&item);
        }
        self.post_envelope(message)
    }

    fn post_envelope(&self, message: js_sys::Array) -> Result<(), NotSent> {
        if !self.is_running() {
            self.start().map_err(NotSent::Spawn)?;
        }
        let mut life = self.0.life.borrow_mut();
        match (&life.worker, life.ready) {
            (Some(w), true) => w.post(&message).map_err(|_| NotSent::Post),
            _ => {
                life.queue.push(message);
                Ok(())
            }
        }
    }

    /// Terminates the worker, if any: what it was computing is stopped,
    /// and what waited for it dropped.
    pub fn terminate(&self) {
        // Taken out first: the handle goes with nothing of the client
        // borrowed (it may be going from within its own message handler,
        // which wasm-bindgen lets finish).
        let gone = std::mem::take(&mut *self.0.life.borrow_mut());
        drop(gone);
    }

    /// Whether a worker is started (ready or not).
    pub fn is_running(&self) -> bool {
        self.0.life.borrow().worker.is_some()
    }

    /// Whether the worker reads messages.
    pub fn is_ready(&self) -> bool {
        self.0.life.borrow().ready
    }
}

/// A reply of the worker: the client's own part first (ready: post what
/// waited; gone: drop the worker), then the job's.
fn heard(weak: &Weak<Shared>, reply: WorkerReply, arrays: js_sys::Array) {
    let Some(shared) = weak.upgrade() else {
        return;
    };
    match &reply {
        WorkerReply::Ready => {
            let mut life = shared.life.borrow_mut();
            life.ready = true;
            let queue = std::mem::take(&mut life.queue);
            if let Some(w) = &life.worker {
                for message in &queue {
                    // A message refused here is as lost as one the worker
                    // dropped: the job's budget or its next request sees to it.
                    let _ = w.post(message);
                }
            }
        }
        WorkerReply::Panic { .. } | WorkerReply::Crashed { .. } => {
            let gone = std::mem::take(&mut *shared.life.borrow_mut());
            drop(gone);
        }
        _ => {}
    }
    (shared.on_reply)(Received {
        reply,
        arrays,
        received_ms: dom::now_ms(),
        received_at: dom::epoch_ms(),
    });
}
