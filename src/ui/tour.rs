//! The guided tour on the page. The chapters are data in the view crate
//! (`overlap_view::tour`), tested natively against their own figures; this
//! component asks for the prediction, flips the chapter's one change, shows
//! the verdict and the figures before and after, and points the timeline at
//! the region where the effect is.

use leptos::prelude::*;
use overlap_core::Report;
use overlap_view::format;
use overlap_view::scene::View;
use overlap_view::tour::{Chapter, Focus, Outcome, CHAPTERS};

use crate::state::AppState;
use crate::ui::figures::shown;
use crate::ui::staged::{Mounted, Part};
use crate::web::address::{self as share, Borrowed, Share};
use wasm_bindgen::JsCast;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    Off,
    Ask(usize),
    Revealed(usize),
    Done,
}

/// What the tour borrowed and gave back, once it has been left.
#[derive(Clone)]
struct Returned {
    /// The reader's scenario and view, given back.
    yours: Borrowed,
    /// Where the tour was when it was left: one click away.
    tours: Borrowed,
    /// Whether the page shows the tour's last scenario again.
    showing_tours: bool,
}

/// Moves keyboard focus to the tour's element marked `data-focus`, once the
/// stage has been drawn, without scrolling (the tour scrolls the timeline
/// into view itself).
fn focus_tour() {
    gloo_timers::callback::Timeout::new(0, || {
        let Some(el) = crate::dom::document()
            .and_then(|d| d.query_selector(".tour [data-focus]").ok().flatten())
        else {
            return;
        };
        let options = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&options, &"preventScroll".into(), &true.into());
        if let Ok(focus) = js_sys::Reflect::get(&el, &"focus".into()) {
            if let Ok(focus) = focus.dyn_into::<js_sys::Function>() {
                let _ = focus.call1(&el, &options);
            }
        }
    })
    .forget();
}

/// The fields a chapter is about, for the controls to outline themselves.
pub fn focus_fields(chapter: usize) -> &'static [&'static str] {
    CHAPTERS.get(chapter).map(|c| c.controls).unwrap_or(&[])
}

/// The chapter's own two runs, taken from the simulations its scenario
/// asked for: texts never read a run of another scenario.
#[derive(Clone, Copy)]
struct Runs {
    before: RwSignal<Option<Report>>,
    after: RwSignal<Option<Report>>,
    /// The run counter when the chapter last changed the scenario: a run
    /// counted after it belongs to the chapter.
    since: RwSignal<u64>,
    /// Whether the tour itself set the scenario, and so points the view at
    /// the chapter's region; a chapter opened from a link keeps the link's view.
    steer: RwSignal<bool>,
    /// How far the page has mounted (the controls come after the tour).
    mounted: Mounted,
}

fn enter(state: AppState, runs: Runs, chapter: usize) {
    let c = &CHAPTERS[chapter];
    if let (Some(p), Some(input)) = (overlap_core::presets::find(c.preset), c.before_input()) {
        runs.before.set(None);
        runs.after.set(None);
        runs.since.set(state.run_seq.get_untracked());
        runs.steer.set(true);
        state.load(p, input);
    }
    let field = c.controls.first().copied();
    runs.mounted
        .once(Part::Shape, move || reveal_control(field));
}

/// Shows the chapter's region of the step (or all of it), and brings the
/// timeline into view under the tour.
fn point_view(state: AppState, focus: Focus) {
    {
        let scene = state.scene();
        let mut s = scene.borrow_mut();
        let span = s.current.as_ref().and_then(|p| focus.span_s(&p.timeline));
        // A region that reaches the step's end reaches the end of the run
        // before, when that was longer: the saved time stays in view.
        let (step, extent) = (s.step_s(), s.extent_s());
        let span = span.map(|(t0, t1)| {
            (
                t0,
                if t1 >= step * (1.0 - 1e-9) {
                    extent
                } else {
                    t1
                },
            )
        });
        match span {
            Some((t0, t1)) => s.view = View { t0, t1, fit: false },
            None => s.fit(),
        }
    }
    crate::timeline::frame::request();
    bring_timeline_into_view(focus.shows_links());
}

/// Scrolls the page so that the timeline (with its link lanes, when the
/// chapter is about them) is on screen beside or above the open tour: from
/// the step figures down on a wide screen, from the canvas down on a phone,
/// where the tour sits at the bottom of the screen.
fn bring_timeline_into_view(links: bool) {
    let (Some(doc), Some(win)) = (crate::dom::document(), crate::dom::window()) else {
        return;
    };
    let size = |v: Result<wasm_bindgen::JsValue, _>| v.ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let (width, height) = (size(win.inner_width()), size(win.inner_height()));
    let top_of = if width >= 960.0 {
        ".headline"
    } else {
        ".timeline canvas"
    };
    let (Ok(Some(top)), Ok(Some(canvas))) = (
        doc.query_selector(top_of),
        doc.query_selector(".timeline canvas"),
    ) else {
        return;
    };
    let from = top.get_bounding_client_rect().top();
    let to = canvas.get_bounding_client_rect().bottom();
    // The part of the screen the tour leaves free.
    let free = if width >= 960.0 {
        height
    } else {
        height * 0.56
    };
    if from >= 0.0 && to <= free {
        return;
    }
    let dy = if links && to - from > free {
        to - free + 4.0
    } else {
        from - 4.0
    };
    win.scroll_by_with_x_and_y(0.0, dy);
}

/// On a wide screen the controls scroll on their own: bring the chapter's
/// control into view there, without moving the page away from the tour.
fn reveal_control(field: Option<&str>) {
    let Some(field) = field else { return };
    let Some(doc) = crate::dom::document() else {
        return;
    };
    let id = crate::state::fields::control_id(field);
    let (Some(el), Ok(Some(side))) = (doc.get_element_by_id(&id), doc.query_selector(".side"))
    else {
        return;
    };
    if side.scroll_height() <= side.client_height() {
        return;
    }
    let offset = el.get_bounding_client_rect().top() - side.get_bounding_client_rect().top();
    side.set_scroll_top(side.scroll_top() + offset as i32 - 48);
}

/// Marks the page while the tour is open, for the layout that keeps the
/// timeline beside or under it (style.css).
fn mark_touring(open: bool) {
    if let Some(body) = crate::dom::document().and_then(|d| d.body()) {
        let classes = body.class_list();
        let _ = if open {
            classes.add_1("touring")
        } else {
            classes.remove_1("touring")
        };
    }
}

#[component]
pub fn Tour() -> impl IntoView {
    let state = expect_context::<AppState>();
    // A share link may open the tour at a chapter (its scenario comes with the link).
    let opened = state
        .tour_chapter
        .get_untracked()
        .filter(|c| *c < CHAPTERS.len());
    let share = expect_context::<Share>();
    let stage = RwSignal::new(Stage::Off);
    let picked = RwSignal::new(None::<usize>);
    let runs = Runs {
        before: RwSignal::new(None),
        after: RwSignal::new(None),
        since: RwSignal::new(0),
        steer: RwSignal::new(false),
        mounted: expect_context::<Mounted>(),
    };
    // The reader's scenario and view while the tour is open.
    let borrowed = StoredValue::new(None::<Borrowed>);
    let returned = RwSignal::new(None::<Returned>);
    // The chapter a link opened: the page says that its scenario is the
    // chapter's own.
    let from_link = RwSignal::new(None::<usize>);
    let borrow = move || {
        if borrowed.with_value(Option::is_none) {
            borrowed.set_value(Some(share::borrow_now(state, share)));
        }
        returned.set(None);
    };
    // Leaving or finishing gives the reader's scenario and view back.
    let give_back = move |to: Stage| {
        if let Some(yours) = borrowed.get_value() {
            borrowed.set_value(None);
            let tours = share::borrow_now(state, share);
            share::give_back(state, share, &yours);
            returned.set(Some(Returned {
                yours,
                tours,
                showing_tours: false,
            }));
        }
        from_link.set(None);
        stage.set(to);
        focus_tour();
    };
    let swap = move |_| {
        let Some(mut r) = returned.get_untracked() else {
            return;
        };
        r.showing_tours = !r.showing_tours;
        share::give_back(
            state,
            share,
            if r.showing_tours { &r.tours } else { &r.yours },
        );
        returned.set(Some(r));
    };
    if let Some(c) = opened {
        // A chapter link opens the chapter's own scenario: the link's own
        // comes back on leaving.
        borrow();
        from_link.set(Some(c));
        stage.set(Stage::Ask(c));
        enter(state, runs, c);
    }
    let chapter_of = |s: Stage| match s {
        Stage::Ask(i) | Stage::Revealed(i) => Some(i),
        Stage::Off | Stage::Done => None,
    };
    // The open chapter goes into the address (src/share.rs)...
    Effect::new(move |before: Option<Stage>| {
        let shown = stage.get();
        let now = chapter_of(shown);
        mark_touring(now.is_some());
        // Each stage starts at its top: on a phone the tour scrolls on its
        // own. Not when the page mounts, where it is at its top already and
        // writing the scroll would lay out the whole page in the first task
        // (14 to 18 ms on the large presets).
        if before.is_some_and(|b| b != shown) {
            if let Ok(Some(el)) =
                crate::dom::document().map_or(Ok(None), |d| d.query_selector(".tour"))
            {
                el.set_scroll_top(0);
            }
        }
        if state.tour_chapter.get_untracked() != now {
            state.tour_chapter.set(now);
        }
        shown
    });
    // ...and Back/Forward to a link with another chapter open it.
    Effect::new(move |_| {
        let wanted = state.tour_chapter.get().filter(|c| *c < CHAPTERS.len());
        if wanted != chapter_of(stage.get_untracked()) {
            match wanted {
                // The chapter's own scenario, whatever the address held.
                Some(c) => {
                    borrow();
                    stage.set(Stage::Ask(c));
                    enter(state, runs, c);
                }
                None => {
                    borrowed.set_value(None);
                    stage.set(Stage::Off);
                }
            }
        }
    });
    // Each run the chapter asked for becomes its before or after, and the
    // timeline is pointed at the chapter's region of it.
    Effect::new(move |_| {
        let seq = state.run_seq.get();
        if seq <= runs.since.get_untracked() {
            return;
        }
        let Some(report) = state.report.get_untracked() else {
            return;
        };
        let (i, slot) = match stage.get_untracked() {
            Stage::Ask(i) => (i, runs.before),
            Stage::Revealed(i) => (i, runs.after),
            Stage::Off | Stage::Done => return,
        };
        let first = slot.with_untracked(Option::is_none);
        slot.set(Some(report));
        if first && runs.steer.get_untracked() {
            point_view(state, CHAPTERS[i].focus);
            // A chapter opened by a link: its zoom is the link's chapter,
            // and the address keeps the link as it was.
            if from_link.get_untracked() == Some(i) {
                share::keep_address(state, share);
            }
        }
    });
    let start = move |_| {
        borrow();
        from_link.set(None);
        picked.set(None);
        stage.set(Stage::Ask(0));
        enter(state, runs, 0);
        focus_tour();
    };
    let go = move |chapter: usize| {
        picked.set(None);
        if chapter >= CHAPTERS.len() {
            give_back(Stage::Done);
        } else {
            from_link.set(None);
            stage.set(Stage::Ask(chapter));
            enter(state, runs, chapter);
            focus_tour();
        }
    };
    let leave = move || give_back(Stage::Off);
    let predict = move |chapter: usize, choice: Option<usize>| {
        picked.set(choice);
        runs.after.set(None);
        runs.since.set(state.run_seq.get_untracked());
        runs.steer.set(true);
        stage.set(Stage::Revealed(chapter));
        state.edit(CHAPTERS[chapter].action);
        focus_tour();
    };
    // What leaving gave back, and the tour's last scenario one click away.
    let returned_view = move || {
        returned.get().map(|r| {
            let (text, button) = if r.showing_tours {
                (
                    "This is the tour's last scenario.".to_string(),
                    "Back to your scenario",
                )
            } else {
                (
                    format!(
                        "Back to your scenario: {}, as you left it, with your view.",
                        preset_title(&r.yours.preset_id)
                    ),
                    "Show the tour's last scenario",
                )
            };
            view! {
                <p class="tour-returned" role="status" tabindex="-1" data-focus="">{text}</p>
                <button type="button" class="tour-swap" on:click=swap>{button}</button>
            }
        })
    };
    // A prediction waits for the chapter's own "before" run.
    let waiting = move || runs.before.with(Option::is_none);
    view! {
        <section class="tour" aria-labelledby="tour-h">
            <h2 id="tour-h">"Guided tour"</h2>
            {move || match stage.get() {
                Stage::Off => view! {
                    {returned_view}
                    <p>{format!("{} short chapters on when overlapping communication with compute is free, and when it is not. Your scenario comes back when you leave.", CHAPTERS.len())}</p>
                    <button type="button" class="primary" on:click=start>"Start the guided tour"</button>
                }.into_any(),
                Stage::Done => view! {
                    <p class="tour-done">"Tour complete. Every control is yours again."</p>
                    {returned_view}
                    <button type="button" on:click=start>"Restart the tour"</button>
                    <button type="button" on:click=move |_| stage.set(Stage::Off)>"Close"</button>
                }.into_any(),
                Stage::Ask(i) => {
                    let c = &CHAPTERS[i];
                    view! {
                        <p class="chapter-no">{format!("Chapter {} of {}", i + 1, CHAPTERS.len())}</p>
                        <h3 tabindex="-1" data-focus="">{c.title}</h3>
                        {move || (from_link.get() == Some(i)).then(|| view! {
                            <p class="tour-link-note" role="note">{format!(
                                "Opened by a link, on chapter {}'s own scenario ({}); leave the tour for the link's own.",
                                i + 1,
                                preset_title(c.preset),
                            )}</p>
                        })}
                        <p class="tour-intro">{move || intro(c, runs)}</p>
                        <fieldset class="predict">
                            <legend>{c.question}</legend>
                            {c.choices.iter().enumerate().map(|(k, text)| view! {
                                <button type="button" disabled=waiting on:click=move |_| predict(i, Some(k))>{*text}</button>
                            }).collect_view()}
                            <button type="button" class="link" disabled=waiting on:click=move |_| predict(i, None)>"Skip: just show me"</button>
                        </fieldset>
                        <TourNav leave=leave go=go chapter=i />
                    }.into_any()
                }
                Stage::Revealed(i) => {
                    let c = &CHAPTERS[i];
                    let last = i + 1 == CHAPTERS.len();
                    view! {
                        <p class="chapter-no">{format!("Chapter {} of {}", i + 1, CHAPTERS.len())}</p>
                        <h3>{c.title}</h3>
                        <p class="your-guess">
                            {move || picked.get().map(|k| format!("You predicted: {}.", c.choices[k]))}
                        </p>
                        <Verdict chapter=c picked=picked runs=runs />
                        <RevealFigures chapter=c runs=runs />
                        <p class="tour-explain">{move || explain(c, runs)}</p>
                        <p class="tour-parts">{move || parts(c, runs)}</p>
                        // Kept on screen however long the reveal is (issue
                        // 58): sticky at the bottom of the viewport.
                        <div class="tour-next">
                            <button type="button" class="primary" on:click=move |_| go(i + 1)>
                                {if last { "Finish the tour" } else { "Next chapter" }}
                            </button>
                            <TourNav leave=leave go=go chapter=i />
                        </div>
                    }.into_any()
                }
            }}
        </section>
    }
}

fn preset_title(id: &str) -> &'static str {
    overlap_core::presets::find(id).map_or("", |p| p.title)
}

fn intro(c: &'static Chapter, runs: Runs) -> String {
    runs.before
        .with(|b| b.as_ref().map(|b| c.intro_text(b)))
        .unwrap_or_else(|| "Simulating the chapter's scenario…".to_string())
}

fn explain(c: &'static Chapter, runs: Runs) -> Option<String> {
    let (before, after) = (runs.before.get()?, runs.after.get()?);
    Some(c.explain_text(&Outcome {
        before: &before,
        after: &after,
    }))
}

/// The step's change in its parts, from the chapter's two runs.
fn parts(c: &'static Chapter, runs: Runs) -> Option<String> {
    let (before, after) = (runs.before.get()?, runs.after.get()?);
    c.parts_text(&Outcome {
        before: &before,
        after: &after,
    })
}

/// Whether the prediction was right, and why, from the chapter's two runs.
#[component]
fn Verdict(
    chapter: &'static Chapter,
    picked: RwSignal<Option<usize>>,
    runs: Runs,
) -> impl IntoView {
    let text = move || {
        let (before, after) = (runs.before.get()?, runs.after.get()?);
        let outcome = Outcome {
            before: &before,
            after: &after,
        };
        let right = chapter.answer.map(|a| a(&outcome));
        let text = chapter.verdict_text(picked.get(), &outcome)?;
        Some((text, right == picked.get() && right.is_some()))
    };
    view! {
        <p
            class="verdict"
            role="status"
            tabindex="-1"
            data-focus=""
            data-right=move || text().map(|(_, r)| r.to_string())
            class:right=move || text().is_some_and(|(_, r)| r)
        >
            {move || text().map(|(t, _)| t).unwrap_or_else(|| "Simulating the change…".to_string())}
        </p>
    }
}

/// The watched figures, after and before, from the chapter's own runs.
#[component]
fn RevealFigures(chapter: &'static Chapter, runs: Runs) -> impl IntoView {
    view! {
        <ul class="reveal" aria-live="polite">
            {chapter.watch.iter().map(|(label, metric)| {
                let (label, metric) = (*label, *metric);
                let get = move |r: &Report| metric.get(r);
                let name = metric.name();
                // The current value first: a page query for a metric
                // finds it before any "before" value.
                view! {
                    <li>
                        <span>{label}": "</span>
                        <strong
                            data-metric=name.clone()
                            data-run="current"
                            data-value=move || runs.after.with(|r| r.as_ref().map(|r| format::raw(get(r))))
                        >
                            {move || runs.after.with(|r| r.as_ref().map(|r| shown(metric, get(r))))}
                        </strong>
                        " (before: "
                        <span
                            data-metric=name
                            data-run="previous"
                            data-value=move || runs.before.with(|r| r.as_ref().map(|r| format::raw(get(r))))
                        >
                            {move || runs.before.with(|r| r.as_ref().map(|r| shown(metric, get(r))))}
                        </span>
                        ")"
                    </li>
                }
            }).collect_view()}
        </ul>
    }
}

/// Back and leave, on every chapter.
#[component]
fn TourNav(
    leave: impl Fn() + Copy + Send + Sync + 'static,
    go: impl Fn(usize) + Copy + Send + Sync + 'static,
    chapter: usize,
) -> impl IntoView {
    view! {
        <div class="tour-nav">
            <button type="button" disabled=chapter == 0 on:click=move |_| go(chapter.saturating_sub(1))>"Previous chapter"</button>
            <button type="button" on:click=move |_| leave()>"Leave the tour"</button>
        </div>
    }
}
