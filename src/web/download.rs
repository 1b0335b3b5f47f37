//! Downloads: a file saved from text, bytes or a URL, through a temporary
//! `<a download>` and, for data made here, a Blob's object URL.

use gloo_timers::callback::Timeout;
use wasm_bindgen::{JsCast, JsValue};

use crate::dom;

/// Saves `url` under `name` through a temporary `<a download>`.
pub fn save_url(name: &str, url: &str) -> Option<()> {
    let doc = dom::document()?;
    let a = doc
        .create_element("a")
        .ok()?
        .dyn_into::<web_sys::HtmlAnchorElement>()
        .ok()?;
    a.set_href(url);
    a.set_download(name);
    a.set_hidden(true);
    doc.body()?.append_child(&a).ok()?;
    a.click();
    a.remove();
    Some(())
}

/// Saves a Blob under `name` through an object URL.
fn save_blob(name: &str, blob: &web_sys::Blob) -> Option<()> {
    let url = web_sys::Url::create_object_url_with_blob(blob).ok()?;
    save_url(name, &url);
    // The download has started by then; the URL only holds memory.
    Timeout::new(30_000, move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    })
    .forget();
    Some(())
}

/// Saves `text` as a file through a Blob and an object URL; never an empty file.
pub fn download_text(name: &str, mime: &str, text: &str) -> Option<()> {
    if text.is_empty() {
        return None;
    }
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag).ok()?;
    save_blob(name, &blob)
}

/// Saves what `canvas` shows as a PNG under `name`, encoded off the main
/// thread (`toBlob`; a large slide's `toDataURL` held it for over 50 ms).
/// `done` hears whether it was saved: never an empty file.
pub fn download_canvas_png(
    name: &str,
    canvas: &web_sys::HtmlCanvasElement,
    done: impl FnOnce(bool) + 'static,
) -> Option<()> {
    let name = name.to_string();
    let saved = wasm_bindgen::closure::Closure::once_into_js(move |blob: JsValue| {
        let saved = blob
            .dyn_into::<web_sys::Blob>()
            .ok()
            .filter(|b| b.size() > 0.0)
            .and_then(|b| save_blob(&name, &b));
        done(saved.is_some());
    });
    canvas
        .to_blob_with_type(saved.unchecked_ref(), "image/png")
        .ok()
}

/// Saves bytes (built in a worker) as a file; never an empty one.
pub fn download_bytes(name: &str, mime: &str, bytes: &js_sys::Uint8Array) -> Option<()> {
    if bytes.length() == 0 {
        return None;
    }
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type(mime);
    let blob =
        web_sys::Blob::new_with_u8_array_sequence_and_options(&js_sys::Array::of1(bytes), &bag)
            .ok()?;
    save_blob(name, &blob)
}
