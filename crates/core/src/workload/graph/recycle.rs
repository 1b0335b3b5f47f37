//! Memory handed from one run to the next on the same thread.
//!
//! A short run of the 1T step with every overlap on builds a graph of about
//! 400 000 ops and runs it: about 50 MB of arrays, freed at its end. The
//! allocator gives arrays that large back to the system, so the next run's
//! come as fresh pages that the kernel zeroes on first touch: building that
//! graph took 74 ms on fresh pages and 26 ms on pages used before (measured
//! on this project's 2-core machine).
//!
//! Within [`within`], the largest arrays a run frees at its very end (the
//! graph's tasks, their windows and metadata, the run's per-task times) wait here
//! for the thread's next run, and are freed when the outermost `within`
//! returns. Outside it nothing is kept. Arrays freed earlier in a run (the
//! dependency lists, the engine's per-task state) are not kept: they would
//! sit idle through the rest of the run and raise its peak.
//!
//! Only the memory is reused: every array handed out is empty, so a run's
//! figures cannot depend on which run held it before.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;

/// Arrays smaller than this are not kept: the allocator reuses them anyway.
const KEPT_FROM_BYTES: usize = 64 * 1024;

/// Spare arrays kept per element type: a run holds at most about ten of
/// one type at once (the graph's index arrays and their temporaries).
const SPARES_PER_TYPE: usize = 16;

#[derive(Default)]
struct Spares {
    /// How many [`within`] calls are open on this thread.
    depth: u32,
    /// Per element type `T`, a `Vec<Vec<T>>` of empty arrays.
    by_type: HashMap<TypeId, Box<dyn Any>>,
}

thread_local! {
    static SPARES: RefCell<Spares> = RefCell::new(Spares::default());
}

/// Runs `f` with the large arrays freed inside it kept for reuse inside it
/// on this thread; they are freed when the outermost call returns (or
/// unwinds).
pub(crate) fn within<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            SPARES.with_borrow_mut(|s| {
                s.depth -= 1;
                if s.depth == 0 {
                    s.by_type.clear();
                }
            });
        }
    }
    SPARES.with_borrow_mut(|s| s.depth += 1);
    let _leave = Leave;
    f()
}

/// Runs `f` as if nothing were open on this thread: the arrays kept before
/// stay aside (untouched, for the caller's next run), and `f`'s runs keep
/// arrays only inside their own [`within`] scopes, freed as each closes, as
/// they would be run alone. For independent jobs of very different sizes
/// on one thread (a search's candidates): a kept array is taken only where
/// it has the room, so a pool shared across them fills with the largest
/// job's arrays while the smaller ones allocate their own. Nor does one
/// job keep a pool across its own runs' scopes: a step whose steady state
/// is still settling runs three short runs at each of three margins, each
/// larger than the last, and a pool kept across them held the earlier
/// margins' arrays idle beside the later ones (a ZB-1p candidate of the 1T
/// search, PP 32: 455 MB at its peak against 135 MB for its largest run
/// alone, and two side by side took the search past 1.2 GB).
pub(crate) fn apart<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Spares>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                SPARES.with_borrow_mut(|s| *s = outer);
            }
        }
    }
    let outer = SPARES.with_borrow_mut(std::mem::take);
    let _restore = Restore(Some(outer));
    f()
}

/// An empty array with room for at least `capacity` elements: the
/// smallest kept one that has the room, else the largest kept one grown to
/// it exactly, else a new one.
pub(crate) fn with_capacity<T: 'static>(capacity: usize) -> Vec<T> {
    let kept = SPARES.with_borrow_mut(|s| {
        let list = s
            .by_type
            .get_mut(&TypeId::of::<T>())?
            .downcast_mut::<Vec<Vec<T>>>()?;
        let fits = (0..list.len())
            .filter(|&i| list[i].capacity() >= capacity)
            .min_by_key(|&i| list[i].capacity());
        let pick = fits.or_else(|| (0..list.len()).max_by_key(|&i| list[i].capacity()))?;
        Some(list.swap_remove(pick))
    });
    match kept {
        Some(mut v) => {
            // Exactly: growing a kept array by the amortized rule would
            // double it, and the next run's peak with it.
            v.reserve_exact(capacity);
            v
        }
        None => Vec::with_capacity(capacity),
    }
}

/// An array of `len` copies of `value` (as `vec![value; len]`), on kept memory
/// when there is some.
pub(crate) fn filled<T: Clone + 'static>(len: usize, value: T) -> Vec<T> {
    let mut v = with_capacity(len);
    v.resize(len, value);
    v
}

/// Keeps `v`'s memory for the thread's next run, when inside [`within`] and
/// large enough to be worth it; else frees it.
pub(crate) fn give<T: 'static>(mut v: Vec<T>) {
    if v.capacity() * std::mem::size_of::<T>().max(1) < KEPT_FROM_BYTES {
        return;
    }
    v.clear();
    SPARES.with_borrow_mut(|s| {
        if s.depth == 0 {
            return;
        }
        let list = s
            .by_type
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(Vec::<Vec<T>>::new()));
        if let Some(list) = list.downcast_mut::<Vec<Vec<T>>>() {
            if list.len() < SPARES_PER_TYPE {
                list.push(v);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: usize = KEPT_FROM_BYTES;

    #[test]
    fn arrays_freed_inside_are_reused_inside_and_come_back_empty() {
        within(|| {
            let mut a: Vec<u8> = with_capacity(BIG);
            a.extend(std::iter::repeat_n(7, BIG));
            let at = a.as_ptr();
            give(a);
            let b: Vec<u8> = with_capacity(BIG / 2);
            assert_eq!(b.as_ptr(), at, "the kept array is handed out again");
            assert!(b.is_empty());
            let c: Vec<u8> = filled(10, 3);
            assert_eq!(c, vec![3; 10]);
        });
    }

    #[test]
    fn nothing_is_kept_outside() {
        let a: Vec<u8> = with_capacity(BIG);
        let at = a.as_ptr();
        give(a);
        within(|| {
            // A new allocation may land at the same address; what matters is
            // that no array was kept: the list for the type is absent.
            let kept = SPARES.with_borrow(|s| s.by_type.contains_key(&TypeId::of::<u8>()));
            assert!(!kept, "an array freed outside `within` was kept ({at:?})");
        });
        within(|| give(vec![0u8; BIG]));
        let kept = SPARES.with_borrow(|s| s.by_type.len());
        assert_eq!(kept, 0, "the outermost `within` frees what it kept");
    }

    #[test]
    fn a_job_apart_keeps_nothing_after_it_and_leaves_the_pool_as_it_was() {
        within(|| {
            give(Vec::<u16>::with_capacity(4 * BIG));
            apart(|| {
                let spare = SPARES.with_borrow(|s| s.by_type.len());
                assert_eq!(spare, 0, "the job starts with a pool of its own");
                // Outside the job's own scopes nothing is kept...
                give(Vec::<u16>::with_capacity(8 * BIG));
                let kept = SPARES.with_borrow(|s| s.by_type.len());
                assert_eq!(kept, 0, "kept outside any of the job's scopes");
                // ...and inside one, only until it closes.
                within(|| {
                    give(Vec::<u16>::with_capacity(8 * BIG));
                    assert_eq!(with_capacity::<u16>(BIG).capacity(), 8 * BIG);
                    give(Vec::<u64>::with_capacity(BIG));
                });
                let kept = SPARES.with_borrow(|s| s.by_type.len());
                assert_eq!(kept, 0, "a scope of the job kept arrays after it closed");
            });
            let kept = SPARES.with_borrow(|s| {
                s.by_type
                    .get(&TypeId::of::<u16>())
                    .and_then(|l| l.downcast_ref::<Vec<Vec<u16>>>())
                    .map(|l| l.iter().map(Vec::capacity).collect::<Vec<_>>())
            });
            assert_eq!(kept, Some(vec![4 * BIG]), "the outer pool is untouched");
            let job_kept = SPARES.with_borrow(|s| s.by_type.contains_key(&TypeId::of::<u64>()));
            assert!(!job_kept, "what the job kept is freed at its end");
        });
    }

    #[test]
    fn the_smallest_array_with_room_is_taken_first() {
        within(|| {
            give(Vec::<u32>::with_capacity(4 * BIG));
            give(Vec::<u32>::with_capacity(BIG));
            assert_eq!(with_capacity::<u32>(BIG / 2).capacity(), BIG);
            assert_eq!(with_capacity::<u32>(2 * BIG).capacity(), 4 * BIG);
        });
    }
}
