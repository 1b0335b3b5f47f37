//! Chrome trace-event JSON of a timeline, for Perfetto and chrome://tracing:
//! one process per simulated GPU with a thread for compute and one per axis,
//! a flow arrow from each pipeline send to its receiver, and counter tracks
//! of link bandwidth per axis. The page's export and `overlap-lab trace`
//! both call this function.

use std::fmt::Write;

use crate::model::axis::Axis;

use crate::model::link::{Direction, LinkClass};

use crate::output::timeline::{Interval, Timeline};

use crate::model::op::{OpKind, NONE};

const LANES: [&str; 4] = ["compute", "TP", "PP", "DP"];

fn us(seconds: f64) -> f64 {
    seconds * 1e6
}

/// JSON string literal (names here are ASCII, but stay safe).
fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialise")
}

fn slice(out: &mut String, pid: usize, tid: usize, iv: &Interval) {
    let mut name = iv.op.label().to_string();
    if iv.layer != NONE {
        let _ = write!(name, " L{}", iv.layer);
    }
    if iv.micro_batch != NONE {
        let _ = write!(name, " mb{}", iv.micro_batch);
    }
    let _ = write!(
        out,
        r#"{{"ph":"X","pid":{pid},"tid":{tid},"name":{},"cat":"{}","ts":{:.3},"dur":{:.3},"args":{{"phase":"{:?}","chunk":{}"#,
        quote(&name),
        LANES[tid],
        us(iv.start_s),
        us(iv.end_s - iv.start_s),
        iv.phase,
        iv.chunk
    );
    if iv.op.is_comm() {
        let _ = write!(
            out,
            r#","bytes":{},"achieved_gbps":{:.3},"contention_us":{:.3},"exposed_us":{:.3}"#,
            iv.bytes,
            iv.achieved_gbps,
            us(iv.contention_s),
            us(iv.exposed_s)
        );
    } else {
        let _ = write!(out, r#","flops":{}"#, iv.flops);
    }
    out.push_str("}},\n");
}

pub fn chrome_trace(t: &Timeline) -> String {
    let mut out = String::with_capacity(256 + t.interval_count() * 200);
    out.push_str("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    for (pid, g) in t.gpus.iter().enumerate() {
        let name = if g.represents > 1 {
            format!(
                "GPU {} (stage {}, stands for {} GPUs)",
                g.rank, g.stage, g.represents
            )
        } else {
            format!("GPU {} (stage {}, node {})", g.rank, g.stage, g.node)
        };
        let _ = writeln!(
            out,
            r#"{{"ph":"M","pid":{pid},"name":"process_name","args":{{"name":{}}}}},"#,
            quote(&name)
        );
        let _ = writeln!(
            out,
            r#"{{"ph":"M","pid":{pid},"name":"process_sort_index","args":{{"sort_index":{pid}}}}},"#
        );
        for (tid, lane) in LANES.iter().enumerate() {
            let _ = writeln!(
                out,
                r#"{{"ph":"M","pid":{pid},"tid":{tid},"name":"thread_name","args":{{"name":"{lane}"}}}},"#
            );
        }
        for iv in &g.compute {
            slice(&mut out, pid, 0, iv);
        }
        for axis in Axis::ALL {
            for iv in &g.comm[axis.index()] {
                slice(&mut out, pid, axis.index() + 1, iv);
                // A send shows on both ends: draw the arrow from the sender's
                // slice to the receiver's.
                if iv.op == OpKind::Send && iv.owner as usize != pid {
                    let tid = axis.index() + 1;
                    let _ = writeln!(
                        out,
                        r#"{{"ph":"s","id":{},"pid":{},"tid":{tid},"name":"send","cat":"PP","ts":{:.3}}},"#,
                        iv.id,
                        iv.owner,
                        us(iv.start_s)
                    );
                    let _ = writeln!(
                        out,
                        r#"{{"ph":"f","bp":"e","id":{},"pid":{pid},"tid":{tid},"name":"send","cat":"PP","ts":{:.3}}},"#,
                        iv.id,
                        us(iv.end_s)
                    );
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
            let _ = writeln!(
                out,
                r#"{{"ph":"C","pid":{pid},"name":{},"ts":{:.3},"args":{{"tp":{:.3},"pp":{:.3},"dp":{:.3}}}}},"#,
                quote(&name),
                us(s.t_s),
                s.gbps[0],
                s.gbps[1],
                s.gbps[2]
            );
        }
    }
    // A last metadata event closes the array without a trailing comma.
    let _ = write!(
        out,
        r#"{{"ph":"M","pid":0,"name":"step_time_ms","args":{{"value":{}}}}}]}}"#,
        t.step_time_s * 1e3
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{presets, simulate};

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
        assert!(flows_out > 0 && flows_out == flows_in);
        assert!(counters > 0);
    }
}
