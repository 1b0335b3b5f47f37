//! Reading one trace file as a stream: the `traceEvents` array is visited
//! event by event (`events`) and each event is read into the few fields
//! kept (`sink`: [`Kernel`], a launch, a collective's record, a profiler
//! step); every other field, `args` included, is skipped as it is read, so
//! memory grows with the GPU kernels kept, never with the bytes of the file.

use std::cell::Cell;
use std::io::{BufRead, BufReader, Read};
use std::rc::Rc;

use serde::de::DeserializeSeed;

use crate::error::ImportError;
use crate::events::{EventsSeed, RootSeed};
use crate::limits::{MAX_KERNELS, MAX_TRACE_BYTES};
use crate::sink::{Sink, Stop, MAX_DURATION_US, MAX_TIME_US};
use crate::split::{split, SplitError};

pub use crate::sink::{FileTrace, Kernel, RankLists};

/// Counts the bytes read and fails past `limit`, so that a file that
/// inflates beyond it (a gzip bomb, an endless device) stops there.
struct Capped<R> {
    inner: R,
    read: u64,
    limit: u64,
    over: Rc<Cell<bool>>,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.read >= self.limit {
            // One byte past the limit tells a file of exactly the limit
            // from a longer one.
            let mut one = [0u8; 1];
            if self.inner.read(&mut one)? == 0 {
                return Ok(0);
            }
            self.over.set(true);
            return Err(std::io::Error::other("over the limit"));
        }
        let room = (self.limit - self.read).min(buf.len() as u64) as usize;
        let n = self.inner.read(&mut buf[..room])?;
        self.read += n as u64;
        Ok(n)
    }
}

/// Reads one trace from `source` (plain or gzip JSON, told by its first
/// bytes), named `shown` in messages.
pub fn read_trace(source: impl Read, shown: &str) -> Result<FileTrace, ImportError> {
    read_trace_with(source, shown, MAX_TRACE_BYTES, MAX_KERNELS)
}

/// As [`read_trace`], with the limits given (tests use small ones).
pub fn read_trace_with(
    source: impl Read,
    shown: &str,
    max_bytes: u64,
    max_kernels: usize,
) -> Result<FileTrace, ImportError> {
    read_trace_in(
        source,
        shown,
        max_bytes,
        max_kernels,
        &mut RankLists::default(),
    )
}

/// As [`read_trace_with`], the process groups' rank lists held in
/// `rank_lists`, which the files of one import share.
pub fn read_trace_in(
    source: impl Read,
    shown: &str,
    max_bytes: u64,
    max_kernels: usize,
    rank_lists: &mut RankLists,
) -> Result<FileTrace, ImportError> {
    let mut sink = Sink::new(max_kernels, std::mem::take(rank_lists));
    let read = read_into(source, shown, max_bytes, &mut sink);
    match read {
        Ok(()) => {
            let (trace, lists) = sink.finish(shown.to_string());
            *rank_lists = lists;
            Ok(trace)
        }
        Err(e) => {
            *rank_lists = std::mem::take(&mut sink.rank_lists);
            Err(e)
        }
    }
}

fn read_into(
    source: impl Read,
    shown: &str,
    max_bytes: u64,
    sink: &mut Sink,
) -> Result<(), ImportError> {
    let mut buffered = BufReader::with_capacity(1 << 16, source);
    let head = buffered
        .fill_buf()
        .map_err(|e| ImportError::new(format!("cannot read {shown}: {e}")))?;
    let gzip = head.starts_with(&[0x1f, 0x8b]);
    let over = Rc::new(Cell::new(false));
    let result = if gzip {
        let inflated = flate2::bufread::MultiGzDecoder::new(buffered);
        parse(inflated, sink, max_bytes, over.clone())
    } else {
        parse(buffered, sink, max_bytes, over.clone())
    };
    if let Err(e) = result {
        return Err(explain(&e, sink, over.get(), gzip, shown, max_bytes));
    }
    if !sink.events_seen {
        return Err(ImportError::new(format!(
            "{shown} is JSON but not a trace: it has no traceEvents array (a PyTorch profiler or Chrome trace holds one)"
        )));
    }
    if sink.kernels.is_empty() {
        return Err(ImportError::new(format!(
            "{shown} holds no GPU kernels (events with cat \"kernel\", \"gpu_memcpy\" or \"gpu_memset\"): profile with ProfilerActivity.CUDA"
        )));
    }
    Ok(())
}

/// Why a read failed.
enum Failure {
    /// serde_json refused a batch of events (true) or the header (false).
    Json(serde_json::Error, bool),
    /// Cutting the stream failed.
    Split(SplitError<serde_json::Error>),
}

fn parse(
    source: impl Read,
    sink: &mut Sink,
    max_bytes: u64,
    over: Rc<Cell<bool>>,
) -> Result<(), Failure> {
    let capped = Capped {
        inner: source,
        read: 0,
        limit: max_bytes,
        over,
    };
    let header = split(capped, |batch, _| {
        let mut de = serde_json::Deserializer::from_slice(batch);
        EventsSeed(sink).deserialize(&mut de)?;
        de.end()
    })
    .map_err(|e| match e {
        SplitError::Batch(j) => Failure::Json(j, true),
        other => Failure::Split(other),
    })?;
    let mut de = serde_json::Deserializer::from_slice(&header);
    RootSeed(sink)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| Failure::Json(e, false))
}

/// A time as written, in exponent form once it is too long to read.
fn plain_or_exponent(us: f64) -> String {
    if us.abs() < 1e12 {
        format!("{us}")
    } else {
        format!("{us:e}")
    }
}

/// One line that says why the file could not be read.
fn explain(
    f: &Failure,
    sink: &Sink,
    over: bool,
    gzip: bool,
    shown: &str,
    max_bytes: u64,
) -> ImportError {
    let message = if over {
        format!(
            "{shown} holds more than {} of JSON{}: over the import limit; profile fewer steps (torch.profiler.schedule with active=1)",
            bytes(max_bytes),
            if gzip { " once inflated" } else { "" }
        )
    } else if sink.stop == Stop::Ranks {
        format!(
            "{shown}: the process groups' distinct rank lists hold more than {} ranks over the import \
             (Process Group Ranks, pg_config): over the import limit; import fewer ranks' traces",
            sink.rank_lists.max_ranks()
        )
    } else if let (Stop::Time, Some((name, ts, dur))) = (sink.stop, &sink.bad_time) {
        format!(
            "{shown}: event \"{name}\" has ts {} us and dur {} us; ts must lie within \
             ±{MAX_TIME_US:e} us (2^53 us, where a microsecond is still exact) and dur within 0 to \
             {MAX_DURATION_US:e} us (a day): not a profiler trace's times",
            plain_or_exponent(*ts),
            plain_or_exponent(*dur)
        )
    } else if sink.stop == Stop::Kernels {
        format!(
            "{shown} holds more than {} GPU kernels: over the import limit; profile fewer steps (torch.profiler.schedule with active=1)",
            sink.max_kernels
        )
    } else {
        match f {
            Failure::Split(SplitError::Io(e)) if gzip => {
                format!("{shown} is not a whole gzip file (it is cut short or corrupt): {e}")
            }
            Failure::Split(SplitError::Io(e)) => format!("cannot read {shown}: {e}"),
            Failure::Split(SplitError::Truncated(at)) => format!(
                "{shown} ends early (after {at} bytes{}): the trace is cut short; copy it again whole",
                if gzip { " inflated" } else { "" }
            ),
            Failure::Split(SplitError::NotJson(at)) => format!(
                "{shown} is not JSON text (byte {at}): a trace is JSON, or JSON compressed with gzip"
            ),
            Failure::Split(SplitError::Oversized(what, limit)) => format!(
                "{shown}: {what} is longer than {}, the import's limit: not a profiler trace",
                bytes(*limit as u64)
            ),
            Failure::Split(SplitError::Batch(e)) | Failure::Json(e, _) => {
                let place = match f {
                    Failure::Json(_, false) => "outside traceEvents",
                    _ => "in traceEvents",
                };
                let at = format!("{place}, line {} column {}", e.line(), e.column());
                if e.is_eof() {
                    format!("{shown} ends early ({at}): the trace is cut short; copy it again whole")
                } else if e.is_syntax() {
                    format!("{shown} is not valid JSON ({at})")
                } else {
                    let what = e.to_string();
                    let what = what.split(" at line").next().unwrap_or(&what);
                    format!("{shown} is not a trace ({at}): {what}")
                }
            }
        }
    };
    ImportError::new(message)
}

/// A byte count for messages: "1 GiB", "512 MiB", "300 B".
pub fn bytes(n: u64) -> String {
    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;
    if n >= GIB && n.is_multiple_of(GIB) {
        format!("{} GiB", n / GIB)
    } else if n >= GIB {
        format!("{:.1} GiB", n as f64 / GIB as f64)
    } else if n >= MIB {
        format!("{:.0} MiB", n as f64 / MIB as f64)
    } else {
        format!("{n} B")
    }
}
