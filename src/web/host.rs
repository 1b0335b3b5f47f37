//! Where an app instance lives. The full page owns the window: its share-link
//! state is the address bar, and Space plays anywhere on it. A widget is a
//! guest on someone else's page (a notebook, a course page): its share-link
//! state belongs to its host (an anywidget model or an element's attribute),
//! and it reacts only to keys pressed inside it.

use wasm_bindgen::{JsCast, JsValue};

/// A widget's host: where its scenario comes from and goes to.
#[derive(Clone)]
pub struct WidgetHost {
    /// The element the widget is mounted in (inside the widget's shadow root).
    pub root: web_sys::HtmlElement,
    /// The scenario the host holds: a share-link query string (`?v=1&...`).
    pub query: String,
    /// The host's `controls` value, as in an embed link (`tp,pp,dp`, `overlap`).
    pub controls: Option<String>,
    /// The full app beside the widget's module, for "Open in Overlap Lab".
    pub app_url: String,
    /// Called with the new query string (`?v=1&...`) when the user edits the
    /// scenario inside the widget.
    pub on_scenario: js_sys::Function,
}

impl WidgetHost {
    /// Hands an edited scenario to the host. A host that refuses (throws) is
    /// not the widget's problem: the widget keeps working with its own state.
    pub fn write(&self, query: &str) {
        let _ = self
            .on_scenario
            .call1(&JsValue::NULL, &JsValue::from_str(&format!("?{query}")));
    }
}

/// Which keys an instance may take: the page takes Space anywhere that does
/// not use Space itself; a widget only when the key was pressed inside it.
#[derive(Clone)]
pub struct KeyScope(Option<web_sys::Element>);

impl KeyScope {
    /// The scope of an instance: the page's, or a widget's inside `root`
    /// (its `Share`'s `widget_root`).
    pub fn within(root: Option<web_sys::Element>) -> Self {
        Self(root)
    }

    /// Whether this Space keypress should play or pause this instance.
    pub fn space_plays(&self, ev: &web_sys::KeyboardEvent) -> bool {
        match &self.0 {
            None => !crate::dom::focus_is_in_text_or_button(),
            Some(root) => {
                let path = ev.composed_path();
                let inside = path.includes(root, 0);
                let origin = path.get(0).dyn_into::<web_sys::Element>().ok();
                inside && !origin.is_some_and(|el| uses_space(&el))
            }
        }
    }
}

/// The element focused inside `node`'s shadow root (or document): inside a
/// widget, `document.activeElement` is only the widget's host element.
pub fn active_element_near(node: &web_sys::Node) -> Option<web_sys::Element> {
    let root = node.get_root_node();
    js_sys::Reflect::get(&root, &JsValue::from_str("activeElement"))
        .ok()?
        .dyn_into::<web_sys::Element>()
        .ok()
}

/// Controls that act on Space themselves (typing, pressing a button or a
/// switch), where Space must not also play the timeline.
fn uses_space(el: &web_sys::Element) -> bool {
    let editable = js_sys::Reflect::get(el, &JsValue::from_str("isContentEditable"))
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    if editable {
        return true;
    }
    match el.tag_name().to_ascii_lowercase().as_str() {
        "textarea" | "select" | "button" | "summary" | "a" => true,
        // Range sliders ignore Space, so Space still plays there.
        "input" => el.get_attribute("type").as_deref() != Some("range"),
        _ => el.get_attribute("role").as_deref() == Some("switch"),
    }
}
