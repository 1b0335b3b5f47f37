//! Fluid bandwidth sharing (model.md section 2). Each link resource has a
//! capacity; each active flow is a coflow that crosses resources with a weight
//! (the number of its lock-step member transfers on that resource) and moves
//! at one rate per member. Whenever a flow starts or ends, the rates of the
//! flows connected to it through shared resources are recomputed by weighted
//! max-min fairness (progressive filling). Flows elsewhere keep their rates:
//! their allocation cannot change, and skipping them keeps an event cheap.
//!
//! Flows with the same usage pattern and axis form a *class*. Max-min
//! fairness gives every flow of a class the same rate (they cross the same
//! resources with the same weights), so the class is what gets rated: its
//! weight on a resource is its flow count times the pattern's weight, and one
//! rate change is one update however many flows the class holds. Inside a
//! class the flows share that rate as a processor-sharing queue: the class
//! keeps its served bytes per member (a virtual clock), each flow finishes
//! when the clock reaches the level at which it joined plus its bytes, and
//! a heap ordered by that level yields the next finisher. A thousand sends
//! queued on one NIC therefore cost a heap operation each, not a re-rating
//! of all the others.

use crate::model::axis::Axis;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::sim::link_log::LinkObserver;
pub use crate::sim::link_log::{LinkSample, ResourceLog};

pub use crate::workload::graph::task::{alone_rate, ResourceId, Usage};

/// Index of a flow class: `pattern * Axis::COUNT + axis`.
pub(crate) type ClassId = u32;

/// The flows of one pattern and axis: one rate, one processor-sharing queue.
#[derive(Clone, Debug, Default)]
struct FlowClass {
    /// Flows in the class now.
    count: u32,
    /// Bytes per second per member of each of its flows.
    rate: f64,
    /// Bytes per member each flow of the class has received since the class
    /// was created, as of `last_update`: the class's virtual clock.
    served: f64,
    last_update: f64,
    /// (served level at which the flow finishes, arrival order, task).
    queue: BinaryHeap<Reverse<(u64, u64, u32)>>,
    /// Flows finished since the clock was last brought back to zero.
    finished_since_rebase: usize,
}

impl FlowClass {
    /// Brings the clock back to zero, every level with it, so that levels
    /// keep the precision of one flow's bytes, not of all bytes the class
    /// ever moved. Subtracting one number keeps the heap's order, so the
    /// heap is rebuilt in linear time; done after as many finishes as flows
    /// queued, its cost per finish is constant.
    fn rebase(&mut self) {
        let served = self.served;
        let entries: Vec<_> = std::mem::take(&mut self.queue)
            .into_vec()
            .into_iter()
            .map(|Reverse((level, seq, task))| {
                Reverse((
                    (f64::from_bits(level) - served).max(0.0).to_bits(),
                    seq,
                    task,
                ))
            })
            .collect();
        self.queue = BinaryHeap::from(entries);
        self.served = 0.0;
        self.finished_since_rebase = 0;
    }

    /// Brings the virtual clock up to `now` at the current rate.
    fn advance(&mut self, now: f64) {
        if now > self.last_update {
            self.served += (now - self.last_update) * self.rate;
        }
        self.last_update = now;
    }
}

/// No flow: a resource's `reserved_by` when nothing is timed alone on it.
const NO_TASK: u32 = u32::MAX;

pub(crate) struct Network {
    capacity_bps: Vec<f64>,
    /// Active classes per resource.
    users: Vec<Vec<ClassId>>,
    patterns: Vec<Vec<Usage>>,
    classes: Vec<FlowClass>,
    /// Arrival counter: ties in a class's queue finish in arrival order.
    arrivals: u64,
    // Scratch for one recomputation, reused to avoid allocation per event.
    epoch: u32,
    res_mark: Vec<u32>,
    class_mark: Vec<u32>,
    comp_res: Vec<ResourceId>,
    comp_classes: Vec<ClassId>,
    residual: Vec<f64>,
    wsum: Vec<f64>,
    frozen: Vec<bool>,
    changed: Vec<ClassId>,
    /// Per resource, its index in `comp_res` during a recomputation.
    res_pos: Vec<u32>,
    /// Per resource, the flow timed alone on it ([`Network::reserve_alone`]),
    /// [`NO_TASK`] when none.
    reserved_by: Vec<u32>,
    /// (fair level, index in `comp_res`), lowest first; stale entries skipped.
    levels: BinaryHeap<Reverse<(u64, u32)>>,
}

impl Network {
    pub fn new(capacity_bps: Vec<f64>) -> Self {
        let r = capacity_bps.len();
        Self {
            users: vec![Vec::new(); r],
            patterns: Vec::new(),
            classes: Vec::new(),
            arrivals: 0,
            epoch: 0,
            res_mark: vec![0; r],
            class_mark: Vec::new(),
            comp_res: Vec::new(),
            comp_classes: Vec::new(),
            residual: vec![0.0; r],
            wsum: vec![0.0; r],
            frozen: Vec::new(),
            changed: Vec::new(),
            res_pos: vec![0; r],
            reserved_by: vec![NO_TASK; r],
            levels: BinaryHeap::new(),
            capacity_bps,
        }
    }

    /// Registers a usage pattern; flows refer to it by index.
    pub fn add_pattern(&mut self, usage: Vec<Usage>) -> u32 {
        self.patterns.push(usage);
        for _ in 0..Axis::COUNT {
            self.classes.push(FlowClass::default());
            self.class_mark.push(0);
            self.frozen.push(false);
        }
        (self.patterns.len() - 1) as u32
    }

    /// Number of classes (one per axis of each pattern).
    pub fn class_count(&self) -> usize {
        self.classes.len()
    }

    pub fn class_of(pattern: u32, axis: u8) -> ClassId {
        pattern * Axis::COUNT as u32 + u32::from(axis)
    }

    fn pattern_of(class: ClassId) -> usize {
        (class / Axis::COUNT as u32) as usize
    }

    /// When the class's next flow finishes and which task it is, if any flow
    /// is moving.
    pub fn next_finish(&self, class: ClassId) -> Option<(f64, u32)> {
        let c = &self.classes[class as usize];
        let Reverse((level, _, task)) = *c.queue.peek()?;
        if c.rate <= 0.0 {
            return None;
        }
        let left = (f64::from_bits(level) - c.served).max(0.0);
        Some((c.last_update + left / c.rate, task))
    }

    /// The class's first finisher has finished at `now`: takes it off the
    /// queue (the flow still counts until `remove`).
    pub fn pop_finished(&mut self, now: f64, class: ClassId) -> u32 {
        let c = &mut self.classes[class as usize];
        c.advance(now);
        let Reverse((level, _, task)) = c.queue.pop().expect("a finishing flow is queued");
        // It has received all its bytes: rounding must not leave the clock behind.
        c.served = c.served.max(f64::from_bits(level));
        c.finished_since_rebase += 1;
        if c.queue.is_empty() {
            c.served = 0.0;
            c.finished_since_rebase = 0;
        } else if c.finished_since_rebase >= c.queue.len().max(8) {
            c.rebase();
        }
        task
    }

    /// Starts a flow of `bytes` per member; returns the classes whose rate
    /// changed (the flow's own class may or may not be among them).
    pub fn add(&mut self, now: f64, task: u32, pattern: u32, axis: u8, bytes: f64) -> &[ClassId] {
        let class = Self::class_of(pattern, axis);
        self.arrivals += 1;
        let c = &mut self.classes[class as usize];
        c.advance(now);
        let level = (c.served + bytes).to_bits();
        c.queue.push(Reverse((level, self.arrivals, task)));
        c.count += 1;
        let first = c.count == 1;
        let mut alone = true;
        for u in &self.patterns[pattern as usize] {
            let list = &mut self.users[u.resource as usize];
            if first {
                list.push(class);
            }
            alone &= list.len() == 1;
        }
        if alone {
            // Nobody else on its links: the class gets its bottleneck, shared
            // by its flows, and nothing else moves.
            let rate = self.alone_rate_bps(pattern) / f64::from(self.classes[class as usize].count);
            self.changed.clear();
            self.set_rate(now, class, rate);
            self.touch_pattern(pattern as usize);
            return &self.changed;
        }
        if self.rerate_one_resource(now, pattern as usize, None) {
            return &self.changed;
        }
        self.recompute(now, class)
    }

    /// Ends a flow of `class` (already popped by `pop_finished`); returns the
    /// classes whose rate changed.
    pub fn remove(&mut self, now: f64, class: ClassId) -> &[ClassId] {
        let pattern = Self::pattern_of(class);
        let c = &mut self.classes[class as usize];
        c.advance(now);
        // Its rate before it leaves: the level of its resource if it crosses
        // only one (see `rerate_one_resource`).
        let level_before = c.rate;
        c.count -= 1;
        if c.count == 0 {
            c.rate = 0.0;
            for u in &self.patterns[pattern] {
                let list = &mut self.users[u.resource as usize];
                if let Some(pos) = list.iter().position(|&k| k == class) {
                    list.swap_remove(pos);
                }
            }
            if self.patterns[pattern]
                .iter()
                .all(|u| self.users[u.resource as usize].is_empty())
            {
                self.changed.clear();
                self.touch_pattern(pattern);
                return &self.changed;
            }
        }
        if self.rerate_one_resource(now, pattern, Some(level_before)) {
            return &self.changed;
        }
        self.recompute(now, class)
    }

    /// Re-rates a change of flows on a pattern that crosses one resource
    /// alone (a kernel's memory traffic on its GPU's HBM) without
    /// re-rating the component, when the change cannot move any class that
    /// also crosses other resources; returns false, having changed nothing,
    /// when it could. Exact, not an approximation: in progressive filling a
    /// class crossing other resources keeps its rate if it freezes, at its
    /// own bottleneck, no later than this resource saturates. So when the
    /// classes crossing only this resource, sharing what the others leave
    /// of it, get a level at or above every other class's rate, the others
    /// stay as they are and only the level moves. On a flow leaving,
    /// `level_before` is the resource's level before (the leaving class's
    /// rate): a class at that level may have been held by this resource, and
    /// could rise, so then the whole component is re-rated. Without this,
    /// every kernel of issue 45's 86 s inference step re-rated every
    /// pipeline send sharing its oversubscribed core.
    fn rerate_one_resource(&mut self, now: f64, pattern: usize, level_before: Option<f64>) -> bool {
        let [only] = self.patterns[pattern][..] else {
            return false;
        };
        let r = only.resource as usize;
        let (mut others_bps, mut own_weight) = (0.0, 0.0);
        let mut others_top = 0.0f64;
        for &k in &self.users[r] {
            let kp = Self::pattern_of(k);
            let c = &self.classes[k as usize];
            let n = f64::from(c.count);
            let w = self.weight_on(kp, only.resource);
            if self.patterns[kp].len() == 1 {
                own_weight += w * n;
            } else {
                others_bps += w * n * c.rate;
                others_top = others_top.max(c.rate);
            }
        }
        if let Some(before) = level_before {
            if others_top >= before {
                return false;
            }
        }
        self.changed.clear();
        if own_weight > 0.0 {
            let level = (self.capacity_bps[r] - others_bps) / own_weight;
            // NaN (no capacity left to share) falls back too.
            if level.is_nan() || level < others_top {
                return false;
            }
            for i in 0..self.users[r].len() {
                let k = self.users[r][i];
                if self.patterns[Self::pattern_of(k)].len() == 1 {
                    self.set_rate(now, k, level);
                }
            }
        }
        self.changed.sort_unstable();
        self.touch_pattern(pattern);
        true
    }

    fn set_rate(&mut self, now: f64, class: ClassId, rate: f64) {
        let c = &mut self.classes[class as usize];
        if c.rate != rate {
            c.advance(now);
            c.rate = rate;
            self.changed.push(class);
        }
    }

    /// The resources whose rates the last change may have moved: the pattern's own.
    fn touch_pattern(&mut self, pattern: usize) {
        self.comp_res.clear();
        for u in &self.patterns[pattern] {
            self.comp_res.push(u.resource);
        }
    }

    fn recompute(&mut self, now: f64, seed: ClassId) -> &[ClassId] {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.res_mark.iter_mut().for_each(|m| *m = 0);
            self.class_mark.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        self.comp_res.clear();
        self.comp_classes.clear();
        self.changed.clear();

        // The connected component: resources of the seed, every class on
        // them, their resources, and so on.
        for u in &self.patterns[Self::pattern_of(seed)] {
            if self.res_mark[u.resource as usize] != epoch {
                self.res_mark[u.resource as usize] = epoch;
                self.comp_res.push(u.resource);
            }
        }
        let mut i = 0;
        while i < self.comp_res.len() {
            let r = self.comp_res[i] as usize;
            for &k in &self.users[r] {
                if self.class_mark[k as usize] == epoch {
                    continue;
                }
                self.class_mark[k as usize] = epoch;
                self.comp_classes.push(k);
                for u in &self.patterns[Self::pattern_of(k)] {
                    if self.res_mark[u.resource as usize] != epoch {
                        self.res_mark[u.resource as usize] = epoch;
                        self.comp_res.push(u.resource);
                    }
                }
            }
            i += 1;
        }
        // Deterministic order whatever the insertion history.
        self.comp_classes.sort_unstable();

        // Progressive filling: every unfrozen flow rises at the same per-member
        // rate; when a resource saturates, the flows crossing it freeze.
        for &r in &self.comp_res {
            self.residual[r as usize] = self.capacity_bps[r as usize];
            self.wsum[r as usize] = 0.0;
        }
        for &k in &self.comp_classes {
            self.frozen[k as usize] = false;
            let n = f64::from(self.classes[k as usize].count);
            for u in &self.patterns[Self::pattern_of(k)] {
                self.wsum[u.resource as usize] += u.weight * n;
            }
        }
        // The next bottleneck is the resource with the lowest fair level;
        // a heap of levels, refreshed as flows freeze, finds it without
        // rescanning the component (ties go to the first resource found).
        self.levels.clear();
        for (i, &r) in self.comp_res.iter().enumerate() {
            self.res_pos[r as usize] = i as u32;
            if let Some(level) = self.level(r) {
                self.levels.push(Reverse((level.to_bits(), i as u32)));
            }
        }
        let mut unfrozen = self.comp_classes.len();
        while unfrozen > 0 {
            let Some(Reverse((bits, i))) = self.levels.pop() else {
                break;
            };
            let bottleneck = self.comp_res[i as usize];
            // A superseded entry: the resource's level has changed since.
            if self.level(bottleneck).map(f64::to_bits) != Some(bits) {
                continue;
            }
            let level = f64::from_bits(bits);
            for idx in 0..self.users[bottleneck as usize].len() {
                let k = self.users[bottleneck as usize][idx];
                if self.frozen[k as usize] {
                    continue;
                }
                self.frozen[k as usize] = true;
                unfrozen -= 1;
                self.set_rate(now, k, level);
                let n = f64::from(self.classes[k as usize].count);
                for j in 0..self.patterns[Self::pattern_of(k)].len() {
                    let u = self.patterns[Self::pattern_of(k)][j];
                    let r = u.resource as usize;
                    self.residual[r] -= u.weight * n * level;
                    self.wsum[r] -= u.weight * n;
                    if let Some(l) = self.level(u.resource) {
                        let pos = self.res_pos[r];
                        self.levels.push(Reverse((l.to_bits(), pos)));
                    }
                }
            }
        }
        self.changed.sort_unstable();
        // Only links whose flows changed need a new sample: the seed's and
        // those of every class whose rate moved.
        self.comp_res.clear();
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.res_mark.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        let seed_pattern = Self::pattern_of(seed);
        for k in
            std::iter::once(seed_pattern).chain(self.changed.iter().map(|&k| Self::pattern_of(k)))
        {
            for u in &self.patterns[k] {
                if self.res_mark[u.resource as usize] != epoch {
                    self.res_mark[u.resource as usize] = epoch;
                    self.comp_res.push(u.resource);
                }
            }
        }
        &self.changed
    }

    /// Times a flow of `pattern` alone on its links from its start to its
    /// end, without joining the network: when no flow moves on any of them
    /// and none is timed alone there, reserves them for `task` and returns
    /// the rate it would get on joining alone (its bottleneck, as `add`
    /// gives it). Whoever joins one of them first settles the reservation
    /// ([`Network::reserved_on`]).
    pub fn reserve_alone(&mut self, task: u32, pattern: u32) -> Option<f64> {
        let usage = &self.patterns[pattern as usize];
        let free = usage.iter().all(|u| {
            let r = u.resource as usize;
            self.users[r].is_empty() && self.reserved_by[r] == NO_TASK
        });
        if !free {
            return None;
        }
        for u in usage {
            self.reserved_by[u.resource as usize] = task;
        }
        Some(self.alone_rate_bps(pattern))
    }

    /// Bytes per second per member a flow of `pattern` gets alone on its links.
    fn alone_rate_bps(&self, pattern: u32) -> f64 {
        alone_rate(&self.patterns[pattern as usize], |r| {
            self.capacity_bps[r as usize]
        })
    }

    /// The weight with which a flow of `pattern` crosses resource `r`.
    fn weight_on(&self, pattern: usize, r: ResourceId) -> f64 {
        self.patterns[pattern]
            .iter()
            .find(|u| u.resource == r)
            .map_or(0.0, |u| u.weight)
    }

    /// A flow timed alone on one of the links of `pattern`, if any.
    pub fn reserved_on(&self, pattern: u32) -> Option<u32> {
        self.patterns[pattern as usize]
            .iter()
            .map(|u| self.reserved_by[u.resource as usize])
            .find(|&task| task != NO_TASK)
    }

    /// Ends the reservation of `pattern`'s links.
    pub fn release(&mut self, pattern: u32) {
        for u in &self.patterns[pattern as usize] {
            self.reserved_by[u.resource as usize] = NO_TASK;
        }
    }

    /// Tells `obs` what a flow of `pattern` and `axis` timed alone did: it
    /// moved at the rate `reserve_alone` gave it from `from` to `to`, and
    /// nothing moved there after it. The same rates `observe` gives for it
    /// as a flow that joins and leaves (one flow of its class, weighted by
    /// the pattern).
    pub fn observe_alone(
        &self,
        pattern: u32,
        axis: u8,
        (from, to): (f64, f64),
        obs: &mut dyn LinkObserver,
    ) {
        if !obs.wants_rates() {
            return;
        }
        let usage = &self.patterns[pattern as usize];
        let rate = self.alone_rate_bps(pattern);
        // All starts before any end: a pattern may list a link twice.
        for u in usage {
            if obs.watches(u.resource) {
                let mut gbps = [0.0f64; Axis::COUNT];
                let w = self.weight_on(pattern as usize, u.resource);
                gbps[axis as usize] += flow_gbps(rate, w, 1);
                obs.rates(from, u.resource, gbps);
            }
        }
        for u in usage {
            if obs.watches(u.resource) {
                obs.rates(to, u.resource, [0.0; Axis::COUNT]);
            }
        }
    }

    /// The fair level of a resource still shared by unfrozen flows.
    fn level(&self, r: ResourceId) -> Option<f64> {
        let w = self.wsum[r as usize];
        (w > 1e-12).then(|| self.residual[r as usize].max(0.0) / w)
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
            for &k in &self.users[r as usize] {
                let w = self.weight_on(Self::pattern_of(k), r);
                let c = &self.classes[k as usize];
                gbps[(k % Axis::COUNT as u32) as usize] += flow_gbps(c.rate, w, c.count);
            }
            obs.rates(now, r, gbps);
        }
    }
}

/// GB/s that `count` flows at `rate` bytes per second per member put on a
/// resource they cross with weight `w`.
fn flow_gbps(rate: f64, w: f64, count: u32) -> f64 {
    rate * w * f64::from(count) / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(resource: ResourceId, weight: f64) -> Usage {
        Usage { resource, weight }
    }

    fn rate(n: &Network, pattern: u32, axis: u8) -> f64 {
        n.classes[Network::class_of(pattern, axis) as usize].rate
    }

    #[test]
    fn two_equal_transfers_on_one_link_each_get_half_its_bandwidth() {
        let mut n = Network::new(vec![100.0]);
        let p = n.add_pattern(vec![one(0, 1.0)]);
        n.add(0.0, 0, p, 0, 1.0);
        assert_eq!(rate(&n, p, 0), 100.0);
        n.add(0.0, 1, p, 1, 1.0);
        assert_eq!((rate(&n, p, 0), rate(&n, p, 1)), (50.0, 50.0));
        n.remove(1.0, Network::class_of(p, 0));
        assert_eq!(rate(&n, p, 1), 100.0);
    }

    #[test]
    fn flows_of_one_class_share_its_rate_and_finish_shortest_first() {
        let mut n = Network::new(vec![100.0]);
        let p = n.add_pattern(vec![one(0, 1.0)]);
        let c = Network::class_of(p, 1);
        n.add(0.0, 7, p, 1, 300.0);
        n.add(0.0, 8, p, 1, 100.0);
        assert_eq!(rate(&n, p, 1), 50.0);
        // 100 bytes at 50 B/s: the short one leaves at 2 s.
        assert_eq!(n.next_finish(c), Some((2.0, 8)));
        assert_eq!(n.pop_finished(2.0, c), 8);
        n.remove(2.0, c);
        // The long one has 200 bytes left, alone at 100 B/s.
        assert_eq!(n.next_finish(c), Some((4.0, 7)));
    }

    #[test]
    fn a_coflow_weighs_by_its_members_and_moves_at_its_bottleneck() {
        // Flow 0 has two members on resource 0; flow 1 one member on it and
        // is also limited by resource 1.
        let mut n = Network::new(vec![90.0, 20.0]);
        let a = n.add_pattern(vec![one(0, 2.0)]);
        let b = n.add_pattern(vec![one(0, 1.0), one(1, 1.0)]);
        n.add(0.0, 0, a, 0, 1.0);
        n.add(0.0, 1, b, 1, 1.0);
        assert_eq!(rate(&n, b, 1), 20.0);
        assert_eq!(rate(&n, a, 0), 35.0);
    }

    #[test]
    fn flows_on_other_links_keep_their_rates() {
        let mut n = Network::new(vec![10.0, 10.0]);
        let a = n.add_pattern(vec![one(0, 1.0)]);
        let b = n.add_pattern(vec![one(1, 1.0)]);
        n.add(0.0, 0, a, 0, 1.0);
        let changed = n.add(0.0, 1, b, 0, 1.0).to_vec();
        assert_eq!(changed, vec![Network::class_of(b, 0)]);
        assert_eq!(rate(&n, a, 0), 10.0);
    }
}
