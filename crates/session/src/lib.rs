//! The page's run session, free of the browser: what crosses the boundary
//! between the page and its workers (`messages`), and the state machines
//! of the jobs the page runs in them: the simulation (`machine`: which
//! request runs, which result is shown, when a run is stopped), opening a
//! measured trace (`import`), the layout search (`search`; both are
//! errands, `errand`, run once in a worker of their own) and the sweep
//! view's curves (`sweep`). Each
//! implements one trait, [`Machine`] (`job`): the app's `src/client/`
//! drives any of them the same way, turning timers, worker replies and
//! user actions into events and performing the actions returned. The
//! timeline crosses the boundary as two word arrays (`codec`): here rather
//! than in the app so that it is compiled for speed (the app crate is
//! optimised for size) and tested natively.

pub mod codec;
pub mod errand;
pub mod import;
pub mod job;
pub mod machine;
pub mod messages;
pub mod search;
pub mod sweep;

pub use import::{ImportAction, ImportEvent, ImportSession};
pub use job::{Heard, Machine};
pub use machine::{Action, Alert, Event, PageNow, Session};
pub use messages::{RunCounts, TraceFile, WorkerReply, WorkerRequest};
pub use search::{SearchAction, SearchAsk, SearchEvent, SearchSession};
pub use sweep::{SweepAction, SweepEvent, SweepSession};
