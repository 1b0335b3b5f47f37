//! The event heap's upkeep: a new push supersedes the entity's pending
//! event, superseded entries are dropped once they outnumber the live
//! ones, and sequence numbers that run out are numbered again in order.

use std::cmp::Reverse;

use super::{Engine, Event, Kind};
use crate::sim::bandwidth_model::BandwidthModel;
use crate::sim::network::ClassId;

impl<N: BandwidthModel> Engine<'_, N> {
    /// Schedules the entity's next event, superseding any pending one.
    pub(super) fn push(&mut self, at: f64, entity: u32, kind: Kind) {
        self.cancel(entity);
        if self.seq == u32::MAX {
            self.renumber();
        }
        self.seq += 1;
        let seq = self.seq;
        let slot = self.slot(entity);
        *slot.0 = seq;
        *slot.1 = kind;
        self.res.planned_events += 1;
        self.heap
            .push(Reverse(Event::new(at.max(0.0).to_bits(), seq, entity)));
    }

    /// The sequence numbers ran out: the live events are numbered again from
    /// 1 in their order, which the heap keeps, and the superseded ones dropped.
    fn renumber(&mut self) {
        let mut live: Vec<Event> = std::mem::take(&mut self.heap)
            .into_iter()
            .map(|Reverse(ev)| ev)
            .filter(|&ev| self.is_live(ev))
            .collect();
        live.sort_unstable();
        for (i, ev) in live.iter_mut().enumerate() {
            let seq = i as u32 + 1;
            *self.slot(ev.entity()).0 = seq;
            *ev = Event::new(ev.time_bits(), seq, ev.entity());
        }
        self.seq = live.len() as u32;
        self.stale = 0;
        self.heap = live.into_iter().map(Reverse).collect();
    }

    /// Whether the heap entry is its entity's pending event.
    fn is_live(&self, ev: Event) -> bool {
        let n = self.st.len();
        let e = ev.entity() as usize;
        let (seq, kind) = if e < n {
            (self.st[e].seq, self.st[e].kind)
        } else {
            (self.class_seq[e - n], self.class_kind[e - n])
        };
        ev.seq() == seq && kind != Kind::None
    }

    /// The entity's latest sequence number and its pending event's kind.
    pub(super) fn slot(&mut self, entity: u32) -> (&mut u32, &mut Kind) {
        let n = self.st.len();
        let e = entity as usize;
        if e < n {
            let t = &mut self.st[e];
            (&mut t.seq, &mut t.kind)
        } else {
            (&mut self.class_seq[e - n], &mut self.class_kind[e - n])
        }
    }

    /// Drops the entity's pending event, if any. When superseded entries
    /// outnumber live ones the heap is rebuilt without them, so that it never
    /// holds more than twice the live events (plus a constant).
    pub(super) fn cancel(&mut self, entity: u32) {
        let (_, kind) = self.slot(entity);
        if std::mem::replace(kind, Kind::None) != Kind::None {
            self.stale += 1;
            if self.stale > 1024 && self.stale * 2 > self.heap.len() {
                let mut heap = std::mem::take(&mut self.heap);
                heap.retain(|&Reverse(ev)| self.is_live(ev));
                self.heap = heap;
                self.stale = 0;
            }
        }
    }

    /// Plans the class's next finish (after its rate or its queue changed).
    pub(super) fn schedule_class(&mut self, class: ClassId) {
        let entity = self.g.tasks.len() as u32 + class;
        match self.net.next_finish(class) {
            Some((at, _)) => self.push(at, entity, Kind::Done),
            None => self.cancel(entity),
        }
    }
}
