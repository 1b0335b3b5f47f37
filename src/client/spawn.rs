//! Starting a worker of the app's module: the browser's part of it, for
//! `WorkerClient` (`worker_client`), which owns the worker's life.
//!
//! The worker runs the page's own WebAssembly module: the page posts its
//! compiled `WebAssembly.Module` and the URL of its wasm-bindgen JavaScript
//! module to `sim-worker.js`, which imports that JavaScript and instantiates
//! the module (no second download, no second compile of the code).
//!
//! Both URLs are resolved against `import.meta.url` of the app's own
//! JavaScript module, never against the page's address: the app may be
//! loaded from another folder than the page that shows it (a widget inside
//! course material), and `sim-worker.js` sits beside that module in `dist/`.

use overlap_session::{WorkerReply, WorkerRequest};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{ErrorEvent, MessageEvent, Worker, WorkerOptions, WorkerType};

use super::wire;

/// The worker script's file name, in the same folder as the app's module.
pub const WORKER_SCRIPT: &str = "sim-worker.js";

#[wasm_bindgen]
extern "C" {
    /// The address of the wasm-bindgen JavaScript module this code was loaded by.
    #[wasm_bindgen(thread_local_v2, js_namespace = ["import", "meta"], js_name = url)]
    static MODULE_URL: String;
}

/// The URL of the app's JavaScript module.
pub fn module_url() -> String {
    MODULE_URL.with(String::clone)
}

/// The worker script's URL: beside the app's module.
pub fn worker_url() -> Result<String, String> {
    web_sys::Url::new_with_base(WORKER_SCRIPT, &module_url())
        .map(|u| u.href())
        .map_err(|_| format!("no address for {WORKER_SCRIPT} next to {}", module_url()))
}

/// A running worker; dropping it terminates the worker.
pub struct WorkerHandle {
    worker: Worker,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(ErrorEvent)>,
}

impl WorkerHandle {
    /// Posts a message (an envelope, `wire::envelope`) to the worker.
    pub fn post(&self, message: &js_sys::Array) -> Result<(), JsValue> {
        self.worker.post_message(message)
    }
}

impl Drop for WorkerHandle {
    fn drop(&mut self) {
        self.worker.terminate();
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
    }
}

/// Starts a worker. `on_message` gets every reply with the arrays after it;
/// `on_error` gets a description when the worker's script fails outside a
/// message, or sends a message this module cannot read.
pub fn spawn(
    mut on_message: impl FnMut(WorkerReply, js_sys::Array) + 'static,
    on_error: impl FnMut(String) + 'static,
) -> Result<WorkerHandle, String> {
    let url = worker_url()?;
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    let worker = Worker::new_with_options(&url, &options)
        .or_else(|_| {
            // A worker script must come from the page's own origin; when the
            // app is served from another one, a same-origin bootstrap (a Blob)
            // imports the script from there instead.
            let source = format!(
                "import {};\n",
                js_sys::JSON::stringify(&url.as_str().into())
                    .ok()
                    .and_then(|s| s.as_string())
                    .unwrap_or_default()
            );
            let bag = web_sys::BlobPropertyBag::new();
            bag.set_type("text/javascript");
            let blob = web_sys::Blob::new_with_str_sequence_and_options(
                &js_sys::Array::of1(&source.into()),
                &bag,
            )?;
            let blob_url = web_sys::Url::create_object_url_with_blob(&blob)?;
            Worker::new_with_options(&blob_url, &options)
        })
        .map_err(|e| format!("the browser refused to start a worker from {url}: {e:?}"))?;
    let on_error = std::rc::Rc::new(std::cell::RefCell::new(on_error));
    let on_message = {
        let on_error = on_error.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
            match wire::open::<WorkerReply>(&ev.data()) {
                Ok((reply, arrays)) => on_message(reply, arrays),
                Err(e) => (on_error.borrow_mut())(e),
            }
        })
    };
    let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |ev: ErrorEvent| {
        // Handled here: the page reports it in its own alert.
        ev.prevent_default();
        let text = ev.message();
        (on_error.borrow_mut())(if text.is_empty() {
            format!("the simulation worker ({url}) failed to load or stopped")
        } else {
            text
        })
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    // Read by `sim-worker.js`: the glue's URL, then the compiled module.
    let init = WorkerRequest::Init {
        glue: module_url(),
        test_hooks: crate::dom::test_hooks_on(),
    };
    worker
        .post_message(&wire::envelope(&init, &[&wasm_bindgen::module()]))
        .map_err(|e| format!("could not start the simulation worker: {e:?}"))?;
    Ok(WorkerHandle {
        worker,
        _on_message: on_message,
        _on_error: on_error,
    })
}
