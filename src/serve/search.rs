//! The search worker's side of `WorkerRequest::Search`: the core's layout
//! search a wave at a time (`overlap_core::search::Searching`), each
//! wave's candidates simulated over a pool of helper workers and this one,
//! its progress posted after every wave, its result posted as the page's
//! [`Found`]. The page cancels by terminating this worker, which ends its
//! helpers with it (a dedicated worker's workers live no longer than it).
//!
//! The pool: one helper per core the browser reports beyond this worker's
//! own, at most [`MAX_SEARCH_HELPERS`], the same module again (started
//! with `WorkerClient`, as the simulation worker starts its helper). Each
//! wave's candidates are dealt out in turn to this worker and to every
//! helper that is ready (`WorkerRequest::SearchCandidates`); this worker
//! runs its own share at once, and the wave is recorded when every share
//! is back (`WorkerReply::SearchCandidatesRan`), in the wave's order: the
//! same waves, lists and counts as on one thread (`Searching`'s doc).
//! A helper that panics or stops leaves its share to this worker. While a
//! helper is still loading, this worker yields between waves so that its
//! `Ready` is heard.

use std::cell::RefCell;

use gloo_timers::callback::Timeout;
use overlap_core::search::{self, Candidate, Options, Searching, Simulated};
use overlap_core::search::{Found, Objective};
use overlap_core::ScenarioInput;
use overlap_session::{WorkerReply, WorkerRequest};

use super::scope::{now_ms, post};
use crate::client::worker_client::{Received, WorkerClient};

/// The most helpers a search starts: eight workers in all with this one.
/// Each holds a copy of the module's memory (tens of MB for a large
/// candidate); beyond eight, a laptop's memory, not its cores, is what
/// runs out. A project choice, not a measurement.
pub const MAX_SEARCH_HELPERS: usize = 7;

/// How many helpers a search on a machine of `cores` starts: one per core
/// beyond this worker's, at most [`MAX_SEARCH_HELPERS`].
pub fn helpers_for(cores: f64) -> usize {
    let beyond = cores.max(1.0) as usize - 1;
    beyond.min(MAX_SEARCH_HELPERS)
}

/// Which share of a wave candidate `i` goes to, of `shares` (share 0 is
/// this worker's): in turn, so that each share holds candidates from the
/// whole of the wave's bound order.
pub fn share_of(i: usize, shares: usize) -> usize {
    i % shares.max(1)
}

/// A search under way.
struct Running {
    gen: u64,
    started_ms: f64,
    hbm_gb: f64,
    searching: Searching,
    /// The wave being simulated, and each candidate's result once back.
    wave: Vec<Candidate>,
    ran: Vec<Option<Simulated>>,
    /// Per helper, the wave's indices it was given and has not answered.
    owed: Vec<Vec<usize>>,
    /// Per helper, whether it has answered a share of this search.
    helped: Vec<bool>,
}

thread_local! {
    static RUNNING: RefCell<Option<Running>> = const { RefCell::new(None) };
    static POOL: RefCell<Vec<WorkerClient>> = const { RefCell::new(Vec::new()) };
    /// The next wave, when this worker yields before it.
    static YIELD: RefCell<Option<Timeout>> = const { RefCell::new(None) };
}

/// Searches the layouts of `input`'s model on `gpus`, ranked by `objective`.
pub fn search(gen: u64, input: &ScenarioInput, gpus: Option<u64>, objective: Objective) {
    YIELD.with(|y| y.borrow_mut().take());
    RUNNING.with(|r| r.borrow_mut().take());
    start_pool();
    let started = now_ms();
    let options = Options {
        gpus,
        objective,
        // This worker screens on its one thread; the pool simulates.
        threads: 1,
        ..Options::default()
    };
    match Searching::start(input, &options) {
        Ok(searching) => {
            let hbm_gb = overlap_core::input::validate::filled(input).hardware.hbm_gb;
            let helpers = POOL.with(|p| p.borrow().len());
            RUNNING.with(|r| {
                *r.borrow_mut() = Some(Running {
                    gen,
                    started_ms: started,
                    hbm_gb,
                    searching,
                    wave: Vec::new(),
                    ran: Vec::new(),
                    owed: vec![Vec::new(); helpers],
                    helped: vec![false; helpers],
                })
            });
            // Yield once: helpers that loaded while this worker screened
            // are heard before the first wave is dealt.
            later(gen);
        }
        Err(message) => post(&WorkerReply::SearchRefused { gen, message }, &[], &[]),
    }
}

/// Starts the helpers that are not running (the first search, or one
/// after a helper stopped).
fn start_pool() {
    let wanted = helpers_for(cores());
    POOL.with(|p| {
        let mut pool = p.borrow_mut();
        while pool.len() < wanted {
            let index = pool.len();
            pool.push(WorkerClient::new(move |heard| {
                on_helper_message(index, heard)
            }));
        }
        for helper in pool.iter() {
            if !helper.is_running() {
                // A helper the browser refuses is simply not dealt a share.
                let _ = helper.start();
            }
        }
    });
}

/// Deals out the next wave after this worker has yielded.
fn later(gen: u64) {
    let timer = Timeout::new(0, move || {
        YIELD.with(|y| y.borrow_mut().take());
        advance(gen);
    });
    YIELD.with(|y| *y.borrow_mut() = Some(timer));
}

/// Runs waves until one waits for a helper or the search is done.
fn advance(gen: u64) {
    loop {
        let Some(mut running) = RUNNING.with(|r| r.borrow_mut().take_if(|r| r.gen == gen)) else {
            return;
        };
        let wave = running.searching.next_wave();
        if wave.is_empty() {
            finish(running);
            return;
        }
        let ready: Vec<usize> = POOL.with(|p| {
            let pool = p.borrow();
            (0..pool.len()).filter(|&h| pool[h].is_ready()).collect()
        });
        let shares = ready.len() + 1;
        running.ran = vec![None; wave.len()];
        running.owed.iter_mut().for_each(Vec::clear);
        let mut mine = Vec::new();
        for share in 0..shares {
            let indices: Vec<usize> = (0..wave.len())
                .filter(|&i| share_of(i, shares) == share)
                .collect();
            if share == 0 || indices.is_empty() {
                mine.extend(indices);
                continue;
            }
            let helper = ready[share - 1];
            let request = WorkerRequest::SearchCandidates {
                gen,
                candidates: indices.iter().map(|&i| wave[i].clone()).collect(),
            };
            if POOL.with(|p| p.borrow()[helper].post(&request).is_ok()) {
                running.owed[helper] = indices;
            } else {
                mine.extend(indices);
            }
        }
        for i in mine {
            running.ran[i] = Some(search::simulate_candidate(&wave[i]));
        }
        running.wave = wave;
        let waiting = running.owed.iter().any(|o| !o.is_empty());
        let loading = POOL.with(|p| p.borrow().iter().any(|h| h.is_running() && !h.is_ready()));
        RUNNING.with(|r| *r.borrow_mut() = Some(running));
        if waiting {
            // The last share back records the wave and goes on.
            return;
        }
        record(gen);
        if loading {
            later(gen);
            return;
        }
    }
}

/// Records the wave, every share back, and posts where the search stands.
fn record(gen: u64) {
    RUNNING.with(|r| {
        let mut slot = r.borrow_mut();
        let Some(running) = slot.as_mut().filter(|r| r.gen == gen) else {
            return;
        };
        let wave = std::mem::take(&mut running.wave);
        let ran = std::mem::take(&mut running.ran)
            .into_iter()
            .zip(&wave)
            .map(|(r, c)| r.unwrap_or_else(|| search::simulate_candidate(c)))
            .collect();
        running.searching.record(&wave, ran);
        post(
            &WorkerReply::SearchProgress {
                gen,
                progress: running.searching.progress(),
            },
            &[],
            &[],
        );
    });
}

fn finish(running: Running) {
    let Running {
        gen,
        started_ms,
        hbm_gb,
        searching,
        helped,
        ..
    } = running;
    let outcome = searching.finish();
    let workers = 1 + helped.iter().filter(|&&h| h).count() as u32;
    post(
        &WorkerReply::Searched {
            gen,
            found: Box::new(Found::of(&outcome, hbm_gb)),
            search_ms: now_ms() - started_ms,
            workers,
        },
        &[],
        &[],
    );
}

/// A helper's reply.
fn on_helper_message(helper: usize, heard: Received) {
    match heard.reply {
        WorkerReply::SearchCandidatesRan { gen, ran } => {
            let all_back = RUNNING.with(|r| {
                let mut slot = r.borrow_mut();
                let Some(running) = slot.as_mut().filter(|r| r.gen == gen) else {
                    return false;
                };
                let Some(owed) = running.owed.get_mut(helper) else {
                    return false;
                };
                for (place, result) in ran {
                    if let Some(i) = running.wave.iter().position(|c| c.place == place) {
                        running.ran[i] = Some(result);
                    }
                }
                owed.clear();
                running.helped[helper] = true;
                running.owed.iter().all(Vec::is_empty)
            });
            if all_back {
                record(gen);
                advance(gen);
            }
        }
        WorkerReply::Panic { .. } | WorkerReply::Crashed { .. } => helper_gone(helper),
        _ => {}
    }
}

/// A helper stopped: its share of the wave runs here (in `record`).
fn helper_gone(helper: usize) {
    let gen = RUNNING.with(|r| {
        let mut slot = r.borrow_mut();
        let running = slot.as_mut()?;
        let owed = running.owed.get_mut(helper)?;
        if owed.is_empty() {
            return None;
        }
        owed.clear();
        running
            .owed
            .iter()
            .all(Vec::is_empty)
            .then_some(running.gen)
    });
    if let Some(gen) = gen {
        record(gen);
        advance(gen);
    }
}

/// In a helper: simulates the candidates of a `SearchCandidates` request.
pub fn run_candidates(gen: u64, candidates: &[Candidate]) {
    let ran = candidates
        .iter()
        .map(|c| (c.place, search::simulate_candidate(c)))
        .collect();
    post(&WorkerReply::SearchCandidatesRan { gen, ran }, &[], &[]);
}

/// The cores the browser says this machine has (one when it does not say).
fn cores() -> f64 {
    use wasm_bindgen::JsCast;
    js_sys::global()
        .dyn_into::<web_sys::WorkerGlobalScope>()
        .map(|scope| scope.navigator().hardware_concurrency())
        .unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_helper_per_core_beyond_this_worker_at_most_seven() {
        assert_eq!(helpers_for(0.0), 0);
        assert_eq!(helpers_for(1.0), 0);
        assert_eq!(helpers_for(2.0), 1);
        assert_eq!(helpers_for(8.0), 7);
        assert_eq!(helpers_for(64.0), MAX_SEARCH_HELPERS);
    }

    #[test]
    fn a_wave_is_dealt_in_turn_and_every_candidate_once() {
        let shares = 3;
        let dealt: Vec<usize> = (0..7).map(|i| share_of(i, shares)).collect();
        assert_eq!(dealt, vec![0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(share_of(5, 1), 0);
    }
}
