//! Cutting a trace's byte stream into its `traceEvents` array, handed on in
//! batches of whole events, and the rest of the document (the "header":
//! `distributedInfo`, `deviceProperties`, ...) with that array left empty.
//! A scan that only follows strings and brackets is far faster than reading
//! JSON from an `io::Read` value by value, and each batch is then read by
//! serde_json from a slice; memory holds one batch at a time.

use std::io::Read;

/// A batch of events is handed on once it holds this many bytes: large
/// enough that a batch's set-up costs nothing, small against the memory
/// goal (issue 44: a 100 MB trace in under 300 MB).
const BATCH_BYTES: usize = 1 << 20;
/// One event longer than this is refused: Kineto's longest are a few KB.
pub const MAX_EVENT_BYTES: usize = 64 << 20;
/// The document outside `traceEvents` is held whole; Kineto's is a few KB.
pub const MAX_HEADER_BYTES: usize = 64 << 20;

/// Why the stream could not be cut.
#[derive(Debug)]
pub enum SplitError<E> {
    /// Reading failed.
    Io(std::io::Error),
    /// The stream ended inside a string, object or array.
    Truncated(u64),
    /// The first byte cannot begin JSON.
    NotJson(u64),
    /// One event, or the header, is longer than its limit.
    Oversized(&'static str, usize),
    /// The batch's reader refused it.
    Batch(E),
}

/// Hands the batch on, closed, and opens the next.
fn flush<E>(
    batch: &mut Vec<u8>,
    at: u64,
    on_batch: &mut impl FnMut(&[u8], u64) -> Result<(), E>,
) -> Result<(), E> {
    batch.push(b']');
    let r = on_batch(batch, at);
    batch.clear();
    batch.push(b'[');
    r
}

/// Reads `src` to its end, handing each batch of events (a JSON array's
/// text) with the stream offset of its start to `on_batch`, and returns
/// the header.
pub fn split<E>(
    mut src: impl Read,
    mut on_batch: impl FnMut(&[u8], u64) -> Result<(), E>,
) -> Result<Vec<u8>, SplitError<E>> {
    let mut buf = vec![0u8; 1 << 16];
    let mut header: Vec<u8> = Vec::new();
    let mut batch: Vec<u8> = Vec::with_capacity(BATCH_BYTES + 4096);
    let mut batch_at = 0u64;
    let (mut depth, mut in_str, mut escaped, mut started) = (0u32, false, false, false);
    // The depth inside the events array while in it.
    let mut events: Option<u32> = None;
    // The string at depth 1 being read, while it may still be "traceEvents".
    let mut key: Vec<u8> = Vec::with_capacity(16);
    let (mut key_open, mut key_is_events, mut value_is_events) = (false, false, false);
    let mut offset = 0u64;
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(SplitError::Io(e)),
        };
        let mut i = 0;
        while i < n {
            if in_str && !escaped && events.is_some() {
                // Most of an event is text: copy up to the next quote or
                // escape at once.
                let run = buf[i..n]
                    .iter()
                    .position(|&c| c == b'"' || c == b'\\')
                    .unwrap_or(n - i);
                batch.extend_from_slice(&buf[i..i + run]);
                i += run;
                offset += run as u64;
                if batch.len() > MAX_EVENT_BYTES + BATCH_BYTES {
                    return Err(SplitError::Oversized("one event", MAX_EVENT_BYTES));
                }
                if i == n {
                    break;
                }
            }
            let b = buf[i];
            i += 1;
            let at = offset;
            offset += 1;
            if let Some(d) = events {
                // Inside the events array: bytes go to the batch.
                if in_str {
                    batch.push(b);
                    if escaped {
                        escaped = false;
                    } else if b == b'\\' {
                        escaped = true;
                    } else if b == b'"' {
                        in_str = false;
                    }
                    continue;
                }
                match b {
                    b'"' => {
                        in_str = true;
                        batch.push(b);
                    }
                    b'{' | b'[' => {
                        depth += 1;
                        batch.push(b);
                    }
                    b']' if depth == d => {
                        // The array's end.
                        flush(&mut batch, batch_at, &mut on_batch).map_err(SplitError::Batch)?;
                        events = None;
                        depth -= 1;
                        header.push(b']');
                    }
                    b'}' if depth == d => {
                        // Not JSON: the batch's reader says where.
                        batch.push(b);
                        flush(&mut batch, batch_at, &mut on_batch).map_err(SplitError::Batch)?;
                        depth -= 1;
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        batch.push(b);
                    }
                    b',' if depth == d && batch.len() >= BATCH_BYTES => {
                        flush(&mut batch, batch_at, &mut on_batch).map_err(SplitError::Batch)?;
                        batch_at = at + 1;
                    }
                    b' ' | b'\n' | b'\r' | b'\t' if depth == d => {}
                    _ => batch.push(b),
                }
                if batch.len() > MAX_EVENT_BYTES + BATCH_BYTES {
                    return Err(SplitError::Oversized("one event", MAX_EVENT_BYTES));
                }
                continue;
            }
            if in_str {
                header.push(b);
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                    key_open = false;
                } else if b == b'"' {
                    in_str = false;
                    key_is_events = key_open && key == b"traceEvents";
                } else if key_open {
                    if key.len() < 16 {
                        key.push(b);
                    } else {
                        key_open = false;
                    }
                }
                continue;
            }
            if !started {
                match b {
                    b' ' | b'\n' | b'\r' | b'\t' => continue,
                    // Chrome's array format: the document is the events.
                    b'[' => {
                        started = true;
                        depth = 1;
                        events = Some(1);
                        batch.clear();
                        batch.push(b'[');
                        batch_at = at + 1;
                        header.push(b'[');
                        continue;
                    }
                    b'{' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => started = true,
                    _ => return Err(SplitError::NotJson(at)),
                }
            }
            header.push(b);
            if header.len() > MAX_HEADER_BYTES {
                return Err(SplitError::Oversized(
                    "the fields besides traceEvents",
                    MAX_HEADER_BYTES,
                ));
            }
            match b {
                b'"' => {
                    in_str = true;
                    value_is_events = false;
                    key_open = depth == 1;
                    key.clear();
                }
                b'[' if depth == 1 && value_is_events => {
                    depth = 2;
                    events = Some(2);
                    value_is_events = false;
                    batch.clear();
                    batch.push(b'[');
                    batch_at = at + 1;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth = depth.saturating_sub(1),
                b':' if depth == 1 => {
                    value_is_events = key_is_events;
                    key_is_events = false;
                }
                b' ' | b'\n' | b'\r' | b'\t' => {}
                _ => {
                    key_is_events = false;
                    value_is_events = false;
                }
            }
        }
    }
    if in_str || depth > 0 || events.is_some() {
        return Err(SplitError::Truncated(offset));
    }
    Ok(header)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> (String, Vec<String>) {
        let mut batches = Vec::new();
        let header = split(text.as_bytes(), |b, _| {
            batches.push(String::from_utf8(b.to_vec()).unwrap());
            Ok::<(), ()>(())
        })
        .unwrap();
        (String::from_utf8(header).unwrap(), batches)
    }

    #[test]
    fn the_events_leave_the_header_and_arrive_whole() {
        let (header, batches) = run(
            r#"{"a": "traceEvents", "traceEvents": [{"name": "x]\"}"}, [1, 2]], "b": {"traceEvents": 1}}"#,
        );
        assert_eq!(
            header,
            r#"{"a": "traceEvents", "traceEvents": [], "b": {"traceEvents": 1}}"#
        );
        assert_eq!(batches, vec![r#"[{"name": "x]\"}"},[1, 2]]"#.to_string()]);
        let (header, batches) = run(r#" [{"ph": "X"}, 3] "#);
        assert_eq!(header, "[] ");
        assert_eq!(batches, vec![r#"[{"ph": "X"},3]"#.to_string()]);
    }

    #[test]
    fn cut_or_foreign_streams_are_told_apart() {
        let cut = split(&b"{\"traceEvents\": [{\"a\": 1}"[..], |_, _| {
            Ok::<(), ()>(())
        });
        assert!(matches!(cut, Err(SplitError::Truncated(_))));
        let binary = split(&b"\x89PNG"[..], |_, _| Ok::<(), ()>(()));
        assert!(matches!(binary, Err(SplitError::NotJson(0))));
    }
}
