//! What the reader sees if the page itself panics (issue 45): a wasm panic
//! aborts the module, so Leptos can no longer draw anything, and without
//! this the page would stay white or frozen with no word. The hook writes a
//! plain notice straight into the document with the link to report, built
//! from text nodes only (the link is the reader's own address, which must
//! never be read as markup).

use wasm_bindgen::prelude::*;

/// Class of the notice, for the style sheet and the browser test.
const NOTICE_CLASS: &str = "page-panic";

/// Installs the hook: the console still gets the panic's message and stack
/// (`console_error_panic_hook`), then the notice is shown.
pub fn install() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        show();
    }));
}

/// Puts the notice at the top of the body, once.
fn show() {
    let Some(document) = crate::dom::document() else {
        return;
    };
    let Some(body) = document.body() else { return };
    if document
        .query_selector(&format!(".{NOTICE_CLASS}"))
        .ok()
        .flatten()
        .is_some()
    {
        return;
    }
    let href = crate::dom::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default();
    let _ = build(&document, &body, &href);
    crate::dom::set_body_data("pagePanic", "1");
}

fn build(
    document: &web_sys::Document,
    body: &web_sys::HtmlElement,
    href: &str,
) -> Result<(), JsValue> {
    let notice = document.create_element("div")?;
    notice.set_class_name(NOTICE_CLASS);
    notice.set_attribute("role", "alert")?;
    let said = document.create_element("p")?;
    said.append_with_str_1(
        "Overlap Lab stopped on an internal error and cannot go on in this tab. \
         What you typed is kept in the address bar. Please report this link, then reload: ",
    )?;
    let link = document.create_element("a")?;
    link.set_attribute("href", href)?;
    link.append_with_str_1(href)?;
    said.append_child(&link)?;
    notice.append_child(&said)?;
    body.prepend_with_node_1(&notice)?;
    Ok(())
}

/// Test-only: `overlap-lab-test:page-panic` on the window makes the page
/// itself panic, so that a browser test can see what a reader would. Only
/// when the test hooks are on (`overlapLabTestHooks`).
pub fn install_test_trigger() {
    if !crate::dom::test_hooks_on() {
        return;
    }
    let Some(window) = crate::dom::window() else {
        return;
    };
    let trigger = Closure::<dyn Fn()>::new(|| panic!("a test asked the page to panic"));
    let _ = window.add_event_listener_with_callback(
        "overlap-lab-test:page-panic",
        trigger.as_ref().unchecked_ref(),
    );
    // The listener lives as long as the page.
    trigger.forget();
}
