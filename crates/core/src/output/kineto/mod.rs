//! PyTorch-profiler (Kineto) style traces of a timeline, one per simulated
//! GPU, which HolisticTraceAnalysis loads as it loads a real job's traces
//! (`TraceAnalysis(trace_dir=...)`). `overlap-lab trace --kineto` writes them
//! into a directory; the page zips them.
//!
//! What HTA needs, and how each file provides it:
//! - the rank: `distributedInfo.rank`, found by the pattern `"rank":\s+\d+`
//!   before it parses the file, so keys are followed by a space;
//! - GPU kernels: `cat: "kernel"` events with `args.stream` and
//!   `args.device`, one thread per stream. Communication kernels are named
//!   as NCCL names them (`ncclDevKernel_...`), which is how HTA tells them
//!   from computation; compute kernels carry cuBLAS, FlashAttention and
//!   fused-optimizer names;
//! - the host side: a `cuda_runtime` launch per kernel sharing its
//!   `args.correlation`, joined by an `ac2g` flow as Kineto draws it, inside
//!   one `ProfilerStep#1` annotation;
//! - process groups: each NCCL kernel carries `Process Group Name`,
//!   `Process Group Description` (Megatron-LM's name for the group) and
//!   `Process Group Ranks` in its args, as PyTorch's profiler writes them,
//!   so that a reader can tell the axis of each collective;
//! - whole microseconds: HTA rounds fractional timestamps inwards (start up,
//!   end down), which would shorten every kernel; integers pass unchanged.
//!
//! The model's own description of each kernel (op, phase, layer,
//! micro-batch) rides along in its args, and the top-level `overlapLab`
//! object states the simulator's figures for the GPU and which ranks the
//! file stands for.
//!
//! Its parts: each lane's kernels placed on `streams` with their launches,
//! the `kernel_names` and stream names a profiler would show, each
//! collective's `process_group`, the file's JSON `schema`, its
//! `json_format`, and one `rank_file` written from them.

mod json_format;
mod kernel_names;
mod process_group;
mod rank_file;
mod schema;
mod streams;

use crate::collective::Libraries;
use crate::model::scenario::Scenario;
use crate::output::timeline::{GpuLanes, Timeline};

use rank_file::rank_json;
use streams::{place, us};

/// One rank's trace file.
#[derive(Clone, Debug, PartialEq)]
pub struct RankTrace {
    /// Global rank of the simulated GPU.
    pub rank: u32,
    /// `rank<N>.json`.
    pub file_name: String,
    /// The file's contents.
    pub json: String,
}

/// The file a rank's trace is written to, `rank<N>.json`: the name HTA's
/// trace directory pattern reads as that rank's.
pub fn file_name(rank: u32) -> String {
    format!("rank{rank}.json")
}

/// One trace per simulated GPU, in rank order.
///
/// Under the symmetric reduction each simulated GPU stands for its pipeline
/// stage's TP group and DP replicas: with Megatron's rank order (TP fastest,
/// then DP, then PP) those are the `represents` ranks from its own rank on.
pub fn rank_traces(s: &Scenario, t: &Timeline) -> Vec<RankTrace> {
    each_rank_trace(s, t).collect()
}

/// As [`rank_traces`], one trace at a time: a writer that saves each before
/// asking for the next holds one rank's JSON in memory, not the job's.
pub fn each_rank_trace<'a>(
    s: &'a Scenario,
    t: &'a Timeline,
) -> impl Iterator<Item = RankTrace> + 'a {
    each_rank_trace_with(s, t, Libraries::of(s))
}

/// As [`each_rank_trace`], naming kernels and streams by `libraries`
/// (`Simulator::libraries`, where a simulator put a library of its own).
pub fn each_rank_trace_with<'a>(
    s: &'a Scenario,
    t: &'a Timeline,
    libraries: Libraries,
) -> impl Iterator<Item = RankTrace> + 'a {
    let mut gpus: Vec<&GpuLanes> = t.gpus.iter().collect();
    gpus.sort_by_key(|g| g.rank);
    let plans: Vec<_> = gpus.iter().map(|g| place(g)).collect();
    // All ranks share one clock, shifted so that the earliest launch is at 0.
    let first_launch = plans
        .iter()
        .flat_map(|(p, _)| p.iter().map(|k| k.launch_us))
        .min()
        .unwrap_or(0)
        .min(0);
    let shift = -first_launch;
    let step_end = plans
        .iter()
        .flat_map(|(p, _)| p.iter().map(|k| k.end_us))
        .max()
        .unwrap_or(0)
        .max(us(t.step_time_s));
    gpus.into_iter()
        .zip(plans)
        .map(move |(g, (placed, streams))| {
            let json = rank_json(
                s,
                t,
                g,
                &placed,
                &streams,
                shift,
                step_end + shift,
                &libraries,
            );
            RankTrace {
                rank: g.rank,
                file_name: file_name(g.rank),
                json,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::rank_file::rank_range;
    use super::*;
    use crate::model::op::OpKind;
    use crate::{presets, simulate};
    use serde_json::Value;

    fn traces(preset: &str) -> (crate::Simulation, Vec<RankTrace>) {
        let s = presets::scenario(preset).unwrap();
        let sim = simulate(&s);
        let traces = rank_traces(&s, &sim.timeline);
        (sim, traces)
    }

    #[test]
    fn one_file_per_simulated_gpu_with_its_rank_where_hta_looks() {
        let (sim, traces) = traces("didactic");
        assert_eq!(traces.len(), sim.timeline.gpus.len());
        for tr in &traces {
            assert_eq!(tr.file_name, format!("rank{}.json", tr.rank));
            // HTA's own pattern, `"rank":\s+(\d+)`, on the first line that has it.
            let line = tr.json.lines().find(|l| l.contains("\"rank\":")).unwrap();
            let at = line.find("\"rank\": ").expect("a space after the colon");
            let digits: String = line[at + 8..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            assert_eq!(digits.parse::<u32>().unwrap(), tr.rank);
            let v: Value = serde_json::from_str(&tr.json).expect("valid JSON");
            assert_eq!(v["distributedInfo"]["rank"], tr.rank);
            assert_eq!(v["distributedInfo"]["world_size"], 16);
        }
    }

    #[test]
    fn every_kernel_has_a_launch_before_it_and_streams_never_overlap() {
        let (sim, traces) = traces("contention");
        for (tr, gpu) in traces.iter().zip(&sim.timeline.gpus) {
            let v: Value = serde_json::from_str(&tr.json).unwrap();
            let events = v["traceEvents"].as_array().unwrap();
            let mut launches = std::collections::HashMap::new();
            let mut kernels = Vec::new();
            let mut steps = 0;
            for e in events {
                match e["cat"].as_str() {
                    Some("cuda_runtime") => {
                        let c = e["args"]["correlation"].as_u64().unwrap();
                        let end = e["ts"].as_i64().unwrap() + e["dur"].as_i64().unwrap();
                        assert!(launches.insert(c, end).is_none(), "correlation reused");
                    }
                    Some("kernel") => kernels.push(e),
                    Some("user_annotation") => {
                        steps += 1;
                        assert_eq!(e["name"], "ProfilerStep#1");
                    }
                    _ => {}
                }
            }
            assert_eq!(steps, 1);
            let intervals = gpu.compute.len() + gpu.comm.iter().map(Vec::len).sum::<usize>();
            assert_eq!(kernels.len(), intervals);
            let mut by_stream: std::collections::BTreeMap<u64, Vec<(i64, i64)>> =
                Default::default();
            for k in &kernels {
                let (ts, dur) = (k["ts"].as_i64().unwrap(), k["dur"].as_i64().unwrap());
                let c = k["args"]["correlation"].as_u64().unwrap();
                assert!(launches[&c] <= ts, "kernel starts before its launch ends");
                assert_eq!(k["args"]["stream"], k["tid"]);
                assert_eq!(k["args"]["device"], k["pid"]);
                by_stream
                    .entry(k["args"]["stream"].as_u64().unwrap())
                    .or_default()
                    .push((ts, ts + dur));
            }
            for spans in by_stream.values_mut() {
                spans.sort();
                assert!(
                    spans.windows(2).all(|w| w[0].1 <= w[1].0),
                    "kernels overlap on a stream"
                );
            }
        }
    }

    #[test]
    fn kernel_names_classify_as_hta_classifies_them() {
        let (_, traces) = traces("didactic");
        let v: Value = serde_json::from_str(&traces[0].json).unwrap();
        let (mut comm, mut comp) = (0, 0);
        for e in v["traceEvents"].as_array().unwrap() {
            if e["cat"] != "kernel" {
                continue;
            }
            let name = e["name"].as_str().unwrap();
            let nccl = name.starts_with("nccl") && name.contains("Kernel");
            assert_eq!(nccl, e["args"]["message_bytes"].is_number(), "{name}");
            assert!(!name.contains("Memcpy") && !name.contains("Memset") && !name.contains("Sync"));
            if nccl {
                comm += 1
            } else {
                comp += 1
            }
        }
        assert!(comm > 0 && comp > 0);
    }

    #[test]
    fn collective_kernels_are_named_by_the_models_nccl_choice() {
        use std::collections::{BTreeMap, BTreeSet};
        let mut seen = BTreeSet::new();
        for preset in ["didactic", "megatron-1.7b"] {
            let (sim, traces) = traces(preset);
            for (tr, gpu) in traces.iter().zip(&sim.timeline.gpus) {
                let mut want: BTreeMap<String, usize> = BTreeMap::new();
                for iv in gpu.comm.iter().flatten() {
                    match iv.kernel {
                        Some(k) => *want.entry(k.name_suffix()).or_default() += 1,
                        None => assert_eq!(iv.op, OpKind::Send, "a collective without a kernel"),
                    }
                }
                let v: Value = serde_json::from_str(&tr.json).unwrap();
                let mut got: BTreeMap<String, usize> = BTreeMap::new();
                for e in v["traceEvents"].as_array().unwrap() {
                    let name = e["name"].as_str().unwrap_or_default();
                    if e["cat"] != "kernel"
                        || !name.starts_with("ncclDevKernel_")
                        || name.starts_with("ncclDevKernel_SendRecv")
                    {
                        continue;
                    }
                    // ncclDevKernel_AllReduce_Sum_bf16_RING_LL128(...): the
                    // last two words before the signature.
                    let base = name.split('(').next().unwrap();
                    let words: Vec<&str> = base.rsplitn(3, '_').collect();
                    *got.entry(format!("{}_{}", words[1], words[0])).or_default() += 1;
                }
                assert_eq!(got, want, "{preset}, rank {}", tr.rank);
                seen.extend(want.into_keys());
            }
        }
        // The choice varies with the call, as NCCL's does: small TP
        // messages in LL128, large ones in Simple. (Trees win only
        // latency-bound calls across many nodes, which these presets do not
        // make: NCCL 2.21's Tree Simple pays 28 us per NVLink hop.)
        for k in ["RING_LL128", "RING_SIMPLE"] {
            assert!(seen.contains(k), "{k} not among {seen:?}");
        }
    }

    #[test]
    fn the_files_figures_match_the_report() {
        let (sim, traces) = traces("contention");
        for (tr, want) in traces.iter().zip(&sim.report.hta_overlap_per_gpu) {
            let v: Value = serde_json::from_str(&tr.json).unwrap();
            assert_eq!(v["overlapLab"]["hta_overlap"].as_f64().unwrap(), *want);
        }
    }

    #[test]
    fn the_slowest_gpus_compute_is_the_reports() {
        for preset in ["didactic", "contention"] {
            let (sim, traces) = traces(preset);
            let want_us = sim.report.compute_ms * 1e3;
            let found = traces.iter().any(|tr| {
                let v: Value = serde_json::from_str(&tr.json).unwrap();
                let got = v["overlapLab"]["compute_us"].as_f64().unwrap();
                (got - want_us).abs() <= 1e-9 * want_us
            });
            assert!(
                found,
                "{preset}: no file's compute_us is the report's compute_ms"
            );
        }
    }

    #[test]
    fn rank_ranges_read_as_blocks() {
        assert_eq!(rank_range(8, 8), "8-15");
        assert_eq!(rank_range(5, 1), "5");
    }
}
