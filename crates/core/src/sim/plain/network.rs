//! Fluid bandwidth sharing flow by flow (model.md section 2): the reference
//! for `crate::sim::network`, which shares one rate among the flows of a class.
//! Each link resource has a capacity; each active flow is a coflow that crosses resources with a weight
//! (the number of its lock-step member transfers on that resource) and moves
//! at one rate per member. Whenever a flow starts or ends, the rates of the
//! flows connected to it through shared resources are recomputed by weighted
//! max-min fairness (progressive filling). Flows elsewhere keep their rates:
//! their allocation cannot change, and skipping them keeps an event cheap.

use crate::model::axis::Axis;
use crate::sim::link_log::LinkObserver;
use crate::sim::network::{alone_rate, ResourceId, Usage};

pub(crate) struct Network {
    capacity_bps: Vec<f64>,
    /// Active flows per resource.
    users: Vec<Vec<u32>>,
    patterns: Vec<Vec<Usage>>,
    flow_pattern: Vec<u32>,
    flow_axis: Vec<u8>,
    /// Bytes per second per member, for active flows.
    pub rate: Vec<f64>,
    // Scratch for one recomputation, reused to avoid allocation per event.
    epoch: u32,
    res_mark: Vec<u32>,
    flow_mark: Vec<u32>,
    comp_res: Vec<ResourceId>,
    comp_flows: Vec<u32>,
    residual: Vec<f64>,
    wsum: Vec<f64>,
    frozen: Vec<bool>,
    changed: Vec<u32>,
}

impl Network {
    pub fn new(capacity_bps: Vec<f64>, flows: usize) -> Self {
        let r = capacity_bps.len();
        Self {
            users: vec![Vec::new(); r],
            patterns: Vec::new(),
            flow_pattern: vec![0; flows],
            flow_axis: vec![0; flows],
            rate: vec![0.0; flows],
            epoch: 0,
            res_mark: vec![0; r],
            flow_mark: vec![0; flows],
            comp_res: Vec::new(),
            comp_flows: Vec::new(),
            residual: vec![0.0; r],
            wsum: vec![0.0; r],
            frozen: vec![false; flows],
            changed: Vec::new(),
            capacity_bps,
        }
    }

    /// Registers a usage pattern; flows refer to it by index.
    pub fn add_pattern(&mut self, usage: Vec<Usage>) -> u32 {
        self.patterns.push(usage);
        (self.patterns.len() - 1) as u32
    }

    /// Starts a flow; returns the flows whose rate changed (the new one included).
    pub fn add(&mut self, flow: u32, pattern: u32, axis: u8) -> &[u32] {
        self.flow_pattern[flow as usize] = pattern;
        self.flow_axis[flow as usize] = axis;
        let mut alone = true;
        for u in &self.patterns[pattern as usize] {
            let list = &mut self.users[u.resource as usize];
            alone &= list.is_empty();
            list.push(flow);
        }
        if alone {
            // Nobody else on its links: it gets its bottleneck, nothing else moves.
            self.rate[flow as usize] = alone_rate(&self.patterns[pattern as usize], |r| {
                self.capacity_bps[r as usize]
            });
            self.changed.clear();
            self.changed.push(flow);
            self.touch_pattern(pattern);
            return &self.changed;
        }
        self.recompute(flow, true)
    }

    /// Ends a flow; returns the flows whose rate changed.
    pub fn remove(&mut self, flow: u32) -> &[u32] {
        let pattern = self.flow_pattern[flow as usize];
        for u in &self.patterns[pattern as usize] {
            let list = &mut self.users[u.resource as usize];
            if let Some(pos) = list.iter().position(|&f| f == flow) {
                list.swap_remove(pos);
            }
        }
        self.rate[flow as usize] = 0.0;
        let pattern = &self.patterns[pattern as usize];
        if pattern
            .iter()
            .all(|u| self.users[u.resource as usize].is_empty())
        {
            self.changed.clear();
            self.touch_pattern(self.flow_pattern[flow as usize]);
            return &self.changed;
        }
        self.recompute(flow, false)
    }

    /// The resources whose rates the last change may have moved: the pattern's own.
    fn touch_pattern(&mut self, pattern: u32) {
        self.comp_res.clear();
        for u in &self.patterns[pattern as usize] {
            self.comp_res.push(u.resource);
        }
    }

    fn recompute(&mut self, seed: u32, seed_active: bool) -> &[u32] {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.res_mark.iter_mut().for_each(|m| *m = 0);
            self.flow_mark.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        self.comp_res.clear();
        self.comp_flows.clear();
        self.changed.clear();

        // The connected component: resources of the seed, every flow on them,
        // their resources, and so on.
        for u in &self.patterns[self.flow_pattern[seed as usize] as usize] {
            if self.res_mark[u.resource as usize] != epoch {
                self.res_mark[u.resource as usize] = epoch;
                self.comp_res.push(u.resource);
            }
        }
        if seed_active {
            self.flow_mark[seed as usize] = epoch;
            self.comp_flows.push(seed);
        }
        let mut i = 0;
        while i < self.comp_res.len() {
            let r = self.comp_res[i] as usize;
            for &f in &self.users[r] {
                if self.flow_mark[f as usize] == epoch {
                    continue;
                }
                self.flow_mark[f as usize] = epoch;
                self.comp_flows.push(f);
                for u in &self.patterns[self.flow_pattern[f as usize] as usize] {
                    if self.res_mark[u.resource as usize] != epoch {
                        self.res_mark[u.resource as usize] = epoch;
                        self.comp_res.push(u.resource);
                    }
                }
            }
            i += 1;
        }
        // Deterministic order whatever the insertion history.
        self.comp_flows.sort_unstable();

        // Progressive filling: every unfrozen flow rises at the same per-member
        // rate; when a resource saturates, the flows crossing it freeze.
        for &r in &self.comp_res {
            self.residual[r as usize] = self.capacity_bps[r as usize];
            self.wsum[r as usize] = 0.0;
        }
        for &f in &self.comp_flows {
            self.frozen[f as usize] = false;
            for u in &self.patterns[self.flow_pattern[f as usize] as usize] {
                self.wsum[u.resource as usize] += u.weight;
            }
        }
        let mut unfrozen = self.comp_flows.len();
        while unfrozen > 0 {
            let mut best: Option<(f64, ResourceId)> = None;
            for &r in &self.comp_res {
                let w = self.wsum[r as usize];
                if w <= 1e-12 {
                    continue;
                }
                let level = self.residual[r as usize].max(0.0) / w;
                if best.is_none_or(|(l, _)| level < l) {
                    best = Some((level, r));
                }
            }
            let Some((level, bottleneck)) = best else {
                break;
            };
            for idx in 0..self.users[bottleneck as usize].len() {
                let f = self.users[bottleneck as usize][idx];
                if self.frozen[f as usize] {
                    continue;
                }
                self.frozen[f as usize] = true;
                unfrozen -= 1;
                if self.rate[f as usize] != level {
                    self.rate[f as usize] = level;
                    self.changed.push(f);
                }
                for u in &self.patterns[self.flow_pattern[f as usize] as usize] {
                    self.residual[u.resource as usize] -= u.weight * level;
                    self.wsum[u.resource as usize] -= u.weight;
                }
            }
        }
        self.changed.sort_unstable();
        &self.changed
    }

    /// Tells `obs` the per-axis rates of the resources the last `add` or
    /// `remove` touched.
    pub fn observe(&self, now: f64, obs: &mut dyn LinkObserver) {
        if !obs.wants_rates() {
            return;
        }
        for &r in &self.comp_res {
            if !obs.watches(r) {
                continue;
            }
            let mut gbps = [0.0f64; Axis::COUNT];
            for &f in &self.users[r as usize] {
                let w = self.patterns[self.flow_pattern[f as usize] as usize]
                    .iter()
                    .find(|u| u.resource == r)
                    .map_or(0.0, |u| u.weight);
                gbps[self.flow_axis[f as usize] as usize] += self.rate[f as usize] * w / 1e9;
            }
            obs.rates(now, r, gbps);
        }
    }
}
