//! The page's run session, free of the browser: what crosses the boundary
//! between the page and its simulation worker (`messages`), and the state
//! machine that decides which request runs, which result is shown, and
//! when a run is stopped (`machine`). The app's `src/worker/` is a thin
//! adapter: it turns timers, worker messages and user actions into
//! [`machine::Event`]s and performs the [`machine::Action`]s returned.
//! Opening a measured trace has a machine of its own (`import`). The
//! timeline crosses the boundary as two word arrays (`codec`): here rather
//! than in the app so that it is compiled for speed (the app crate is
//! optimised for size) and tested natively.

pub mod codec;
pub mod import;
pub mod machine;
pub mod messages;
pub mod sweep;

pub use import::{ImportAction, ImportEvent, ImportSession};
pub use machine::{Action, Alert, Event, Session};
pub use messages::{RunCounts, TraceFile, WorkerReply, WorkerRequest};
pub use sweep::SweepSession;
