//! The search worker's side of `WorkerRequest::Search`: the core's layout
//! search (`overlap_core::search`) on this worker's one thread, its
//! progress posted after every wave, its result posted as the page's
//! [`Found`]. The page cancels by terminating the worker.

use overlap_core::search::{self, Options};
use overlap_core::search::{Found, Objective};
use overlap_core::ScenarioInput;
use overlap_session::WorkerReply;

use super::scope::{now_ms, post};

/// Searches the layouts of `input`'s model on `gpus`, ranked by `objective`.
pub fn search(gen: u64, input: &ScenarioInput, gpus: Option<u64>, objective: Objective) {
    let started = now_ms();
    let options = Options {
        gpus,
        objective,
        // A worker has one thread: the core's pool is the page's one worker.
        threads: 1,
        ..Options::default()
    };
    let outcome = search::search(input, &options, |progress| {
        post(
            &WorkerReply::SearchProgress {
                gen,
                progress: *progress,
            },
            &[],
            &[],
        );
    });
    let reply = match outcome {
        Ok(outcome) => {
            let hbm_gb = overlap_core::input::validate::filled(input).hardware.hbm_gb;
            WorkerReply::Searched {
                gen,
                found: Box::new(Found::of(&outcome, hbm_gb)),
                search_ms: now_ms() - started,
            }
        }
        Err(message) => WorkerReply::SearchRefused { gen, message },
    };
    post(&reply, &[], &[]);
}
