//! The page's side of opening a measured trace: an adapter over
//! `overlap_session::import::ImportSession`, driven as every job is
//! (`job`). Files the reader picks or drops become `ImportEvent::Open`;
//! each import runs in a worker of its own (the same module as the
//! simulation worker), which reads the files where they are on the
//! reader's machine; nothing is uploaded. The actions the session returns
//! are performed here: start or terminate the worker, post the files, arm
//! the budget, move the progress bar, show the result or the alert.
//!
//! `data-import` on the body says where the newest import is, for the
//! browser tests: `reading`, `shown`, `refused`.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use overlap_session::import::{ImportAction, ImportEvent, ImportSession};
use overlap_session::{TraceFile, WorkerReply};
use overlap_trace::bars::Measured;
use overlap_trace::Imported;
use wasm_bindgen::JsCast;

use super::job::{self, Host};
use super::worker_client::{Received, WorkerClient};
use crate::dom;

/// An imported job, ready to draw beside the scenario.
pub struct MeasuredRun {
    /// The reader's figures.
    pub figures: Imported,
    /// Its bars.
    pub measured: Measured,
    /// The worker's time for the import, ms.
    pub import_ms: f64,
}

/// What the page shows of imports.
#[derive(Clone, Copy)]
pub struct ImportView {
    /// The progress bar: (fraction, label) while an import reads.
    pub progress: RwSignal<Option<(f64, String)>>,
    /// Why the last import did not show.
    pub alert: RwSignal<Option<String>>,
    /// Bumped when a new import is shown (read `run` then).
    pub shown: RwSignal<u64>,
    /// The import shown, if any.
    pub run: StoredValue<Option<Rc<MeasuredRun>>, LocalStorage>,
}

impl ImportView {
    fn new() -> Self {
        Self {
            progress: RwSignal::new(None),
            alert: RwSignal::new(None),
            shown: RwSignal::new(0),
            run: StoredValue::new_local(None),
        }
    }
}

/// The page's imports; clone freely.
#[derive(Clone)]
pub struct Importer {
    inner: Rc<Inner>,
}

struct Inner {
    me: Weak<Inner>,
    session: RefCell<ImportSession>,
    client: WorkerClient,
    page: RefCell<PageSide>,
    view: ImportView,
}

#[derive(Default)]
struct PageSide {
    budget: Option<Timeout>,
    /// The newest import's `File`s, posted once its worker is ready, and
    /// kept (with their descriptions) to read again under new rules.
    files: Option<(js_sys::Array, Vec<TraceFile>)>,
}

impl Importer {
    /// A new importer with its view's signals.
    pub fn new() -> Self {
        let inner = Rc::new_cyclic(|me| Inner {
            me: me.clone(),
            session: RefCell::new(ImportSession::default()),
            client: job::client_for(me.clone()),
            page: RefCell::default(),
            view: ImportView::new(),
        });
        Self { inner }
    }

    /// What the page shows.
    pub fn view(&self) -> ImportView {
        self.inner.view
    }

    /// The reader opened these files (a picker's or a drop's `FileList`).
    pub fn open(&self, list: &web_sys::FileList) {
        let files = js_sys::Array::new();
        let mut described = Vec::new();
        for i in 0..list.length() {
            if let Some(f) = list.item(i) {
                described.push(TraceFile {
                    name: f.name(),
                    bytes: f.size() as u64,
                });
                files.push(&f);
            }
        }
        self.inner.page.borrow_mut().files = Some((files, described.clone()));
        self.inner.view.alert.set(None);
        job::feed(&*self.inner, ImportEvent::Open(described), None);
    }

    /// The reader's classification rules (one `PATTERN=KIND[:AXIS]` a
    /// line, already checked): used by every import from now, and the
    /// files open now are read again under them.
    pub fn classify(&self, rules: String) {
        job::feed(&*self.inner, ImportEvent::Rules(rules), None);
        let open = self
            .inner
            .page
            .borrow()
            .files
            .as_ref()
            .map(|(_, d)| d.clone());
        if let Some(described) = open {
            self.inner.view.alert.set(None);
            job::feed(&*self.inner, ImportEvent::Open(described), None);
        }
    }

    /// Closes the measured trace (and stops an import under way).
    pub fn close(&self) {
        job::feed(&*self.inner, ImportEvent::Cancel, None);
        self.inner.page.borrow_mut().files = None;
        self.inner.view.run.set_value(None);
        self.inner.view.alert.set(None);
        self.inner.view.shown.update(|n| *n += 1);
        dom::set_body_data("import", "");
    }
}

impl Host for Inner {
    type Machine = ImportSession;

    fn machine(&self) -> &RefCell<ImportSession> {
        &self.session
    }

    fn client(&self) -> &WorkerClient {
        &self.client
    }

    fn context(&self) {}

    fn perform(&self, action: ImportAction, received: Option<&Received>) {
        match action {
            ImportAction::Spawn => job::start(self),
            ImportAction::Terminate => self.client.terminate(),
            ImportAction::Post(request) => {
                let files = self.page.borrow().files.as_ref().map(|(f, _)| f.clone());
                let posted = match files {
                    Some(files) => job::post_with(self, &request, &files),
                    None => {
                        job::feed(self, ImportEvent::PostFailed, None);
                        false
                    }
                };
                if posted {
                    dom::set_body_data("import", "reading");
                }
            }
            ImportAction::ArmBudget { gen, ms } => {
                let timer = job::feed_after(self.me.clone(), ms, ImportEvent::BudgetSpent(gen));
                self.page.borrow_mut().budget = Some(timer);
            }
            ImportAction::CancelBudget => {
                self.page.borrow_mut().budget = None;
            }
            ImportAction::Progress { fraction, label } => {
                self.view.progress.set(Some((fraction, label)));
            }
            ImportAction::DoneProgress => self.view.progress.set(None),
            ImportAction::Show { .. } => self.show(received),
            ImportAction::Alert(text) => {
                dom::set_body_data("import", "refused");
                self.view.alert.set(Some(text));
            }
        }
    }
}

impl Inner {
    fn show(&self, received: Option<&Received>) {
        let Some(Received {
            reply:
                WorkerReply::Imported {
                    figures,
                    rows,
                    span_s,
                    import_ms,
                    ..
                },
            arrays,
            ..
        }) = received
        else {
            return;
        };
        let f64s = arrays
            .get(0)
            .dyn_into::<js_sys::Float64Array>()
            .map(|a| a.to_vec());
        let u32s = arrays
            .get(1)
            .dyn_into::<js_sys::Uint32Array>()
            .map(|a| a.to_vec());
        let measured = match (f64s, u32s) {
            (Ok(f), Ok(u)) => Measured::from_arrays(rows.clone(), *span_s, &f, &u),
            _ => Err("the import worker sent no bars".to_string()),
        };
        match measured {
            Ok(measured) => {
                self.view.run.set_value(Some(Rc::new(MeasuredRun {
                    figures: figures.clone(),
                    measured,
                    import_ms: *import_ms,
                })));
                self.view.shown.update(|n| *n += 1);
                dom::set_body_data("import", "shown");
                dom::set_body_data("import-ms", &format!("{import_ms}"));
            }
            Err(why) => {
                dom::set_body_data("import", "refused");
                self.view
                    .alert
                    .set(Some(format!("The trace could not be shown: {why}.")));
            }
        }
    }
}
