//! The import worker's side of `WorkerRequest::Import`: the reader's files
//! are read here a slice at a time (`FileReaderSync`, which only workers
//! have), never whole and never sent anywhere, through the core's trace
//! reader; progress goes to the page as the bytes are read.

use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;

use overlap_session::{TraceFile, WorkerReply};
use overlap_trace::import_sources_with;
use wasm_bindgen::JsCast;

use super::scope::{now_ms, post};

/// Bytes read from a file at once: large enough that the calls into the
/// browser cost nothing beside the parse (25 per 100 MB), small enough that
/// the worker holds little of the file.
const SLICE_BYTES: u64 = 4 << 20;

/// A file read a slice at a time; every slice read counts towards `read`
/// and posts the import's progress.
struct FileSource {
    blob: web_sys::Blob,
    reader: web_sys::FileReaderSync,
    at: u64,
    len: u64,
    slice: Vec<u8>,
    taken: usize,
    progress: Rc<Progress>,
}

struct Progress {
    gen: u64,
    total: u64,
    read: Cell<u64>,
}

impl Progress {
    fn add(&self, n: u64) {
        self.read.set(self.read.get() + n);
        post(
            &WorkerReply::ImportProgress {
                gen: self.gen,
                read_bytes: self.read.get(),
                total_bytes: self.total,
            },
            &[],
            &[],
        );
    }
}

impl Read for FileSource {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.taken == self.slice.len() {
            if self.at >= self.len {
                return Ok(0);
            }
            let end = (self.at + SLICE_BYTES).min(self.len);
            let part = self
                .blob
                .slice_with_f64_and_f64(self.at as f64, end as f64)
                .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
            let bytes = self.reader.read_as_array_buffer(&part).map_err(|e| {
                std::io::Error::other(format!("the browser could not read it: {e:?}"))
            })?;
            self.slice = js_sys::Uint8Array::new(&bytes).to_vec();
            self.taken = 0;
            self.progress.add(end - self.at);
            self.at = end;
            if self.slice.is_empty() {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.slice.len() - self.taken);
        buf[..n].copy_from_slice(&self.slice[self.taken..self.taken + n]);
        self.taken += n;
        Ok(n)
    }
}

fn refused(gen: u64, message: String) {
    post(&WorkerReply::ImportRefused { gen, message }, &[], &[]);
}

/// Reads `files` (their `File`s in `blobs`, in the same order) and posts
/// the figures and bars, or the reader's refusal.
pub fn import(gen: u64, files: &[TraceFile], rules: &str, blobs: &js_sys::Array) {
    let t0 = now_ms();
    // The reader's rules, checked by the page already; read again here
    // where the import uses them.
    let classifier = match overlap_trace::rules::parse_rules(rules, "classification rules") {
        Ok(rules) => overlap_trace::Classifier::new(rules),
        Err(e) => return refused(gen, e),
    };
    let reader = match web_sys::FileReaderSync::new() {
        Ok(r) => r,
        Err(e) => {
            return refused(
                gen,
                format!("this browser cannot read files in a worker ({e:?})"),
            )
        }
    };
    let progress = Rc::new(Progress {
        gen,
        total: files.iter().map(|f| f.bytes).sum(),
        read: Cell::new(0),
    });
    let mut sources = Vec::with_capacity(files.len());
    for (i, f) in files.iter().enumerate() {
        let Ok(blob) = blobs.get(i as u32).dyn_into::<web_sys::Blob>() else {
            return refused(gen, format!("{}: the page sent no file to read", f.name));
        };
        // The size the browser states, not the one the message says.
        let len = blob.size() as u64;
        sources.push((
            f.name.clone(),
            len,
            FileSource {
                blob,
                reader: reader.clone(),
                at: 0,
                len,
                slice: Vec::new(),
                taken: 0,
                progress: progress.clone(),
            },
        ));
    }
    let (figures, measured) = match import_sources_with(sources, &classifier) {
        Ok(done) => done,
        Err(e) => return refused(gen, e.to_string()),
    };
    let (f64s, u32s) = measured.to_arrays();
    let f64s = js_sys::Float64Array::from(&f64s[..]);
    let u32s = js_sys::Uint32Array::from(&u32s[..]);
    let reply = WorkerReply::Imported {
        gen,
        figures,
        rows: measured.rows,
        span_s: measured.span_s,
        import_ms: now_ms() - t0,
    };
    post(&reply, &[&f64s, &u32s], &[f64s.buffer(), u32s.buffer()]);
}
