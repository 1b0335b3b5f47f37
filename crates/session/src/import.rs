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

use crate::errand::{Errand, ErrandAction};
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
    /// The reader's classification rules, for the imports that follow
    /// (one `PATTERN=KIND[:AXIS]` a line; checked by the page first).
    Rules(String),
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

/// What the adapter does, in order: an errand's actions.
pub type ImportAction = ErrandAction;

/// The page's imports.
#[derive(Clone, Debug, Default)]
pub struct ImportSession {
    errand: Errand,
    /// The reader's classification rules, sent with each import.
    rules: String,
}

impl ImportSession {
    /// Whether an import is under way.
    pub fn busy(&self) -> bool {
        self.errand.busy()
    }

    /// Whether `gen` is the newest import.
    pub fn is_latest(&self, gen: u64) -> bool {
        self.errand.gen() == gen
    }

    /// Takes `event` and returns what to do.
    pub fn handle(&mut self, event: ImportEvent) -> Vec<ImportAction> {
        let mut out = Vec::new();
        let e = &mut self.errand;
        match event {
            ImportEvent::Open(files) => {
                let gen = e.supersede(&mut out);
                if let Some(why) = refusal(&files) {
                    out.push(ImportAction::Alert(format!(
                        "The trace could not be opened: {why}"
                    )));
                    return out;
                }
                let total: u64 = files.iter().map(|f| f.bytes).sum();
                e.start(
                    WorkerRequest::Import {
                        gen,
                        files,
                        rules: self.rules.clone(),
                    },
                    IMPORT_BUDGET_MS,
                    progress_label(0, total),
                    &mut out,
                );
            }
            ImportEvent::Rules(text) => self.rules = text,
            ImportEvent::Ready => e.ready(&mut out),
            ImportEvent::SpawnFailed(why) => {
                e.spawn_failed(format!("The trace could not be opened: {why}."), &mut out);
            }
            ImportEvent::PostFailed => e.fail(
                "The trace could not be opened: the import worker did not accept the files."
                    .to_string(),
                &mut out,
            ),
            ImportEvent::Progress {
                gen,
                read_bytes,
                total_bytes,
            } => {
                let fraction = if total_bytes == 0 {
                    1.0
                } else {
                    read_bytes as f64 / total_bytes as f64
                };
                e.progress(
                    gen,
                    fraction,
                    PROGRESS_STEP,
                    || progress_label(read_bytes, total_bytes),
                    &mut out,
                );
            }
            ImportEvent::Imported { gen } => e.done(gen, &mut out),
            ImportEvent::Refused { gen, message } => e.refused(
                gen,
                format!("The trace could not be opened: {message}"),
                &mut out,
            ),
            ImportEvent::Panicked(why) => e.worker_gone(
                || format!("The trace reader stopped with an internal error ({why}). This is a bug: please report it with the trace if you can share it."),
                &mut out,
            ),
            ImportEvent::Crashed(why) => e.worker_gone(
                || format!("The trace reader stopped: {why}. This usually means the page ran out of memory; `overlap-lab import` reads the same files from the command line."),
                &mut out,
            ),
            ImportEvent::BudgetSpent(gen) => e.budget_spent(
                gen,
                || format!(
                    "Stopped: reading the trace took longer than {} s, the page's budget for it. `overlap-lab import` reads it from the command line without one.",
                    IMPORT_BUDGET_MS / 1000
                ),
                &mut out,
            ),
            ImportEvent::Cancel => e.cancel(&mut out),
        }
        out
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
