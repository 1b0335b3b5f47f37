//! Independent runs spread over the machine's cores.
//!
//! A step's figures come from several runs that share nothing: the steady
//! state's short runs (`steady_state`: three, or the one that marks its
//! periods), and as many of its all-off baseline. Each run is deterministic on its own and its result goes back
//! to its place in the list, so the figures are the same bit for bit
//! whatever the number of threads and whichever thread ran what. This
//! spreads the time of a step over the cores, not its cost: the work done
//! is the same as one after the other.
//!
//! WebAssembly in the page has no threads: the standard library there
//! counts one core and refuses to start a thread, so the runs go one after
//! the other on the caller's (the page spreads them over workers instead).

use crate::workload::graph::recycle;

/// How many threads to run independent work on: the cores this process may
/// use (one where the system does not say).
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// Memory the runs held at once may take, bytes: the goal for the
/// 1T step's peak (150 MB), so that running side by side does not trade
/// memory for time beyond it on a machine with many cores.
pub const RUNS_MEMORY_BYTES: u64 = 150 * 1024 * 1024;

/// A run's peak memory per op of its graph, bytes. Measured: the CLI on one
/// thread simulating 1T with every overlap on, whose largest run is a short
/// one of 68 micro-batches (417 851 ops), peaks 62.8 MiB above its start
/// (its graph, its run's arrays and the tally together, in the CLI's
/// allocator's huge pages; the highest of four).
pub const RUN_BYTES_PER_OP: u64 = 158;

/// How many runs of at most `ops_per_run` ops each fit in
/// [`RUNS_MEMORY_BYTES`] at once: at least one.
pub fn runs_at_once(ops_per_run: u64) -> usize {
    let per_run = ops_per_run.saturating_mul(RUN_BYTES_PER_OP).max(1);
    usize::try_from(RUNS_MEMORY_BYTES / per_run)
        .unwrap_or(usize::MAX)
        .max(1)
}

/// `f` of every item, in the items' order, on up to `threads` threads. Each
/// thread takes the next item not yet taken, so list the longest work
/// first, and keeps the large arrays one item frees for its next
/// (`workload::graph::recycle`). A thread the system refuses leaves its share to those that
/// started, this one included. A panic in `f` is raised again here.
pub(crate) fn map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.min(items.len());
    if threads <= 1 {
        return recycle::within(|| items.iter().map(f).collect());
    }
    spread(items, threads, &f)
}

fn spread<T: Sync, R: Send>(items: &[T], threads: usize, f: &(impl Fn(&T) -> R + Sync)) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let take = || {
        recycle::within(|| {
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else {
                    return done;
                };
                done.push((i, f(item)));
            }
        })
    };
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    std::thread::scope(|scope| {
        // This thread takes its share too: one fewer to start.
        let others: Vec<_> = (1..threads)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, take).ok())
            .collect();
        let mine = take();
        let theirs = others.into_iter().map(|h| {
            h.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        for (i, r) in theirs.flatten().chain(mine) {
            slots[i] = Some(r);
        }
    });
    slots
        .into_iter()
        .map(|r| r.expect("every item was taken once"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_whatever_the_threads() {
        let items: Vec<u64> = (0..37).collect();
        let one = map(&items, 1, |x| x * x + 1);
        for threads in [2, 3, 8, 100] {
            assert_eq!(
                map(&items, threads, |x| x * x + 1),
                one,
                "{threads} threads"
            );
        }
        assert!(map(&[] as &[u64], 4, |x| *x).is_empty());
    }

    #[test]
    fn as_many_runs_at_once_as_fit_the_memory() {
        assert_eq!(runs_at_once(0), usize::try_from(RUNS_MEMORY_BYTES).unwrap());
        // 1T with every overlap on: two short runs fit; a whole step of
        // the timeline's limit does not fit twice.
        assert_eq!(runs_at_once(417_851), 2);
        assert_eq!(runs_at_once(3_500_000), 1);
        assert_eq!(runs_at_once(u64::MAX), 1);
    }

    #[test]
    #[should_panic(expected = "item 5")]
    fn a_panic_in_a_run_is_raised_to_the_caller() {
        let items: Vec<u32> = (0..8).collect();
        map(&items, 3, |&x| assert!(x != 5, "item {x}"));
    }
}
