//! The envelope of every message across a worker boundary: a JavaScript
//! array whose first element is the typed message (`overlap_session`'s
//! `WorkerRequest` or `WorkerReply`) as JSON text, followed by the typed
//! arrays that travel beside it. Nothing is read or written by a string key.

use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::JsValue;

use overlap_session::messages::{from_json, to_json};

/// A message and the arrays after it, ready to post.
pub fn envelope<T: Serialize>(message: &T, arrays: &[&JsValue]) -> js_sys::Array {
    let out = js_sys::Array::of1(&to_json(message).into());
    for a in arrays {
        out.push(a);
    }
    out
}

/// A message received: the typed message and the arrays after it.
pub fn open<T: DeserializeOwned>(data: &JsValue) -> Result<(T, js_sys::Array), String> {
    let all: &js_sys::Array = wasm_bindgen::JsCast::dyn_ref(data)
        .ok_or_else(|| "a worker message that is not an array".to_string())?;
    let head = all
        .get(0)
        .as_string()
        .ok_or_else(|| "a worker message without its text".to_string())?;
    Ok((from_json(&head)?, all.slice(1, all.length())))
}

/// The buffers of `arrays`, to transfer rather than copy.
pub fn transfer_list(buffers: &[js_sys::ArrayBuffer]) -> js_sys::Array {
    buffers.iter().collect()
}
