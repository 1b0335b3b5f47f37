//! Small browser helpers shared by the modules. None of them panics: a missing
//! window or element only means nothing is done.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::JsCast;

pub fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

pub fn document() -> Option<web_sys::Document> {
    window()?.document()
}

/// Milliseconds since page load, for animation and for the benchmark counters.
pub fn now_ms() -> f64 {
    window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// Wall-clock time, ms since the epoch (`timeOrigin + now`): comparable
/// with a worker's.
pub fn epoch_ms() -> f64 {
    window()
        .and_then(|w| w.performance())
        .map(|p| p.time_origin() + p.now())
        .unwrap_or(0.0)
}

/// Whether a media query matches (colour scheme, reduced motion).
pub fn prefers(query: &str) -> bool {
    window()
        .and_then(|w| w.match_media(query).ok().flatten())
        .map(|m| m.matches())
        .unwrap_or(false)
}

pub fn reduced_motion() -> bool {
    prefers("(prefers-reduced-motion: reduce)")
}

/// Sets `data-<name>` on `<body>`; tests and the benchmark wait on these.
pub fn set_body_data(name: &str, value: &str) {
    if let Some(body) = document().and_then(|d| d.body()) {
        let _ = body.set_attribute(&format!("data-{name}"), value);
    }
}

/// True when keyboard focus is in a control that uses Space itself.
pub fn focus_is_in_text_or_button() -> bool {
    let Some(active) = document().and_then(|d| d.active_element()) else {
        return false;
    };
    let tag = active.tag_name().to_ascii_lowercase();
    match tag.as_str() {
        "textarea" | "select" | "button" | "summary" | "a" => true,
        "input" => {
            let kind = active
                .dyn_ref::<web_sys::HtmlInputElement>()
                .map(|i| i.type_())
                .unwrap_or_default();
            // Range sliders ignore Space, so Space still plays there.
            kind != "range"
        }
        _ => active.get_attribute("role").as_deref() == Some("switch"),
    }
}

/// True when the page asked for its test-only hooks (the browser tests set
/// `globalThis.overlapLabTestHooks = true` before the app starts): the
/// worker's test messages and the page's own panic trigger.
pub fn test_hooks_on() -> bool {
    js_sys::Reflect::get(&js_sys::global(), &"overlapLabTestHooks".into())
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

/// A callback queued as a task of its own by [`next_task`]; dropping it
/// before the task runs cancels it, as dropping a gloo `Timeout` does.
pub struct NextTask(Queued);

/// The callback, taken when it runs (or never, once cancelled).
type Pending = Rc<RefCell<Option<Box<dyn FnOnce()>>>>;

enum Queued {
    /// The port is kept so that the channel lives until its message arrives.
    Message {
        callback: Pending,
        _port: web_sys::MessagePort,
    },
    Timer {
        _timer: gloo_timers::callback::Timeout,
    },
}

impl Drop for NextTask {
    fn drop(&mut self) {
        if let Queued::Message { callback, .. } = &self.0 {
            callback.borrow_mut().take();
        }
    }
}

/// Runs `f` in a task of its own, after those already queued, with no
/// delay: a message to itself through a `MessageChannel`. A chain of
/// zero-delay timers, each set from the last, is clamped by the browser to
/// 4 ms apart from the fifth on (HTML's timer nesting level); the
/// decoder's 30 to 70 slices of about 8 ms lost 200 ms or more to it on
/// 1T's timeline. Tasks still yield to rendering in between. A zero-delay
/// timer where the browser has no `MessageChannel`.
pub fn next_task(f: impl FnOnce() + 'static) -> NextTask {
    let f: Pending = Rc::new(RefCell::new(Some(Box::new(f))));
    if let Ok(channel) = web_sys::MessageChannel::new() {
        let held = f.clone();
        let run = wasm_bindgen::closure::Closure::once_into_js(move || {
            let f = held.borrow_mut().take();
            if let Some(f) = f {
                f();
            }
        });
        let port = channel.port1();
        port.set_onmessage(Some(run.unchecked_ref()));
        if channel
            .port2()
            .post_message(&wasm_bindgen::JsValue::UNDEFINED)
            .is_ok()
        {
            return NextTask(Queued::Message {
                callback: f,
                _port: port,
            });
        }
        port.set_onmessage(None);
    }
    let f = f.borrow_mut().take();
    let timer = gloo_timers::callback::Timeout::new(0, move || {
        if let Some(f) = f {
            f();
        }
    });
    NextTask(Queued::Timer { _timer: timer })
}
