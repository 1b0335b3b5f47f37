//! The page's budgets for a run: how long it may take, how long input
//! rests before it is sent, and how large a worker may grow.

/// A run that takes longer than this is stopped and reported: the page's
/// time budget for one simulation, or for a large run's figures. The command
/// line has none. (A product choice: long enough for the largest preset's
/// figures on a laptop, short enough that a stuck page says so.)
pub const RUN_BUDGET_MS: u32 = 15_000;
/// A large run's timeline, once its figures are shown, is stopped after this
/// long. Twice the run's budget: the run with a timeline does the report-only
/// run's work and also records every bar and link sample (the core's
/// benchmark puts it at about 1.3 to 1.5 times the report-only time on 1T).
pub const TIMELINE_BUDGET_MS: u32 = 2 * RUN_BUDGET_MS;
/// A worker whose memory grew past this is retired (WebAssembly memory never
/// shrinks; a new worker starts small) before the first run whose all-off
/// baseline differs from its last: until then it keeps that baseline, so an
/// overlap switch flipped on a large scenario does not simulate it again.
pub const WORKER_MEMORY_LIMIT_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;
/// A run this short is let finish when a newer request arrives; a longer one
/// is stopped in favour of the newer request (starting a worker costs about
/// this much: the module comes compiled, its instance and memory do not).
pub const FAST_RUN_MS: f64 = 80.0;
/// After a slow run, input that keeps changing (a slider being dragged) is
/// sent once it rests this long (about a drag's pause between two moves).
pub const SETTLE_MS: u32 = 150;
/// When the last large run's figures took at most this long, a newer request
/// is posted to the worker while figures are being computed rather than
/// stopping it: the worker takes it before starting the overtaken timeline.
pub const FAST_FIGURES_MS: f64 = 500.0;
