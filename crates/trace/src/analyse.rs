//! An import's files in rank order, each file's kernels identified once and
//! the collectives matched across ranks: what the figures and the bars are
//! both read from.

use crate::read::FileTrace;
use crate::rules::Classifier;
use crate::{identify, matching};

/// Files in the order their GPUs are listed: by rank, then name.
pub(crate) fn sort_by_rank(order: &mut [&FileTrace]) {
    order.sort_by(|a, b| {
        (a.rank.unwrap_or(u64::MAX), &a.source).cmp(&(b.rank.unwrap_or(u64::MAX), &b.source))
    });
}

/// An import's files in rank order, their kernels identified (the axes of
/// inferred groups filled in) and their collectives matched: what the
/// figures and the bars are both read from.
pub(crate) struct Analysed<'a> {
    pub order: Vec<&'a FileTrace>,
    pub ids: Vec<identify::Identified>,
    pub matched: matching::Matched,
}

/// Identifies and matches `files` once.
pub(crate) fn analyse<'a>(files: &'a [FileTrace], classifier: &Classifier) -> Analysed<'a> {
    let mut order: Vec<&FileTrace> = files.iter().collect();
    sort_by_rank(&mut order);
    let mut ids: Vec<identify::Identified> = order
        .iter()
        .map(|f| identify::identify(f, classifier))
        .collect();
    let refs: Vec<matching::GpuRef> = ids
        .iter()
        .enumerate()
        .flat_map(|(file, id)| {
            id.devices
                .iter()
                .map(move |(_, kernels)| matching::GpuRef { file, kernels })
        })
        .collect();
    let matched = matching::match_collectives(&order, &ids, &refs);
    // A kernel the trace gives no axis takes its inferred group's.
    for (f, list) in matched.inferred_of.iter().enumerate() {
        for &(k, g) in list {
            if let Some(c) = ids[f].comm[k as usize].as_mut() {
                c.axis = c.axis.or(matched.inferred[g as usize].axis);
            }
        }
    }
    Analysed {
        order,
        ids,
        matched,
    }
}
