//! Process groups inferred from the matching, for traces that state none
//! (PyTorch before 2.1 wrote no `Process Group Ranks` on its records, and
//! a trace of a library outside c10d has no records at all).
//!
//! Without records, collectives are matched by stream, kernel name and
//! size, in launch order (`matching`): the k-th all-reduce of stream 13 on
//! every rank is one set. When several groups share a stream, a name and a
//! size (the TP groups [0..3] and [4..7] of TP 4 x DP 2), that set holds
//! several collectives at once. They are told apart by when they end: a
//! collective cannot end on any of its ranks before its last rank has
//! arrived, so its kernels end together on all its ranks (within about
//! 50 µs on the 8-rank Megatron TP 8 trace issue 57 describes), while two
//! groups' collectives end together only by chance.
//!
//! Each rank's group is the set of ranks it ended with in most of the
//! key's collectives (at least two thirds of them). The groups must then
//! look like a process group of a parallel layout: two ranks or more,
//! evenly spaced, all of one size. Anything else is not inferred, and said.

use std::collections::{BTreeMap, HashMap};

/// Kernels of one collective ending within this of each other end
/// together, µs: a collective's ranks end within a few µs over NVLink and
/// within about 50 µs on the 8-rank Megatron TP 8 trace of issue 57, whose
/// eight A100s end each all-reduce within about 50 µs of each other.
pub const END_TOGETHER_US: f64 = 50.0;

/// Why a key's groups could not be inferred.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotInferred {
    /// Some rank ended with different ranks from one collective to the next.
    Inconsistent,
    /// The groups found are not a parallel layout's (a rank alone, ranks
    /// not evenly spaced, groups of different sizes).
    NotALayout,
    /// A rank appears twice in one collective (a file of several GPUs).
    RepeatedRank,
}

impl NotInferred {
    /// Says why, as a clause.
    pub fn why(&self) -> &'static str {
        match self {
            NotInferred::Inconsistent => {
                "its ranks do not end its collectives together in the same sets from one to the next"
            }
            NotInferred::NotALayout => {
                "the ranks that end its collectives together are not groups of a parallel layout (a rank alone, uneven spacing or sizes)"
            }
            NotInferred::RepeatedRank => "a rank holds several GPUs in one file",
        }
    }
}

/// The groups of one key: `collectives` holds each collective's kernels as
/// (rank, end µs). Disjoint groups, each sorted, ordered by their first rank.
pub fn groups_of(collectives: &[Vec<(u64, f64)>]) -> Result<Vec<Vec<u64>>, NotInferred> {
    // (rank, the first rank of the set it ended with) -> collectives.
    let mut votes: HashMap<(u64, u64), u32> = HashMap::new();
    let mut seen: BTreeMap<u64, u32> = BTreeMap::new();
    let mut ends: Vec<(f64, u64)> = Vec::new();
    for c in collectives {
        if c.len() < 2 {
            continue;
        }
        ends.clear();
        ends.extend(c.iter().map(|&(r, e)| (e, r)));
        ends.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut start = 0;
        for i in 1..=ends.len() {
            if i == ends.len() || ends[i].0 - ends[i - 1].0 > END_TOGETHER_US {
                let set = &ends[start..i];
                let first = set.iter().map(|x| x.1).min().unwrap_or(0);
                for &(_, r) in set {
                    *votes.entry((r, first)).or_default() += 1;
                }
                start = i;
            }
        }
        for &(r, _) in c {
            *seen.entry(r).or_default() += 1;
        }
        let mut ranks: Vec<u64> = c.iter().map(|x| x.0).collect();
        ranks.sort_unstable();
        if ranks.windows(2).any(|w| w[0] == w[1]) {
            return Err(NotInferred::RepeatedRank);
        }
    }
    // Each rank's most frequent set, named by its first rank.
    let mut best: BTreeMap<u64, (u64, u32)> = BTreeMap::new();
    for (&(r, first), &n) in &votes {
        let e = best.entry(r).or_insert((first, 0));
        if n > e.1 || (n == e.1 && first < e.0) {
            *e = (first, n);
        }
    }
    let mut groups: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (&r, &(first, n)) in &best {
        if 3 * n < 2 * seen[&r] {
            return Err(NotInferred::Inconsistent);
        }
        groups.entry(first).or_default().push(r);
    }
    let groups: Vec<Vec<u64>> = groups.into_values().collect();
    let size = groups.first().map_or(0, Vec::len);
    let layout = size >= 2
        && groups.iter().all(|g| {
            g.len() == size && {
                let stride = g[1] - g[0];
                stride > 0 && g.windows(2).all(|w| w[1] - w[0] == stride)
            }
        });
    if !layout {
        return Err(NotInferred::NotALayout);
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One collective of TP 4 x DP 2's two TP groups, ending at `a` on
    /// ranks 0-3 and `b` on ranks 4-7, each rank a few µs apart.
    fn two_groups(a: f64, b: f64) -> Vec<(u64, f64)> {
        (0..8)
            .map(|r| (r, if r < 4 { a } else { b } + r as f64))
            .collect()
    }

    #[test]
    fn groups_that_end_apart_are_told_apart() {
        let c: Vec<_> = (0..10)
            .map(|k| two_groups(1000.0 * k as f64, 1000.0 * k as f64 + 300.0))
            .collect();
        assert_eq!(groups_of(&c), Ok(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]));
    }

    #[test]
    fn a_chance_meeting_does_not_merge_groups() {
        // One collective in ten, the two groups end together.
        let c: Vec<_> = (0..10)
            .map(|k| {
                let a = 1000.0 * k as f64;
                two_groups(a, if k == 3 { a } else { a + 300.0 })
            })
            .collect();
        assert_eq!(groups_of(&c), Ok(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]));
    }

    #[test]
    fn groups_always_ending_together_read_as_one() {
        // Indistinguishable from one group of eight: what the docs say.
        let c: Vec<_> = (0..4)
            .map(|k| two_groups(k as f64 * 1e3, k as f64 * 1e3))
            .collect();
        assert_eq!(groups_of(&c), Ok(vec![(0..8).collect()]));
    }

    #[test]
    fn what_is_not_a_layout_is_refused() {
        // Rank 7 alone (a skewed clock), every time.
        let c: Vec<_> = (0..4)
            .map(|k| {
                let mut v = two_groups(k as f64 * 1e3, k as f64 * 1e3);
                v[7].1 += 500.0;
                v
            })
            .collect();
        assert_eq!(groups_of(&c), Err(NotInferred::NotALayout));
        // Sets that change every time: {0, 1} {2, 3}, then {0, 2} {1, 3},
        // then {0, 3} {1, 2}; rank 2 is with a different first rank each time.
        let pairs: [[u64; 2]; 3] = [[0, 1], [0, 2], [0, 3]];
        let c: Vec<_> = (0..6)
            .map(|k| {
                (0..4u64)
                    .map(|r| {
                        (
                            r,
                            if pairs[k % 3].contains(&r) {
                                0.0
                            } else {
                                400.0
                            },
                        )
                    })
                    .collect()
            })
            .collect();
        assert_eq!(groups_of(&c), Err(NotInferred::Inconsistent));
        assert_eq!(
            groups_of(&[vec![(0, 0.0), (0, 0.0)]]),
            Err(NotInferred::RepeatedRank)
        );
    }
}
