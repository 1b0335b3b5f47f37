//! Where the winner of a search leads the runner-up: the part of the step
//! (compute, an axis's exposed time, the bubble) it gains most on, and the
//! part it gives back most on, when that one differs more. A winner can
//! rank first with a larger bubble (a V schedule's bubble beside an
//! interleaved one's smaller compute, say): naming only the part that
//! differs most would then give the runner-up's advantage as the reason.

/// The two layouts' figure for one part of the step.
#[derive(Clone, Debug, PartialEq)]
pub struct PartPair {
    /// The part's name as a sentence writes it ("compute", "exposed TP").
    pub part: String,
    /// The winner's figure.
    pub winner: f64,
    /// The runner-up's figure.
    pub runner_up: f64,
}

impl PartPair {
    /// How much less the winner spends on this part (negative: more).
    fn gain(&self) -> f64 {
        self.runner_up - self.winner
    }
}

/// The comparison of the two layouts' parts.
#[derive(Clone, Debug, PartialEq)]
pub struct Lead {
    /// The part the winner spends least on against the runner-up, if any
    /// part is smaller for it.
    pub ahead: Option<PartPair>,
    /// The part the winner spends most on against the runner-up, when it
    /// differs more than `ahead` (or no part is smaller for the winner).
    pub behind: Option<PartPair>,
}

/// Compares each part of `winner` with the same part of `runner_up`; a
/// part one of them lacks counts zero there. In `winner`'s order first,
/// the first of equal differences kept, so the result is deterministic.
pub fn lead(winner: &[(String, f64)], runner_up: &[(String, f64)]) -> Lead {
    let mut pairs: Vec<PartPair> = winner
        .iter()
        .map(|(part, a)| PartPair {
            part: part.clone(),
            winner: *a,
            runner_up: runner_up
                .iter()
                .find(|(n, _)| n == part)
                .map_or(0.0, |x| x.1),
        })
        .collect();
    for (part, b) in runner_up {
        if !winner.iter().any(|(n, _)| n == part) {
            pairs.push(PartPair {
                part: part.clone(),
                winner: 0.0,
                runner_up: *b,
            });
        }
    }
    let pick = |better: fn(f64, f64) -> bool| {
        pairs.iter().fold(None::<&PartPair>, |best, p| match best {
            Some(b) if !better(p.gain(), b.gain()) => Some(b),
            _ => Some(p),
        })
    };
    let ahead = pick(|a, b| a > b).filter(|p| p.gain() > 0.0).cloned();
    let behind = pick(|a, b| a < b)
        .filter(|p| p.gain() < 0.0)
        .filter(|p| ahead.as_ref().is_none_or(|a| -p.gain() > a.gain()))
        .cloned();
    Lead { ahead, behind }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(v: &[(&str, f64)]) -> Vec<(String, f64)> {
        v.iter().map(|(n, x)| (n.to_string(), *x)).collect()
    }

    /// 145.6B's search on 1,536 A100: ZB-V ranks first with a bubble
    /// 137 ms larger than the interleaved runner-up's, on 46 ms less
    /// compute and 70 ms less exposed PP. The lead is PP's exposure; the
    /// bubble is what it gives back.
    #[test]
    fn a_winner_with_the_larger_bubble_leads_on_what_it_saves() {
        let w = parts(&[
            ("compute", 12969.1),
            ("exposed PP", 2.6),
            ("exposed DP", 39.1),
            ("bubble", 556.8),
        ]);
        let r = parts(&[
            ("compute", 13014.6),
            ("exposed PP", 72.5),
            ("exposed DP", 63.4),
            ("bubble", 420.1),
        ]);
        let l = lead(&w, &r);
        assert_eq!(l.ahead.as_ref().unwrap().part, "exposed PP");
        let behind = l.behind.unwrap();
        assert_eq!(behind.part, "bubble");
        assert_eq!((behind.winner, behind.runner_up), (556.8, 420.1));
    }

    /// When the winner's largest difference is in its favour, nothing is
    /// given back worth naming.
    #[test]
    fn a_winner_ahead_on_the_largest_difference_gives_nothing_back() {
        let w = parts(&[("compute", 100.0), ("bubble", 5.0), ("exposed TP", 2.0)]);
        let r = parts(&[("compute", 100.0), ("bubble", 40.0), ("exposed TP", 1.0)]);
        let l = lead(&w, &r);
        assert_eq!(l.ahead.unwrap().part, "bubble");
        assert_eq!(l.behind, None);
    }

    /// A part only one layout has counts zero on the other; a winner no
    /// part of which is smaller (it ranks first on memory at an equal
    /// step) has no lead, only the part it gives back.
    #[test]
    fn parts_one_layout_lacks_count_zero_and_a_tie_has_no_lead() {
        let w = parts(&[("compute", 10.0)]);
        let r = parts(&[("compute", 10.0), ("exposed EP", 3.0)]);
        assert_eq!(lead(&w, &r).ahead.unwrap().part, "exposed EP");
        let l = lead(&r, &w);
        assert_eq!(l.ahead, None);
        assert_eq!(l.behind.unwrap().part, "exposed EP");
        assert_eq!(
            lead(&w, &w),
            Lead {
                ahead: None,
                behind: None
            }
        );
    }
}
