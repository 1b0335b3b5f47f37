//! The bandwidth model behind one small trait (as dslab-network's
//! `NetworkModel`): the event loop starts and ends transfers and asks when
//! the next one finishes; how links are shared is the model's business.
//! [`crate::sim::network::Network`] implements it with weighted max-min fairness
//! over flow classes. What the links did is told to a
//! [`crate::sim::link_log::LinkObserver`], never kept by the model.

use crate::sim::link_log::LinkObserver;
use crate::sim::network::{ClassId, Network, Usage};

/// How concurrent transfers share link resources.
pub(crate) trait BandwidthModel {
    /// Registers a usage pattern (resources and weights); returns its index.
    fn add_pattern(&mut self, usage: Vec<Usage>) -> u32;
    /// Groups of transfers that the model rates together (at least one per pattern and axis).
    fn class_count(&self) -> usize;
    /// The group a transfer of `pattern` on `axis` joins.
    fn class_of(&self, pattern: u32, axis: u8) -> ClassId;
    /// Starts moving `bytes` per member for `task`; returns the groups whose rate changed.
    fn start(&mut self, now: f64, task: u32, pattern: u32, axis: u8, bytes: f64) -> &[ClassId];
    /// When the group's next transfer finishes, and which task it is.
    fn next_finish(&self, class: ClassId) -> Option<(f64, u32)>;
    /// Takes the group's finished transfer off it; returns its task.
    fn pop_finished(&mut self, now: f64, class: ClassId) -> u32;
    /// Ends a popped transfer of the group; returns the groups whose rate changed.
    fn end(&mut self, now: f64, class: ClassId) -> &[ClassId];
    /// Tells `obs` the rates on the resources the last start or end touched.
    fn observe(&self, now: f64, obs: &mut dyn LinkObserver);
    /// Reserves the links of `pattern` for `task` to be timed alone, if
    /// nothing moves or is reserved on them; returns its rate per member.
    fn reserve_alone(&mut self, task: u32, pattern: u32) -> Option<f64>;
    /// The task reserved on one of the links of `pattern`, if any.
    fn reserved_on(&self, pattern: u32) -> Option<u32>;
    /// Ends the reservation of the links of `pattern`.
    fn release(&mut self, pattern: u32);
    /// Tells `obs` the rates of a transfer of `pattern` and `axis` timed
    /// alone over `span` (start, end), nothing after it.
    fn observe_alone(&self, pattern: u32, axis: u8, span: (f64, f64), obs: &mut dyn LinkObserver);
}

impl BandwidthModel for Network {
    fn add_pattern(&mut self, usage: Vec<Usage>) -> u32 {
        Network::add_pattern(self, usage)
    }
    fn class_count(&self) -> usize {
        Network::class_count(self)
    }
    fn class_of(&self, pattern: u32, axis: u8) -> ClassId {
        Network::class_of(pattern, axis)
    }
    fn start(&mut self, now: f64, task: u32, pattern: u32, axis: u8, bytes: f64) -> &[ClassId] {
        self.add(now, task, pattern, axis, bytes)
    }
    fn next_finish(&self, class: ClassId) -> Option<(f64, u32)> {
        Network::next_finish(self, class)
    }
    fn pop_finished(&mut self, now: f64, class: ClassId) -> u32 {
        Network::pop_finished(self, now, class)
    }
    fn end(&mut self, now: f64, class: ClassId) -> &[ClassId] {
        self.remove(now, class)
    }
    fn observe(&self, now: f64, obs: &mut dyn LinkObserver) {
        Network::observe(self, now, obs)
    }
    fn reserve_alone(&mut self, task: u32, pattern: u32) -> Option<f64> {
        Network::reserve_alone(self, task, pattern)
    }
    fn reserved_on(&self, pattern: u32) -> Option<u32> {
        Network::reserved_on(self, pattern)
    }
    fn release(&mut self, pattern: u32) {
        Network::release(self, pattern)
    }
    fn observe_alone(&self, pattern: u32, axis: u8, span: (f64, f64), obs: &mut dyn LinkObserver) {
        Network::observe_alone(self, pattern, axis, span, obs)
    }
}
