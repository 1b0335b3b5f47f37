//! Skip links: the first stops of the Tab key, out of sight until focused.
//! They move the keyboard focus straight to the timeline, to the figures or
//! to the scenario controls (the preset picker), past what lies between. Focus is moved by hand rather than through the
//! address's fragment, which holds the share link and must not change.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::dom;

/// Focuses the first element matching `selector` and brings it into view;
/// an element that takes no focus of its own gets `tabindex="-1"`.
fn focus(selector: &str) {
    let Some(el) = dom::document()
        .and_then(|d| d.query_selector(selector).ok().flatten())
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    else {
        return;
    };
    if el.tab_index() < 0 && !el.has_attribute("tabindex") {
        let _ = el.set_attribute("tabindex", "-1");
    }
    let _ = el.focus();
    el.scroll_into_view();
}

/// The links, for the top of the full page.
#[component]
pub fn SkipLinks() -> impl IntoView {
    let link = |href: &'static str, selector: &'static str, text: &'static str| {
        view! {
            <a
                href=href
                on:click=move |ev: leptos::ev::MouseEvent| {
                    ev.prevent_default();
                    focus(selector);
                }
            >
                {text}
            </a>
        }
    };
    view! {
        <nav class="skip-links" aria-label="Skip links">
            {link("#timeline-h", ".timeline canvas", "Skip to the timeline")}
            {link("#figures", ".content > .headline", "Skip to the figures")}
            // The picker itself: on a phone its section has no box of its
            // own (`display: contents`), so it could not take the focus.
            {link("#scenario", ".preset-picker select", "Skip to the scenario controls")}
        </nav>
    }
}
