//! Opening a measured trace in the page, as a state machine: the files the
//! reader picked or dropped are checked on the page (how many, how large),
//! then read in a worker of their own (the simulation worker stays free
//! for the controls, and the import's memory goes with its worker), with a
//! progress bar, and the result shown or the reader's refusal alerted.
//!
//! - The newest import wins: files opened while another import reads stop
//!   it (its worker is terminated) and start afresh.
//! - Every import has [`IMPORT_BUDGET_MS`]; one over it is stopped and said so.
//! - Bad input becomes one alert naming the file and the problem: the
//!   core reader's line for what is inside a file, the page's own for what
//!   is known before reading (no file, too many, one too large).
//!
//! As [`crate::machine`], this holds no timer and no worker:
//! [`ImportSession::handle`] takes an [`ImportEvent`] and returns the
//! [`ImportAction`]s the adapter performs.

use overlap_trace::{check_size, MAX_FILES};

use crate::job::{Heard, Machine};
use crate::messages::{TraceFile, WorkerReply, WorkerRequest};

/// An import that takes longer than this is stopped and said so. The page
/// worker read a generated 100 MB trace in 1.3 s (`BENCH_SECTIONS=import
/// node scripts/bench-page.mjs`, headless Chromium on the 2-core build
/// machine), so the largest file the reader takes (1 GiB of JSON,
/// `MAX_TRACE_BYTES`) in about 14 s; 90 s leaves six times that for a
/// slower laptop or a gzip file's inflating, and a stuck import still
/// says so within a minute and a half.
pub const IMPORT_BUDGET_MS: u32 = 90_000;

/// Progress is shown at most this often, in steps of the whole: a finer
/// bar is not seen, and each step is a message and a repaint.
pub const PROGRESS_STEP: f64 = 0.01;

/// What happened.
#[derive(Clone, Debug, PartialEq)]
pub enum ImportEvent {
    /// The reader opened these files (by the picker or by dropping them).
    Open(Vec<TraceFile>),
    /// The import worker's message handler is installed.
    Ready,
    /// The import worker could not be started.
    SpawnFailed(String),
    /// The import worker did not accept the request.
    PostFailed,
    /// Import `gen` has read this many of its bytes.
    Progress {
        gen: u64,
        read_bytes: u64,
        total_bytes: u64,
    },
    /// Import `gen` is done: its figures and bars are in the reply at hand.
    Imported { gen: u64 },
    /// Import `gen` was refused: the reader's line.
    Refused { gen: u64, message: String },
    /// The import worker panicked (a trap and `Crashed` follow).
    Panicked(String),
    /// The import worker stopped.
    Crashed(String),
    /// Import `gen`'s budget is spent.
    BudgetSpent(u64),
    /// The reader closed the measured trace or cancelled its import.
    Cancel,
}

/// What the adapter does, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum ImportAction {
    /// Start an import worker.
    Spawn,
    /// Terminate the import worker.
    Terminate,
    /// Post this request, with the opened files after it in their order.
    Post(Box<WorkerRequest>),
    /// (Re)arm the budget timer: `BudgetSpent(gen)` after `ms`.
    ArmBudget { gen: u64, ms: u32 },
    /// Drop the budget timer.
    CancelBudget,
    /// Show the progress bar at this fraction (0..1) with this label.
    Progress { fraction: f64, label: String },
    /// Hide the progress bar.
    DoneProgress,
    /// Show import `gen` (from the reply at hand): its bars and figures
    /// beside the current scenario's.
    Show { gen: u64 },
    /// Show this alert: one sentence naming the problem.
    Alert(String),
}

/// Where the newest import is.
#[derive(Clone, Debug, PartialEq)]
enum Stage {
    Idle,
    /// Its worker is starting; the request waits for `Ready`.
    Starting {
        gen: u64,
        files: Vec<TraceFile>,
    },
    /// Posted; progress comes.
    Reading {
        gen: u64,
        shown: f64,
    },
}

/// The page's imports.
#[derive(Clone, Debug)]
pub struct ImportSession {
    gen: u64,
    stage: Stage,
    worker: bool,
}

impl Default for ImportSession {
    fn default() -> Self {
        Self {
            gen: 0,
            stage: Stage::Idle,
            worker: false,
        }
    }
}

impl ImportSession {
    /// Whether an import is under way.
    pub fn busy(&self) -> bool {
        self.stage != Stage::Idle
    }

    /// Whether `gen` is the newest import.
    pub fn is_latest(&self, gen: u64) -> bool {
        self.gen == gen
    }

    /// Takes `event` and returns what to do.
    pub fn handle(&mut self, event: ImportEvent) -> Vec<ImportAction> {
        let mut out = Vec::new();
        match event {
            ImportEvent::Open(files) => self.open(files, &mut out),
            ImportEvent::Ready => {
                if let Stage::Starting { gen, files } = &self.stage {
                    let (gen, files) = (*gen, files.clone());
                    out.push(ImportAction::Post(Box::new(WorkerRequest::Import {
                        gen,
                        files,
                    })));
                    self.stage = Stage::Reading { gen, shown: 0.0 };
                }
            }
            ImportEvent::SpawnFailed(why) => {
                self.worker = false;
                self.fail(format!("The trace could not be opened: {why}."), &mut out);
            }
            ImportEvent::PostFailed => {
                self.fail(
                    "The trace could not be opened: the import worker did not accept the files."
                        .to_string(),
                    &mut out,
                );
            }
            ImportEvent::Progress {
                gen,
                read_bytes,
                total_bytes,
            } => {
                if let Stage::Reading { gen: g, shown } = &mut self.stage {
                    let fraction = if total_bytes == 0 {
                        1.0
                    } else {
                        (read_bytes as f64 / total_bytes as f64).clamp(0.0, 1.0)
                    };
                    if *g == gen && fraction - *shown >= PROGRESS_STEP {
                        *shown = fraction;
                        out.push(ImportAction::Progress {
                            fraction,
                            label: progress_label(read_bytes, total_bytes),
                        });
                    }
                }
            }
            ImportEvent::Imported { gen } => {
                if self.reading(gen) {
                    self.finish(&mut out);
                    out.push(ImportAction::Show { gen });
                }
            }
            ImportEvent::Refused { gen, message } => {
                if self.reading(gen) {
                    self.fail(
                        format!("The trace could not be opened: {message}"),
                        &mut out,
                    );
                }
            }
            ImportEvent::Panicked(why) => {
                if self.busy() {
                    self.fail(
                        format!("The trace reader stopped with an internal error ({why}). This is a bug: please report it with the trace if you can share it."),
                        &mut out,
                    );
                } else {
                    self.retire(&mut out);
                }
            }
            ImportEvent::Crashed(why) => {
                if self.busy() {
                    self.fail(
                        format!("The trace reader stopped: {why}. This usually means the page ran out of memory; `overlap-lab import` reads the same files from the command line."),
                        &mut out,
                    );
                } else {
                    self.retire(&mut out);
                }
            }
            ImportEvent::BudgetSpent(gen) => {
                if self.gen == gen && self.busy() {
                    self.fail(
                        format!(
                            "Stopped: reading the trace took longer than {} s, the page's budget for it. `overlap-lab import` reads it from the command line without one.",
                            IMPORT_BUDGET_MS / 1000
                        ),
                        &mut out,
                    );
                }
            }
            ImportEvent::Cancel => {
                if self.busy() {
                    self.gen += 1;
                    self.finish(&mut out);
                }
            }
        }
        out
    }

    fn open(&mut self, files: Vec<TraceFile>, out: &mut Vec<ImportAction>) {
        // A newer import stops the one under way, whatever comes of it.
        self.gen += 1;
        if self.busy() {
            self.finish(out);
        }
        if let Some(why) = refusal(&files) {
            out.push(ImportAction::Alert(format!(
                "The trace could not be opened: {why}"
            )));
            return;
        }
        let gen = self.gen;
        let total: u64 = files.iter().map(|f| f.bytes).sum();
        out.push(ImportAction::Spawn);
        self.worker = true;
        out.push(ImportAction::ArmBudget {
            gen,
            ms: IMPORT_BUDGET_MS,
        });
        out.push(ImportAction::Progress {
            fraction: 0.0,
            label: progress_label(0, total),
        });
        self.stage = Stage::Starting { gen, files };
    }

    fn reading(&self, gen: u64) -> bool {
        matches!(self.stage, Stage::Reading { gen: g, .. } if g == gen)
    }

    /// Ends the import under way: its worker, timer and progress bar go.
    fn finish(&mut self, out: &mut Vec<ImportAction>) {
        self.stage = Stage::Idle;
        self.retire(out);
        out.push(ImportAction::CancelBudget);
        out.push(ImportAction::DoneProgress);
    }

    fn fail(&mut self, alert: String, out: &mut Vec<ImportAction>) {
        self.finish(out);
        out.push(ImportAction::Alert(alert));
    }

    fn retire(&mut self, out: &mut Vec<ImportAction>) {
        if self.worker {
            self.worker = false;
            out.push(ImportAction::Terminate);
        }
    }
}

impl Machine for ImportSession {
    type Event = ImportEvent;
    type Action = ImportAction;
    type Context = ();

    /// As [`ImportSession::handle`]: an import's transitions do not depend
    /// on the time (its budget is a timer of the page's).
    fn handle(&mut self, _now_ms: f64, event: ImportEvent) -> Vec<ImportAction> {
        ImportSession::handle(self, event)
    }

    fn heard(heard: Heard<'_>, (): ()) -> Vec<ImportEvent> {
        let event = match heard {
            Heard::SpawnFailed(why) => ImportEvent::SpawnFailed(why.to_string()),
            Heard::PostFailed => ImportEvent::PostFailed,
            Heard::Reply(reply) => match reply {
                WorkerReply::Ready => ImportEvent::Ready,
                WorkerReply::ImportProgress {
                    gen,
                    read_bytes,
                    total_bytes,
                } => ImportEvent::Progress {
                    gen: *gen,
                    read_bytes: *read_bytes,
                    total_bytes: *total_bytes,
                },
                WorkerReply::Imported { gen, .. } => ImportEvent::Imported { gen: *gen },
                WorkerReply::ImportRefused { gen, message } => ImportEvent::Refused {
                    gen: *gen,
                    message: message.clone(),
                },
                WorkerReply::Panic { message } => ImportEvent::Panicked(message.clone()),
                WorkerReply::Crashed { message } => ImportEvent::Crashed(message.clone()),
                _ => return Vec::new(),
            },
        };
        vec![event]
    }

    fn busy(&self) -> bool {
        ImportSession::busy(self)
    }
}

/// Why files cannot be imported, known before reading them.
pub fn refusal(files: &[TraceFile]) -> Option<String> {
    if files.is_empty() {
        return Some("no file was given; pick or drop a .json or .json.gz trace".to_string());
    }
    if files.len() > MAX_FILES {
        return Some(format!(
            "{} files were given, over the import's limit of {MAX_FILES}; import fewer ranks",
            files.len()
        ));
    }
    files
        .iter()
        .find_map(|f| check_size(&f.name, f.bytes).err())
        .map(|e| e.to_string())
}

fn progress_label(read: u64, total: u64) -> String {
    const MB: f64 = 1e6;
    format!(
        "Reading the trace: {:.0} of {:.0} MB",
        read as f64 / MB,
        total as f64 / MB
    )
}
