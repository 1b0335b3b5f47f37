//! The page mounted over several tasks: what the reader sees first (the
//! tour, the headline figures, the timeline) in the first, then the
//! controls in two parts, then what sits below the timeline, each in a task of its own
//! so that no one task holds the main thread long (issue 56: mounting
//! every node at once, then laying them all out, was one task of 330 to
//! 600 ms on every load). The first simulation is requested before any of
//! it: the worker runs while the page mounts.

use gloo_timers::callback::Timeout;
use leptos::prelude::*;

/// A part of the page, in the order they mount.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    /// The header, the tour, the figures and the timeline.
    First,
    /// The preset picker and the overlap controls.
    Controls,
    /// The hardware, model and parallelism controls: mounting every
    /// control at once was one task of 40 to 65 ms.
    Shape,
    /// Panes, readings and figures below the timeline.
    Below,
    /// Tables, the scenario's JSON, share and export.
    Rest,
}

impl Part {
    const ALL: [Part; 5] = [
        Part::First,
        Part::Controls,
        Part::Shape,
        Part::Below,
        Part::Rest,
    ];
}

/// How far the page has mounted.
#[derive(Clone, Copy)]
pub struct Mounted(RwSignal<Part>);

impl Mounted {
    /// Starts mounting: each part after the first in a task of its own.
    pub fn start() -> Self {
        let mounted = Mounted(RwSignal::new(Part::First));
        mounted.next_after(Part::First);
        mounted
    }

    fn next_after(self, part: Part) {
        let Some(&next) = Part::ALL.iter().find(|p| **p > part) else {
            return;
        };
        Timeout::new(0, move || {
            self.0.set(next);
            self.next_after(next);
        })
        .forget();
    }

    /// Whether `part` is mounted (tracked).
    pub fn has(self, part: Part) -> bool {
        self.0.get() >= part
    }

    /// Runs `f` once `part` is mounted: now if it is.
    pub fn once(self, part: Part, f: impl FnOnce() + 'static) {
        if self.0.get_untracked() >= part {
            f();
            return;
        }
        let f = StoredValue::new_local(Some(f));
        Effect::new(move |_| {
            if self.has(part) {
                if let Some(f) = f.try_update_value(Option::take).flatten() {
                    f();
                }
            }
        });
    }
}

/// Its children, once `part` of the page is mounted.
#[component]
pub fn When(part: Part, children: ChildrenFn) -> impl IntoView {
    let mounted = expect_context::<Mounted>();
    view! { <Show when=move || mounted.has(part)>{children()}</Show> }
}
