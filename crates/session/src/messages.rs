//! Every message between the page, its simulation worker and the helper
//! worker, as two typed enums.
//!
//! On the wire a message is a JavaScript array: its first element is the
//! enum as JSON text (`serde_json`, which carries every `f64` bit for bit),
//! and the elements after it are the typed arrays that travel beside it,
//! transferred rather than copied. No side reads a message by a string key.
//! Which arrays follow is part of each variant's contract, written on it.

use overlap_core::scenario::{CollectiveOp, HardwareInput};
use overlap_core::search::{Candidate, Found, Objective, Progress, Simulated};
use overlap_core::sweep::{BusPoint, Row};
use overlap_core::{Part, PartRan, Report, ScenarioInput};
use overlap_trace::bars::MeasuredRow;
use overlap_trace::Imported;
use serde::{Deserialize, Serialize};

/// A message to a worker: from the page to the simulation worker (or to a
/// worker of its own for an export), or from the simulation worker to its
/// helper.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerRequest {
    /// The first message, read by `www/sim-worker.js` before the module
    /// runs: the URL of the app's JavaScript module; the compiled
    /// `WebAssembly.Module` follows as the array's second element.
    Init {
        glue: String,
        /// The browser tests' hooks (`Panic`) are on.
        test_hooks: bool,
    },
    /// Simulate the scenario: answered with `Figures` first for a large
    /// step, then `Result` (or `NoTimeline`), or `Refused`.
    Simulate { gen: u64, input: ScenarioInput },
    /// The Chrome trace of the step: answered with `Trace` or `Refused`.
    Trace { gen: u64, input: ScenarioInput },
    /// The zip of the Kineto traces, unpacking to `folder`: answered with
    /// `Kineto` or `Refused`.
    Kineto {
        gen: u64,
        input: ScenarioInput,
        folder: String,
    },
    /// To the helper worker: run these parts of the figures of `input`.
    Parts {
        gen: u64,
        input: ScenarioInput,
        parts: Vec<Part>,
    },
    /// To a search worker's helper (`crate::search`'s pool): simulate these
    /// candidates of search `gen`'s current wave.
    SearchCandidates {
        gen: u64,
        candidates: Vec<Candidate>,
    },
    /// Panic on purpose (only with the test hooks on), so that the browser
    /// tests can check how a panic is reported.
    Panic,
    /// One point of a sweep (`crate::sweep`): `input` with `field` set to
    /// `value`; answered with `SweepPoint`.
    SweepPoint {
        gen: u64,
        input: ScenarioInput,
        field: String,
        value: serde_json::Value,
        index: u32,
    },
    /// The bus-bandwidth curve of one collective over every GPU of
    /// `hardware`; answered with `BusCurve`.
    BusCurve {
        gen: u64,
        hardware: HardwareInput,
        collective: CollectiveOp,
    },
    /// Import the profiler traces the reader opened (`crate::import`): the
    /// page's `File`s follow, one per entry of `files` in the same order,
    /// read by the worker a slice at a time and never sent anywhere.
    /// Answered with `ImportProgress` replies, then `Imported` or
    /// `ImportRefused`.
    /// `rules`: the reader's classification rules, one
    /// `PATTERN=KIND[:AXIS]` a line, read before the built-in table (as
    /// `overlap-lab import --classify-file` reads them).
    Import {
        gen: u64,
        files: Vec<TraceFile>,
        rules: String,
    },
    /// Search the layouts of `input`'s model (`crate::search`): on `gpus`
    /// (`None`: the scenario's), ranked by `objective`. Answered with
    /// `SearchProgress` replies, then `Searched` or `SearchRefused`.
    Search {
        gen: u64,
        input: ScenarioInput,
        gpus: Option<u64>,
        objective: Objective,
    },
}

/// A trace file the reader opened: its name and size, as the page sees them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceFile {
    /// The file's name (no path: the browser gives none).
    pub name: String,
    /// Its size, bytes.
    pub bytes: u64,
}

/// A message from a worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerReply {
    /// The message handler is installed: requests are read from now on.
    Ready,
    /// A large step's figures, ahead of its timeline.
    Figures {
        gen: u64,
        report: Report,
        /// How long the figures took, ms (`cached`: no simulation).
        sim_ms: f64,
        /// Kept from a recent run of the same scenario: the time is not a
        /// measure of its cost.
        cached: bool,
        /// When the worker took the request up (ms since the epoch).
        taken_up_at: f64,
        /// The worker's own work before the core ran, ms.
        resolve_ms: f64,
        /// When the worker posted this (ms since the epoch).
        posted_at: f64,
        runs: RunCounts,
    },
    /// A run's figures and timeline: the timeline follows as two typed
    /// arrays, `Float64Array` then `Uint32Array` (`crate::codec`).
    Result {
        gen: u64,
        report: Report,
        /// The core's time for the figures and the timeline, ms.
        sim_ms: f64,
        /// The core's time for the timeline alone, ms.
        timeline_ms: f64,
        /// The worker's time after the core: the timeline sorted, encoded
        /// and copied into its typed arrays, ms (for the page benchmark).
        encode_ms: f64,
        taken_up_at: f64,
        /// When the worker posted it, ms since the epoch: with the page's
        /// time of receipt, how long it took to arrive.
        posted_at: f64,
        /// The worker's WebAssembly memory, bytes.
        memory_bytes: f64,
        runs: RunCounts,
    },
    /// The figures went first; the timeline is over the core's limit for
    /// one: why, naming the field.
    NoTimeline {
        gen: u64,
        field: String,
        message: String,
        runs: RunCounts,
    },
    /// The request was refused; `field` names the scenario field when the
    /// refusal is about one.
    Refused {
        gen: u64,
        field: Option<String>,
        message: String,
        runs: RunCounts,
    },
    /// The Chrome trace: its UTF-8 bytes follow as a `Uint8Array`.
    Trace { gen: u64 },
    /// The Kineto zip: its bytes follow as a `Uint8Array`.
    Kineto { gen: u64 },
    /// From the helper: the parts' results in the order asked; `None` when
    /// it could not run them (the simulation worker then runs them itself,
    /// so why does not matter to it).
    PartsRan { gen: u64, ran: Option<Vec<PartRan>> },
    /// From a search worker's helper: each candidate's place in the
    /// search's queue with what simulating it gave, in the order asked.
    SearchCandidatesRan {
        gen: u64,
        ran: Vec<(usize, Simulated)>,
    },
    /// How far an `Import` has read: bytes of the files, over all of them.
    ImportProgress {
        gen: u64,
        read_bytes: u64,
        total_bytes: u64,
    },
    /// An `Import`'s figures and its bars' rows; the bars follow as two
    /// typed arrays, `Float64Array` (start, end s) then `Uint32Array` (row,
    /// class code) per bar (`overlap_trace::bars`).
    Imported {
        gen: u64,
        figures: Imported,
        rows: Vec<MeasuredRow>,
        /// The longest GPU's step drawn, seconds.
        span_s: f64,
        /// The worker's time for the whole import, ms.
        import_ms: f64,
    },
    /// An `Import` failed: the reader's one line naming the file and the cause.
    ImportRefused { gen: u64, message: String },
    /// Where a `Search` stands, after each of its waves.
    SearchProgress { gen: u64, progress: Progress },
    /// A `Search`'s result, as the page shows it.
    Searched {
        gen: u64,
        found: Box<Found>,
        /// The worker's time for the whole search, ms.
        search_ms: f64,
        /// The workers that simulated its candidates: the search worker
        /// and each of its helpers that answered a share.
        workers: u32,
    },
    /// A `Search` was refused: one line naming what to change.
    SearchRefused { gen: u64, message: String },
    /// The module panicked: it traps next.
    Panic { message: String },
    /// The worker stopped (posted by `www/sim-worker.js`).
    Crashed { message: String },
    /// A sweep's point: its row (a refused value's too), and the core's
    /// time for it, ms.
    SweepPoint {
        gen: u64,
        index: u32,
        row: Row,
        sim_ms: f64,
    },
    /// A collective's bus-bandwidth curve, or why it could not be simulated.
    BusCurve {
        gen: u64,
        collective: CollectiveOp,
        points: Result<Vec<BusPoint>, String>,
    },
}

impl WorkerReply {
    /// The worker's run counts, for the replies that carry them.
    pub fn runs(&self) -> Option<RunCounts> {
        match self {
            WorkerReply::Figures { runs, .. }
            | WorkerReply::Result { runs, .. }
            | WorkerReply::NoTimeline { runs, .. }
            | WorkerReply::Refused { runs, .. } => Some(*runs),
            _ => None,
        }
    }
}

/// What a simulation worker did with the `Simulate` requests it received;
/// the page shows the sum over its workers as `data-worker-runs` (a count
/// missing reads as zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunCounts {
    /// Requests it started on (read and resolved, or refused).
    pub started: u32,
    /// Figures posted ahead of a timeline.
    pub figures: u32,
    /// Timelines posted (`Result` messages).
    pub timelines: u32,
    /// Deferred timelines dropped because a newer request came first.
    pub skipped: u32,
    /// Figures made with the helper worker's parts.
    pub shared: u32,
    /// Figures made of one run, with nothing to share: the baseline
    /// remembered (or the scenario its own), and one short run standing
    /// for three (`overlap_core::steady_state::marked_counts`).
    pub one_run: u32,
}

impl RunCounts {
    pub const ZERO: RunCounts = RunCounts {
        started: 0,
        figures: 0,
        timelines: 0,
        skipped: 0,
        shared: 0,
        one_run: 0,
    };
}

impl std::ops::Add for RunCounts {
    type Output = RunCounts;

    fn add(self, o: RunCounts) -> RunCounts {
        RunCounts {
            started: self.started + o.started,
            figures: self.figures + o.figures,
            timelines: self.timelines + o.timelines,
            skipped: self.skipped + o.skipped,
            shared: self.shared + o.shared,
            one_run: self.one_run + o.one_run,
        }
    }
}

/// A message's JSON text (the first element of its array on the wire).
pub fn to_json<T: Serialize>(message: &T) -> String {
    // Plain enums of plain data: serialising cannot fail.
    serde_json::to_string(message).unwrap_or_default()
}

/// A message read back from its JSON text.
pub fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("an unreadable worker message: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_and_a_reply_survive_their_json() {
        let input = overlap_core::presets::default_preset().input();
        let request = WorkerRequest::Simulate { gen: 7, input };
        assert_eq!(from_json::<WorkerRequest>(&to_json(&request)), Ok(request));
        let scenario = overlap_core::presets::default_preset()
            .input()
            .resolve()
            .unwrap();
        let report = overlap_core::simulate_report(&scenario).unwrap().report;
        let reply = WorkerReply::Figures {
            gen: 3,
            report,
            sim_ms: 0.1 + 0.2,
            cached: false,
            taken_up_at: 1.7e12 + 0.3,
            resolve_ms: 1.0 / 3.0,
            posted_at: 1.7e12 + 0.7,
            runs: RunCounts {
                started: 2,
                ..RunCounts::ZERO
            },
        };
        // Every f64 of the report bit for bit: the page shows the core's figures.
        assert_eq!(from_json::<WorkerReply>(&to_json(&reply)), Ok(reply));
    }

    #[test]
    fn the_workers_own_script_writes_crashed_as_the_enum_reads_it() {
        // www/sim-worker.js posts `[JSON.stringify({ crashed: { message } })]`.
        let text = r#"{"crashed":{"message":"out of memory"}}"#;
        assert_eq!(
            from_json::<WorkerReply>(text),
            Ok(WorkerReply::Crashed {
                message: "out of memory".to_string()
            })
        );
        assert!(from_json::<WorkerReply>(r#"{"type":"crashed"}"#).is_err());
    }

    #[test]
    fn the_init_message_reads_as_the_worker_script_expects() {
        // www/sim-worker.js reads `init.glue` and `init.test_hooks`.
        let text = to_json(&WorkerRequest::Init {
            glue: "./app.js".to_string(),
            test_hooks: true,
        });
        assert_eq!(text, r#"{"init":{"glue":"./app.js","test_hooks":true}}"#);
    }

    #[test]
    fn run_counts_add_field_by_field_and_read_missing_as_zero() {
        let a: RunCounts = serde_json::from_str(r#"{"started":2,"figures":1}"#).unwrap();
        let b = RunCounts {
            started: 1,
            timelines: 4,
            ..RunCounts::ZERO
        };
        let sum = a + b;
        assert_eq!((sum.started, sum.figures, sum.timelines), (3, 1, 4));
        assert_eq!(sum.skipped + sum.shared + sum.one_run, 0);
    }
}
