//! Playback controls: play/pause, step, scrub and speed, with Space as the
//! play/pause key anywhere on the page that does not use Space itself.

use leptos::prelude::*;

use crate::state::AppState;
use crate::timeline::frame;

/// Starts or pauses the sweep. Playing from the end starts over. A step
/// without a timeline has nothing to play (Space does nothing then).
pub fn toggle(state: AppState) {
    if state.no_timeline_untracked() {
        return;
    }
    let scene = state.scene();
    let mut s = scene.borrow_mut();
    s.playing = !s.playing;
    if s.playing && !s.playhead_s.is_finite() {
        s.playhead_s = 0.0;
    }
    let playing = s.playing;
    drop(s);
    state.playing.set(playing);
    frame::request();
}

fn step(state: AppState, forward: bool) {
    let scene = state.scene();
    let mut s = scene.borrow_mut();
    s.playing = false;
    s.step_playhead(forward);
    drop(s);
    state.playing.set(false);
    frame::request();
}

fn scrub(state: AppState, frac: f64) {
    let scene = state.scene();
    let mut s = scene.borrow_mut();
    s.playing = false;
    s.playhead_s = if frac >= 1.0 {
        f64::INFINITY
    } else {
        frac * s.step_s()
    };
    drop(s);
    state.playing.set(false);
    frame::request();
}

#[component]
pub fn Playback() -> impl IntoView {
    let state = expect_context::<AppState>();
    let keys = crate::web::host::KeyScope::within(
        use_context::<crate::web::address::Share>().and_then(|s| s.widget_root()),
    );
    let space = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() == " " && !ev.repeat() && keys.space_plays(&ev) {
            ev.prevent_default();
            toggle(state);
        }
    });
    // A widget can be removed while the page lives on.
    on_cleanup(move || space.remove());
    let on_speed = move |ev: leptos::ev::Event| {
        if let Ok(v) = event_target_value(&ev).parse::<f64>() {
            state.speed.set(v);
            state.scene().borrow_mut().speed = v;
        }
    };
    let off = move || state.no_timeline();
    view! {
        <div
            class="playback"
            role="group"
            aria-label="Playback"
            title=move || off().then_some(crate::timeline::panel::NO_TIMELINE_CONTROLS)
        >
            <button type="button" disabled=off on:click=move |_| step(state, false) aria-label="Step back">"« Step"</button>
            <button
                type="button"
                class="play"
                disabled=off
                aria-pressed=move || state.playing.get().to_string()
                on:click=move |_| toggle(state)
            >
                {move || if state.playing.get() { "Pause" } else { "Play" }}
            </button>
            <button type="button" disabled=off on:click=move |_| step(state, true) aria-label="Step forward">"Step »"</button>
            <label class="scrub">
                <span class="sr-only">"Playhead"</span>
                <input
                    type="range"
                    disabled=off
                    min="0"
                    max="1000"
                    step="1"
                    aria-label="Playhead"
                    prop:value=move || (state.playhead.get() * 1000.0).round().to_string()
                    on:input=move |ev| {
                        if let Ok(v) = event_target_value(&ev).parse::<f64>() {
                            scrub(state, v / 1000.0);
                        }
                    }
                />
            </label>
            <label class="inline">
                "Speed "
                <select disabled=off on:change=on_speed prop:value=move || state.speed.get().to_string()>
                    <option value="0.25">"¼×"</option>
                    <option value="0.5">"½×"</option>
                    <option value="1" selected=true>"1×"</option>
                    <option value="2">"2×"</option>
                    <option value="4">"4×"</option>
                </select>
            </label>
        </div>
    }
}
