//! The page's side of its workers. Each job with a worker of its own (a
//! run of the simulation, the import of a measured trace, the sweep
//! view's curves, an export) holds one `WorkerClient` (`worker_client`),
//! which owns the worker's life: started when first needed (`spawn`),
//! ready once it says so, requests posted before then queued, and gone
//! once it panics or stops. A job whose rules are a session's machine in
//! `crates/session` is driven by `job`: its events in, its actions out.
//! Every message is a typed envelope both ways (`wire`).
//!
//! - `runner`: the simulation of the page's scenario, an adapter over
//!   `overlap_session::Session`; `decoding` reads its timeline a slice at
//!   a time, `show` shows what came, `no_timeline` says why a step has
//!   no timeline;
//! - `importer`: a measured trace, over `overlap_session::ImportSession`.
//!
//! The worker's own program is `crate::serve`.

pub mod decoding;
pub mod importer;
pub mod job;
pub mod no_timeline;
pub mod runner;
pub mod show;
pub mod spawn;
pub mod wire;
pub mod worker_client;
