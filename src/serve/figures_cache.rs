//! The figures of the last few large scenarios the worker simulated, kept as
//! their reports. Flipping a switch on a large scenario and back (or
//! between two presets) asks again for a scenario seen a moment ago: its
//! figures are shown at once rather than simulated again. A scenario's
//! report depends on the scenario alone (the core's report-only path equals
//! its full run, whatever baseline the simulator kept), so a kept report is
//! exactly the one a new run would give.

use std::collections::VecDeque;

use overlap_core::Scenario;

/// How many scenarios' figures are kept: a few switches' worth. A report is
/// a few kilobytes, so the cache stays small beside a timeline.
pub const FIGURES_KEPT: usize = 8;

/// The most recently used scenarios' reports, newest last.
#[derive(Debug)]
pub struct FiguresCache<R> {
    entries: VecDeque<(Scenario, R)>,
}

impl<R> Default for FiguresCache<R> {
    fn default() -> Self {
        Self {
            entries: VecDeque::new(),
        }
    }
}

impl<R: Clone> FiguresCache<R> {
    /// The kept report of `scenario`, marked as the most recently used.
    pub fn get(&mut self, scenario: &Scenario) -> Option<R> {
        let at = self.entries.iter().position(|(s, _)| s == scenario)?;
        let entry = self.entries.remove(at)?;
        let report = entry.1.clone();
        self.entries.push_back(entry);
        Some(report)
    }

    /// Keeps `report` as `scenario`'s, dropping the least recently used
    /// entry beyond `FIGURES_KEPT`.
    pub fn put(&mut self, scenario: &Scenario, report: R) {
        if let Some(at) = self.entries.iter().position(|(s, _)| s == scenario) {
            self.entries.remove(at);
        }
        self.entries.push_back((scenario.clone(), report));
        while self.entries.len() > FIGURES_KEPT {
            self.entries.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::presets;

    fn scenario(tp_overlap: bool, bucket_step: u32) -> Scenario {
        let mut input = presets::default_preset().input();
        input.overlap.tp = Some(tp_overlap);
        input.overlap.bucket_mb = Some(25.0 * f64::from(bucket_step));
        input.resolve().expect("the default preset resolves")
    }

    #[test]
    fn a_kept_report_is_found_only_for_its_own_scenario() {
        let mut cache = FiguresCache::<String>::default();
        cache.put(&scenario(false, 8), "off".to_string());
        cache.put(&scenario(true, 8), "on".to_string());
        assert_eq!(cache.get(&scenario(false, 8)).as_deref(), Some("off"));
        assert_eq!(cache.get(&scenario(true, 8)).as_deref(), Some("on"));
        assert_eq!(cache.get(&scenario(true, 16)), None);
    }

    #[test]
    fn the_least_recently_used_report_goes_first() {
        let mut cache = FiguresCache::<String>::default();
        for m in 1..=FIGURES_KEPT as u32 {
            cache.put(&scenario(false, m), m.to_string());
        }
        // Used again: now the newest.
        assert!(cache.get(&scenario(false, 1)).is_some());
        cache.put(&scenario(true, 1), "new".to_string());
        assert_eq!(cache.get(&scenario(false, 2)), None);
        assert_eq!(cache.get(&scenario(false, 1)).as_deref(), Some("1"));
        assert_eq!(cache.get(&scenario(true, 1)).as_deref(), Some("new"));
        assert_eq!(cache.entries.len(), FIGURES_KEPT);
    }
}
