//! Which simulated GPUs the timeline draws.
//!
//! The timeline fits every simulated GPU into a fixed height, so a large
//! step's lanes shrink: the 1T step's 64 GPUs get about 9 px each for a
//! compute lane and three communication lanes, too thin to tell one lane
//! from the next. That view stays (it shows the pipeline's shape); a group
//! of [`GROUP_GPUS`] drawn alone gets lanes at their full height.

use std::ops::Range;

/// GPUs in a group the page offers: as many as the timeline's height budget
/// holds at full lane height (`layout`: 71 px per GPU against 560 px).
pub const GROUP_GPUS: usize = 8;

/// The highest GPU index a link may name, as for `link_gpu`: far past any
/// step the core simulates. The scenario's own count is checked once its
/// timeline exists ([`ShownGpus::refusal`]).
const MAX_GPU_INDEX: usize = 99_999;

/// Which simulated GPUs the timeline draws.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShownGpus {
    /// Every simulated GPU: the overview.
    #[default]
    All,
    /// The GPUs `first` to `last` (inclusive), by index into the timeline's GPUs.
    Range {
        /// The first GPU drawn.
        first: usize,
        /// The last GPU drawn.
        last: usize,
    },
}

impl ShownGpus {
    /// The GPUs drawn of a timeline of `gpus`: the range, or all of them
    /// when it does not fit in it.
    pub fn range(self, gpus: usize) -> Range<usize> {
        match self {
            ShownGpus::Range { first, last } if self.fits(gpus) => first..last + 1,
            _ => 0..gpus,
        }
    }

    /// Whether a timeline of `gpus` has every GPU it names.
    pub fn fits(self, gpus: usize) -> bool {
        match self {
            ShownGpus::All => true,
            ShownGpus::Range { last, .. } => last < gpus,
        }
    }

    /// What the page offers for a timeline of `gpus`: all of them, then
    /// consecutive groups of [`GROUP_GPUS`]; all alone when they fit at
    /// full height anyway.
    pub fn choices(gpus: usize) -> Vec<ShownGpus> {
        let mut out = vec![ShownGpus::All];
        if gpus > GROUP_GPUS {
            out.extend((0..gpus).step_by(GROUP_GPUS).map(|first| ShownGpus::Range {
                first,
                last: (first + GROUP_GPUS).min(gpus) - 1,
            }));
        }
        out
    }

    /// As a link and the page's picker write it: `all`, `8-15`, or `8` for
    /// one GPU.
    pub fn key(self) -> String {
        match self {
            ShownGpus::All => "all".to_string(),
            ShownGpus::Range { first, last } if first == last => first.to_string(),
            ShownGpus::Range { first, last } => format!("{first}-{last}"),
        }
    }

    /// Reads [`ShownGpus::key`]'s form; the refusal says what is valid.
    pub fn parse(raw: &str) -> Result<ShownGpus, String> {
        let index = |s: &str| {
            s.trim()
                .parse::<usize>()
                .ok()
                .filter(|&g| g <= MAX_GPU_INDEX)
        };
        if raw.trim() == "all" {
            return Ok(ShownGpus::All);
        }
        let parsed = match raw.split_once('-') {
            Some((a, b)) => index(a).zip(index(b)),
            None => index(raw).map(|g| (g, g)),
        };
        match parsed {
            Some((first, last)) if first <= last => Ok(ShownGpus::Range { first, last }),
            _ => Err(format!(
                "\"{raw}\" is not valid: all, or simulated GPUs as first-last \
                 with 0 ≤ first ≤ last (for example 8-15)"
            )),
        }
    }

    /// Why a timeline of `gpus` cannot show it, if it cannot.
    pub fn refusal(self, gpus: usize) -> Option<String> {
        (!self.fits(gpus)).then(|| {
            format!(
                "{} is not among this scenario's simulated GPUs: valid are 0 to {}",
                self.key(),
                gpus.saturating_sub(1)
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_step_offers_the_overview_and_groups_of_eight() {
        let choices = ShownGpus::choices(64);
        assert_eq!(choices.len(), 9);
        assert_eq!(choices[0], ShownGpus::All);
        assert_eq!(choices[1], ShownGpus::Range { first: 0, last: 7 });
        assert_eq!(
            choices[8],
            ShownGpus::Range {
                first: 56,
                last: 63
            }
        );
        // A last group shorter than the others ends at the last GPU.
        assert_eq!(
            ShownGpus::choices(12)[2],
            ShownGpus::Range { first: 8, last: 11 }
        );
        // Eight or fewer GPUs already have full-height lanes.
        assert_eq!(ShownGpus::choices(8), vec![ShownGpus::All]);
        assert_eq!(ShownGpus::choices(1), vec![ShownGpus::All]);
    }

    #[test]
    fn keys_read_back_and_bad_ones_say_what_is_valid() {
        for shown in [
            ShownGpus::All,
            ShownGpus::Range { first: 8, last: 15 },
            ShownGpus::Range { first: 3, last: 3 },
        ] {
            assert_eq!(ShownGpus::parse(&shown.key()), Ok(shown));
        }
        for bad in [
            "",
            "x",
            "15-8",
            "-3",
            "8-",
            "1.5",
            "99999999999",
            "0-100000",
        ] {
            let err = ShownGpus::parse(bad).unwrap_err();
            assert!(
                err.contains("first-last") && err.contains("8-15"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn a_range_past_the_step_shows_everything_and_is_refused_by_name() {
        let shown = ShownGpus::Range {
            first: 56,
            last: 63,
        };
        assert_eq!(shown.range(64), 56..64);
        assert_eq!(shown.refusal(64), None);
        assert_eq!(shown.range(16), 0..16);
        assert_eq!(
            shown.refusal(16).as_deref(),
            Some("56-63 is not among this scenario's simulated GPUs: valid are 0 to 15")
        );
        assert_eq!(ShownGpus::All.range(5), 0..5);
    }
}
