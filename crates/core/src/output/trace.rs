//! Chrome trace-event JSON of a timeline, for Perfetto and chrome://tracing:
//! one process per simulated GPU with a thread per lane (compute, then one
//! per axis), a flow arrow from each pipeline send to its receiver, and
//! counter tracks of link bandwidth per axis. The page's export and
//! `overlap-lab trace` both call [`chrome_trace`].
//!
//! Events are serialised one by one as the timeline is walked, so a large
//! step never holds its events twice in memory.

use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;

use crate::model::axis::{Axis, Lane};
use crate::model::link::{Direction, LinkClass};
use crate::model::op::{OpKind, Phase, NONE};
use crate::output::timeline::{Interval, Kernel, Timeline};

/// Microseconds, rounded to the nanosecond: the trace format's time unit,
/// without float noise in the file.
fn us(seconds: f64) -> f64 {
    (seconds * 1e9).round() / 1e3
}

/// Rounded to three decimals, as the trace shows rates.
fn milli(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

/// One trace event; `ph` tells the viewer which kind.
#[derive(Serialize)]
#[serde(tag = "ph")]
enum Event<'a> {
    /// Metadata: process and thread names, sort order, the step time.
    #[serde(rename = "M")]
    Meta {
        pid: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        tid: Option<usize>,
        name: &'static str,
        args: MetaArgs,
    },
    /// A complete slice: one interval of a lane.
    #[serde(rename = "X")]
    Slice {
        pid: usize,
        tid: usize,
        name: String,
        cat: &'static str,
        ts: f64,
        dur: f64,
        args: SliceArgs,
    },
    /// The start of a flow arrow (the sender's end of a pipeline send).
    #[serde(rename = "s")]
    FlowStart {
        id: u32,
        pid: usize,
        tid: usize,
        name: &'static str,
        cat: &'static str,
        ts: f64,
    },
    /// The end of a flow arrow, bound to the enclosing slice.
    #[serde(rename = "f")]
    FlowEnd {
        bp: &'static str,
        id: u32,
        pid: usize,
        tid: usize,
        name: &'static str,
        cat: &'static str,
        ts: f64,
    },
    /// A counter sample: a link's bandwidth per axis, GB/s.
    #[serde(rename = "C")]
    Counter {
        pid: usize,
        name: &'a str,
        ts: f64,
        args: PerAxisGbps,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum MetaArgs {
    Name { name: String },
    SortIndex { sort_index: usize },
    Value { value: f64 },
}

#[derive(Serialize)]
struct SliceArgs {
    phase: Phase,
    chunk: u32,
    #[serde(flatten)]
    work: Work,
}

/// What a slice moved or computed.
#[derive(Serialize)]
#[serde(untagged)]
enum Work {
    Transfer {
        bytes: f64,
        achieved_gbps: f64,
        contention_us: f64,
        exposed_us: f64,
        /// The NCCL algorithm and protocol of a collective ("Ring, LL128").
        #[serde(skip_serializing_if = "Option::is_none")]
        nccl: Option<String>,
    },
    Compute {
        flops: f64,
    },
}

#[derive(Serialize)]
struct PerAxisGbps {
    tp: f64,
    pp: f64,
    dp: f64,
}

fn slice(pid: usize, lane: Lane, iv: &Interval) -> Event<'static> {
    let mut name = iv.op.label().to_string();
    if iv.layer != NONE {
        name.push_str(&format!(" L{}", iv.layer));
    }
    if iv.micro_batch != NONE {
        name.push_str(&format!(" mb{}", iv.micro_batch));
    }
    let work = if iv.op.is_comm() {
        Work::Transfer {
            bytes: iv.bytes,
            achieved_gbps: milli(iv.achieved_gbps),
            contention_us: us(iv.contention_s),
            exposed_us: us(iv.exposed_s),
            nccl: iv.kernel.map(Kernel::label),
        }
    } else {
        Work::Compute { flops: iv.flops }
    };
    Event::Slice {
        pid,
        tid: lane.index(),
        name,
        cat: lane.label(),
        ts: us(iv.start_s),
        dur: us(iv.end_s - iv.start_s),
        args: SliceArgs {
            phase: iv.phase,
            chunk: iv.chunk,
            work,
        },
    }
}

/// Every event of the timeline, in file order, handed to `emit` one by one.
fn for_each_event<E>(t: &Timeline, mut emit: impl FnMut(&Event) -> Result<(), E>) -> Result<(), E> {
    let meta = |pid, tid, name, args| Event::Meta {
        pid,
        tid,
        name,
        args,
    };
    for (pid, g) in t.gpus.iter().enumerate() {
        let name = if g.represents > 1 {
            format!(
                "GPU {} (stage {}, stands for {} GPUs)",
                g.rank, g.stage, g.represents
            )
        } else {
            format!("GPU {} (stage {}, node {})", g.rank, g.stage, g.node)
        };
        emit(&meta(pid, None, "process_name", MetaArgs::Name { name }))?;
        emit(&meta(
            pid,
            None,
            "process_sort_index",
            MetaArgs::SortIndex { sort_index: pid },
        ))?;
        for lane in Lane::ALL {
            let name = lane.label().to_string();
            emit(&meta(
                pid,
                Some(lane.index()),
                "thread_name",
                MetaArgs::Name { name },
            ))?;
        }
        for iv in &g.compute {
            emit(&slice(pid, Lane::Compute, iv))?;
        }
        for axis in Axis::ALL {
            let lane = Lane::Comm(axis);
            for iv in &g.comm[axis.index()] {
                emit(&slice(pid, lane, iv))?;
                // A send shows on both ends: draw the arrow from the sender's
                // slice to the receiver's.
                if iv.op == OpKind::Send && iv.owner as usize != pid {
                    let (tid, cat) = (lane.index(), axis.label());
                    emit(&Event::FlowStart {
                        id: iv.id,
                        pid: iv.owner as usize,
                        tid,
                        name: "send",
                        cat,
                        ts: us(iv.start_s),
                    })?;
                    emit(&Event::FlowEnd {
                        bp: "e",
                        id: iv.id,
                        pid,
                        tid,
                        name: "send",
                        cat,
                        ts: us(iv.end_s),
                    })?;
                }
            }
        }
    }
    for link in &t.links {
        let class = match link.class {
            LinkClass::Nvlink => "NVLink",
            LinkClass::Network => "NIC",
        };
        let dir = match link.direction {
            Direction::Out => "out",
            Direction::In => "in",
        };
        let (pid, name) = match link.gpu {
            Some(g) => (g, format!("{class} {dir} GB/s")),
            None => (t.gpus.len(), "network core GB/s".to_string()),
        };
        for s in &link.samples {
            emit(&Event::Counter {
                pid,
                name: &name,
                ts: us(s.t_s),
                args: PerAxisGbps {
                    tp: milli(s.gbps[Axis::Tp.index()]),
                    pp: milli(s.gbps[Axis::Pp.index()]),
                    dp: milli(s.gbps[Axis::Dp.index()]),
                },
            })?;
        }
    }
    emit(&meta(
        0,
        None,
        "step_time_ms",
        MetaArgs::Value {
            value: t.step_time_s * 1e3,
        },
    ))
}

/// The trace's events as a JSON array, written as they are walked.
struct Events<'a>(&'a Timeline);

impl Serialize for Events<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for_each_event(self.0, |e| seq.serialize_element(e))?;
        seq.end()
    }
}

/// The trace file's top-level object.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TraceFile<'a> {
    display_time_unit: &'static str,
    trace_events: Events<'a>,
}

/// The largest trace file `overlap-lab trace` writes: declared with the
/// other limits the input is checked against (`input::trace_size`), which
/// refuse a step whose trace would exceed it before it is simulated.
pub use crate::input::trace_size::MAX_TRACE_FILE_BYTES;

/// The timeline as a Chrome trace-event JSON document.
pub fn chrome_trace(t: &Timeline) -> String {
    let mut out = Vec::with_capacity(256 + t.interval_count() * 200);
    write_chrome_trace(t, &mut out).expect("a Vec takes every byte");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// Writes [`chrome_trace`]'s document to `w` as the timeline is walked:
/// nothing the size of the output is held.
pub fn write_chrome_trace<W: std::io::Write>(t: &Timeline, w: W) -> std::io::Result<()> {
    let file = TraceFile {
        display_time_unit: "ms",
        trace_events: Events(t),
    };
    serde_json::to_writer(w, &file).map_err(std::io::Error::from)
}

/// The size of [`chrome_trace`]'s document, bytes, found by writing it to
/// a counter: exact, and in memory that does not grow with the trace.
pub fn chrome_trace_bytes(t: &Timeline) -> u64 {
    let mut counter = ByteCounter(0);
    write_chrome_trace(t, &mut counter).expect("counting never fails");
    counter.0
}

/// A writer that keeps only how many bytes went through it.
struct ByteCounter(u64);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{presets, simulate};

    #[test]
    fn the_counted_size_is_the_written_size_and_streaming_writes_the_same_bytes() {
        let sim = simulate(&presets::scenario("didactic").unwrap());
        let text = chrome_trace(&sim.timeline);
        assert_eq!(chrome_trace_bytes(&sim.timeline), text.len() as u64);
        let mut streamed = Vec::new();
        write_chrome_trace(&sim.timeline, std::io::BufWriter::new(&mut streamed)).unwrap();
        assert_eq!(streamed, text.as_bytes());
    }

    /// A trace is sized before it is built from its bars, predicted from
    /// the counting builds: they are the timeline's.
    #[test]
    fn the_predicted_bars_are_the_timelines() {
        for id in [
            "didactic",
            "contention",
            "megatron-1.7b",
            "zb-1.5b-24",
            "moe-didactic",
        ] {
            let s = presets::scenario(id).unwrap();
            let sim = simulate(&s);
            let bars = crate::workload::build::run_cost::run_cost_within(&s, u64::MAX)
                .unwrap()
                .bars;
            assert_eq!(bars, sim.timeline.interval_count() as u64, "{id}");
        }
    }

    #[test]
    fn trace_has_the_trace_event_formats_required_fields() {
        let sim = simulate(&presets::scenario("didactic").unwrap());
        let text = chrome_trace(&sim.timeline);
        let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        let events = v["traceEvents"].as_array().unwrap();
        let (mut slices, mut flows_out, mut flows_in, mut counters) = (0, 0, 0, 0);
        for e in events {
            let ph = e["ph"].as_str().expect("every event has ph");
            assert!(e["pid"].is_u64(), "every event has pid: {e}");
            assert!(e["name"].is_string(), "every event has name: {e}");
            match ph {
                "X" => {
                    slices += 1;
                    assert!(e["ts"].is_f64() || e["ts"].is_u64());
                    assert!(e["dur"].as_f64().unwrap() >= 0.0);
                    assert!(e["tid"].is_u64());
                }
                "s" | "f" => {
                    assert!(e["id"].is_u64() && e["ts"].is_number() && e["tid"].is_u64());
                    if ph == "s" {
                        flows_out += 1
                    } else {
                        flows_in += 1
                    }
                }
                "C" => {
                    counters += 1;
                    assert!(e["args"].as_object().unwrap().len() == 3);
                }
                "M" => assert!(e["args"].is_object()),
                other => panic!("unexpected phase {other}"),
            }
        }
        assert_eq!(slices, sim.timeline.interval_count());
        // A collective's slice names its NCCL kernel; a send's and compute's do not.
        let nccl: Vec<&str> = events
            .iter()
            .filter_map(|e| e["args"]["nccl"].as_str())
            .collect();
        let collectives = sim
            .timeline
            .gpus
            .iter()
            .flat_map(|g| g.comm.iter().flatten())
            .filter(|iv| iv.kernel.is_some())
            .count();
        assert_eq!(nccl.len(), collectives);
        assert!(
            nccl.contains(&"Ring, LL128"),
            "{:?}",
            &nccl[..nccl.len().min(3)]
        );
        assert!(flows_out > 0 && flows_out == flows_in);
        assert!(counters > 0);
    }
}
