//! What the links did, recorded apart from the bandwidth model: the model
//! reports each rate change to a [`LinkObserver`], and [`LinkLog`] keeps the
//! busy, shared and byte counts the report reads and the bandwidth samples
//! the page draws. The baseline run records nothing, and the model then
//! skips computing per-link rates.

use crate::model::axis::Axis;
use serde::Serialize;

use crate::workload::graph::task::ResourceId;

/// Bandwidth on one link from `t_s` until the next sample, per axis, GB/s.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkSample {
    /// When the sample starts, seconds from the step's start.
    pub t_s: f64,
    /// Bandwidth per axis (TP, PP, DP), GB/s.
    pub gbps: [f64; Axis::COUNT],
}

/// How many pairs of distinct axes there are.
pub const AXIS_PAIRS: usize = Axis::COUNT * (Axis::COUNT - 1) / 2;

/// A pair of axes as the report's `shared_by` names it: both codes in axis
/// order, joined by `+` (`"dp+ep"`).
pub fn pair_key(a: Axis, b: Axis) -> String {
    let (a, b) = if a.index() <= b.index() {
        (a, b)
    } else {
        (b, a)
    };
    format!("{}+{}", a.name(), b.name())
}

/// The pairs of distinct axes, in a fixed order: (TP, PP), (TP, DP), ...,
/// (EP, CP); a pair's place in it indexes [`ResourceLog::pairs_s`].
pub fn axis_pairs() -> impl Iterator<Item = (Axis, Axis)> {
    Axis::ALL
        .into_iter()
        .enumerate()
        .flat_map(|(i, a)| Axis::ALL[i + 1..].iter().map(move |&b| (a, b)))
}

/// One resource's sums up to a moment (a period mark).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkAt {
    /// Time it carried traffic.
    pub busy_s: f64,
    /// Time two or more axes moved data on it.
    pub shared_s: f64,
    /// Per pair of axes ([`axis_pairs`] order), the time both moved data.
    pub pairs_s: [f64; AXIS_PAIRS],
}

/// Busy and shared time of one resource, and optionally its bandwidth samples.
#[derive(Clone, Debug, Default)]
pub struct ResourceLog {
    /// Time the resource carried traffic, seconds.
    pub busy_s: f64,
    /// Time during which two or more axes moved data on it.
    pub shared_s: f64,
    /// Per pair of axes ([`axis_pairs`] order), the time both moved data
    /// on it at once.
    pub pairs_s: [f64; AXIS_PAIRS],
    /// Bytes that crossed it.
    pub bytes: f64,
    /// Bandwidth samples, when recorded.
    pub samples: Vec<LinkSample>,
    last_t: f64,
    last_gbps: [f64; Axis::COUNT],
    /// When the last sample starts: a change at that same instant replaces
    /// it, and knowing so here spares reading the sample itself (a cache
    /// miss per rate change on a large step).
    last_sample_t: Option<f64>,
}

/// Told by a bandwidth model whenever the rates on a resource may have changed.
pub(crate) trait LinkObserver {
    /// Whether the model should compute per-resource rates for it at all.
    fn wants_rates(&self) -> bool;
    /// Whether it reads the rates of `resource` (the model may skip the others).
    fn watches(&self, resource: ResourceId) -> bool {
        let _ = resource;
        true
    }
    /// From `now` on, `resource` carries `gbps` per axis.
    fn rates(&mut self, now: f64, resource: ResourceId, gbps: [f64; Axis::COUNT]);
}

/// Per resource, its log; bandwidth samples only when asked for.
pub(crate) struct LinkLog {
    pub logs: Vec<ResourceLog>,
    samples: bool,
}

impl LinkLog {
    /// Logs for resources `0..resources`: the links. Resources past them
    /// (each GPU's HBM, which the network also shares) are not logged: no
    /// reader asks for them, and on a large step their rate changes would
    /// be millions of samples.
    pub fn new(resources: usize, samples: bool) -> Self {
        Self {
            logs: vec![ResourceLog::default(); resources],
            samples,
        }
    }

    /// Every resource's busy, shared and per-pair seconds as they would
    /// stand were its log closed now, the logs left as they are.
    pub fn busy_shared_at(&self, now: f64) -> Vec<LinkAt> {
        self.logs
            .iter()
            .map(|log| {
                let mut closed = ResourceLog {
                    samples: Vec::new(),
                    ..*log
                };
                close(&mut closed, now);
                LinkAt {
                    busy_s: closed.busy_s,
                    shared_s: closed.shared_s,
                    pairs_s: closed.pairs_s,
                }
            })
            .collect()
    }

    /// Closes every resource's log at the end of the step.
    pub fn finish(&mut self, now: f64) {
        for log in &mut self.logs {
            close(log, now);
        }
    }
}

impl LinkObserver for LinkLog {
    fn wants_rates(&self) -> bool {
        true
    }

    fn watches(&self, resource: ResourceId) -> bool {
        (resource as usize) < self.logs.len()
    }

    fn rates(&mut self, now: f64, resource: ResourceId, gbps: [f64; Axis::COUNT]) {
        let Some(log) = self.logs.get_mut(resource as usize) else {
            return;
        };
        close(log, now);
        if gbps == log.last_gbps {
            return;
        }
        log.last_gbps = gbps;
        if !self.samples {
            return;
        }
        if log.last_sample_t == Some(now) {
            if let Some(last) = log.samples.last_mut() {
                last.gbps = gbps;
                return;
            }
        }
        log.last_sample_t = Some(now);
        log.samples.push(LinkSample { t_s: now, gbps });
    }
}

/// Counts the time since the log's last change at its last rates.
fn close(log: &mut ResourceLog, now: f64) {
    let dt = now - log.last_t;
    if dt > 0.0 {
        let active = log.last_gbps.iter().filter(|g| **g > 1e-9).count();
        if active > 0 {
            log.busy_s += dt;
            log.bytes += log.last_gbps.iter().sum::<f64>() * 1e9 * dt;
        }
        if active > 1 {
            log.shared_s += dt;
            let on = log.last_gbps.map(|g| g > 1e-9);
            for (k, (a, b)) in axis_pairs().enumerate() {
                if on[a.index()] && on[b.index()] {
                    log.pairs_s[k] += dt;
                }
            }
        }
    }
    log.last_t = now;
}
