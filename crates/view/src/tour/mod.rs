//! The guided tour as data: each chapter's scenario (a preset and a setup),
//! the one change it is about, the prediction it asks for, and its text.
//!
//! Text never states a number of its own: every figure in it is a
//! placeholder filled from the chapter's own runs ([`template`]), which
//! choice was right is computed from the same runs ([`Chapter::answer`]),
//! and each remaining claim is checked by `tests/tour_*.rs` on the
//! chapter's own scenario. [`focus`] says where on the timeline the
//! chapter's effect is, so the page can zoom there.

mod chapter;
pub mod chapters;
pub mod focus;
pub mod template;

pub use chapter::{change_choice, share_gone_choice, Chapter, Outcome, Watch};
pub use chapters::CHAPTERS;
pub use focus::Focus;

/// How many chapters the tour has.
pub fn chapter_count() -> usize {
    CHAPTERS.len()
}

/// Chapter numbers that links written before a merge still carry, with
/// the chapter (1-based) each now opens. Chapter 14, "Small messages waste
/// the link", ran chapter 5's experiment with chapter 5's figures; its
/// explanation is part of chapter 5 now (issue 58). A number here is
/// never given to a new chapter: the chapter after it takes the next one
/// ([`link_number`]).
pub const RETIRED_CHAPTERS: &[(usize, usize)] = &[(14, 5)];

fn retired(n: usize) -> Option<usize> {
    RETIRED_CHAPTERS
        .iter()
        .find(|&&(old, _)| old == n)
        .map(|&(_, now)| now)
}

/// The number a link writes for chapter `chapter` (1-based, as the page
/// counts them): its place among the numbers no retired chapter holds, so
/// that a number once written keeps opening the same chapter.
pub fn link_number(chapter: usize) -> usize {
    (1..)
        .filter(|&n| retired(n).is_none())
        .nth(chapter.saturating_sub(1))
        .unwrap_or(chapter)
}

/// The highest number a link may carry: the last chapter's.
pub fn last_link_number() -> usize {
    link_number(chapter_count())
}

/// The chapter (1-based) a link's `chapter=N` opens: a retired number's
/// successor, else the chapter whose link number N is, else `None`.
pub fn chapter_of_link(n: usize) -> Option<usize> {
    if let Some(now) = retired(n) {
        return Some(now);
    }
    (1..=chapter_count()).find(|&c| link_number(c) == n)
}
