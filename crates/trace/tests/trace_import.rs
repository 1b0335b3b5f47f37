//! Reading real profiler traces (`overlap_trace`): the round trip
//! through the Kineto export, HolisticTraceAnalysis's own traces, every row
//! of the classification table, gzip, folders of ranks, and each kind of
//! bad input.

use std::io::Write;
use std::path::{Path, PathBuf};

use overlap_core::hta::{intersection_length, length, union, KernelSets};
use overlap_core::kineto::rank_traces;
use overlap_core::Axis;
use overlap_core::{presets, simulate};
use overlap_trace::classify::{classify, rule_for, rules, Class, Family, GpuCat, Op};
use overlap_trace::read::read_trace_with;
use overlap_trace::{import_paths, Imported, MAX_KERNELS};

/// A fresh directory under the system temp directory.
/// A new folder for one test's traces. Tests run side by side, and several
/// write the same preset's traces: each call gets its own folder, or one
/// test would empty the folder another is reading.
fn fresh_dir(name: &str) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "overlap-lab-import-{}-{call}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// The µs the Kineto export writes an interval's ends as (kineto.rs).
fn exported_us(start_s: f64, end_s: f64) -> (f64, f64) {
    let a = (start_s * 1e6).round();
    (a, (end_s * 1e6).round().max(a))
}

/// Simulates a preset, writes its Kineto traces and imports them.
fn round_trip(preset: &str, gz: bool) -> (overlap_core::Simulation, Imported) {
    let s = presets::scenario(preset).unwrap();
    let sim = simulate(&s);
    let dir = fresh_dir(&format!("{preset}-{gz}"));
    for t in rank_traces(&s, &sim.timeline) {
        if gz {
            std::fs::write(
                dir.join(format!("{}.gz", t.file_name)),
                gzip(t.json.as_bytes()),
            )
            .unwrap();
        } else {
            std::fs::write(dir.join(&t.file_name), &t.json).unwrap();
        }
    }
    let imported = import_paths(&[dir]).unwrap();
    (sim, imported)
}

#[test]
fn the_round_trip_gives_the_reports_figures() {
    for preset in ["didactic", "contention"] {
        let (sim, imported) = round_trip(preset, false);
        let mut gpus: Vec<_> = sim.timeline.gpus.iter().collect();
        gpus.sort_by_key(|g| g.rank);
        assert_eq!(imported.gpus.len(), gpus.len(), "{preset}");
        for ((got, gpu), want) in imported
            .gpus
            .iter()
            .zip(&gpus)
            .zip(&sim.report.hta_overlap_per_gpu)
        {
            assert_eq!(got.rank, Some(u64::from(gpu.rank)));
            let rounded = |ivs: &mut dyn Iterator<Item = &overlap_core::timeline::Interval>| {
                union(ivs.map(|iv| exported_us(iv.start_s, iv.end_s)))
            };
            let compute = rounded(&mut gpu.compute.iter());
            let comm = rounded(&mut gpu.comm.iter().flatten());
            let sets = KernelSets {
                compute: compute.clone(),
                comm: comm.clone(),
            };
            // Exactly HTA's figure of the file: the report's, to the export's
            // whole microseconds.
            assert!(
                (got.overlap - sets.overlap()).abs() < 1e-12,
                "{preset}: {} vs {}",
                got.overlap,
                sets.overlap()
            );
            assert!(
                (got.overlap - want).abs() < 5e-3,
                "{preset} rank {}: {} vs report {want}",
                gpu.rank,
                got.overlap
            );
            assert!((got.compute_ms - length(&compute) / 1e3).abs() < 1e-9);
            assert!((got.comm_ms - length(&comm) / 1e3).abs() < 1e-9);
            let exposed_us = length(&comm) - intersection_length(&comm, &compute);
            assert!((got.exposed_ms - exposed_us / 1e3).abs() < 1e-9);
            // Every kernel of the step is inside its one ProfilerStep.
            assert_eq!(got.steps, 1);
            let all = union(compute.iter().chain(&comm).copied());
            let span_us = all.last().unwrap().1 - all.first().unwrap().0;
            assert!((got.step_ms - span_us / 1e3).abs() < 1e-9);
            // The export writes each collective's process group: every
            // axis's communication is read back as that axis's, the tied
            // embedding's all-reduce (Megatron-LM's embedding group) as DP's,
            // the lane the model runs it on.
            for axis in [Axis::Tp, Axis::Pp, Axis::Dp] {
                let mine = union(
                    gpu.comm[axis.index()]
                        .iter()
                        .map(|iv| exported_us(iv.start_s, iv.end_s)),
                );
                let read = got.axes.get(axis.name()).map_or(0.0, |a| a.comm_ms);
                assert!(
                    (read - length(&mine) / 1e3).abs() < 1e-9,
                    "{preset} rank {} {}: {read} vs {}",
                    gpu.rank,
                    axis.name(),
                    length(&mine) / 1e3
                );
            }
            assert!(!got.axes.contains_key("unknown"), "{:?}", got.axes.keys());
            let kernels = gpu.compute.len() + gpu.comm.iter().map(Vec::len).sum::<usize>();
            assert_eq!(got.kernels, kernels);
        }
        // The slowest GPU's compute is the report's, to the export's rounding.
        let slowest = &imported.gpus[imported.over_ranks.slowest];
        assert!(imported.over_ranks.step_ms >= slowest.step_ms);
        let mean =
            overlap_core::hta::mean(&imported.gpus.iter().map(|g| g.overlap).collect::<Vec<_>>());
        assert!((imported.over_ranks.overlap - mean).abs() < 1e-15);
        assert!((imported.over_ranks.overlap - sim.report.hta_overlap).abs() < 5e-3);
    }
}

#[test]
fn gzip_reads_as_the_plain_file() {
    let (_, plain) = round_trip("didactic", false);
    let (_, gz) = round_trip("didactic", true);
    assert_eq!(plain.gpus.len(), gz.gpus.len());
    for (a, b) in plain.gpus.iter().zip(&gz.gpus) {
        assert_eq!(
            (a.overlap, a.compute_ms, a.comm_ms, a.step_ms),
            (b.overlap, b.compute_ms, b.comm_ms, b.step_ms)
        );
    }
}

#[test]
fn a_folder_of_htas_ranks_reads_its_all_to_all() {
    let imported = import_paths(&[data("hta/all_to_all")]).unwrap();
    assert_eq!(imported.world_size, Some(128));
    let ranks: Vec<_> = imported.gpus.iter().map(|g| g.rank).collect();
    assert_eq!(ranks, vec![Some(0), Some(1)]);
    // HTA 0.5.0's get_comm_comp_overlap on these files, its steps re-done
    // in Python from its source (the kernels launched before the last of
    // the two profiler steps; merge; overlap). tests/hta/test_import.py
    // runs HTA itself.
    let hta = [0.11809939230111556, 0.20050944193492712];
    for (g, want) in imported.gpus.iter().zip(hta) {
        assert!((g.overlap - want).abs() < 1e-12, "{} vs {want}", g.overlap);
        assert_eq!(g.steps, 2);
        // NCCL runs all-to-all as send/recv; PyTorch's record names it.
        assert!(
            g.comm_by_kind_ms["NCCL AllToAll"] > 0.0,
            "{:?}",
            g.comm_by_kind_ms
        );
        assert!(g.comm_by_kind_ms.contains_key("NCCL SendRecv"));
        // Exposed and under compute make up the whole of one axis.
        let a = &g.axes["unknown"];
        assert!((a.under_compute_ms + a.exposed_ms + a.under_idle_ms - a.comm_ms).abs() < 1e-9);
        assert!((g.exposed_ms - a.exposed_ms).abs() < 1e-12);
    }
}

#[test]
fn process_group_records_give_the_axis() {
    let imported = import_paths(&[data("hta/process_group/nccl_data.json.gz")]).unwrap();
    assert_eq!(imported.gpus.len(), 1);
    let g = &imported.gpus[0];
    assert_eq!(g.rank, Some(0));
    assert_eq!(g.steps, 3);
    // The default group of a two-GPU job, ranks [0, 1]: the whole world.
    assert_eq!(g.axes.keys().collect::<Vec<_>>(), vec!["dp"]);
    let kinds: Vec<_> = g.comm_by_kind_ms.keys().collect();
    assert_eq!(kinds, vec!["NCCL AllReduce", "NCCL Broadcast"]);
    // HTA's figure, re-done as above: three steps, the last left out, and
    // the fractional µs rounded inwards as HTA rounds them.
    assert!(
        (g.overlap - 0.14305132218469396).abs() < 1e-12,
        "{}",
        g.overlap
    );
    assert!(g.memcpy_ms > 0.0 && g.memset_ms > 0.0);
}

/// A name for every row of the table, with what it must be read as.
const SAMPLES: &[(&str, Family, Op, Option<Axis>)] = &[
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL128(ncclDevComm*, unsigned long, ncclWork*)", Family::NCCL, Op::AllReduce, None),
    ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", Family::NCCL, Op::AllGather, None),
    ("ncclDevKernel_ReduceScatter_Sum_f32_RING_SIMPLE(ncclDevKernelArgsStorage<4096ul>)", Family::NCCL, Op::ReduceScatter, None),
    ("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", Family::NCCL, Op::SendRecv, None),
    ("ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)", Family::NCCL, Op::Broadcast, None),
    ("ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", Family::NCCL, Op::Other, None),
    ("ncclSymkDevKernel_AllGather_LL(ncclSymkDevWorkArgs4K)", Family::NCCL, Op::AllGather, None),
    ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", Family::NCCL, Op::AllReduce, None),
    ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", Family::NCCL, Op::SendRecv, None),
    ("ncclKernel_Reduce_RING_LL_Sum_half(ncclWorkElem)", Family::NCCL, Op::Reduce, None),
    ("nccl_custom_all_to_all_kernel", Family::NCCL, Op::Other, None),
    ("void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*)", Family::DEEPEP, Op::Dispatch, Some(Axis::Ep)),
    ("void deep_ep::internode::combine<__nv_bfloat16, 2, 8, 768>(int4*, float*)", Family::DEEPEP, Op::Combine, Some(Axis::Ep)),
    ("void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int)", Family::DEEPEP, Op::Notify, Some(Axis::Ep)),
    ("void deep_ep::intranode::cached_notify_dispatch<8>(int const*, int, void**, int**, int)", Family::DEEPEP, Op::Notify, Some(Axis::Ep)),
    ("void deep_ep::intranode::cached_notify_combine<8>(void**, int*, int, int)", Family::DEEPEP, Op::Notify, Some(Axis::Ep)),
    ("void deep_ep::legacy::internode::cached_notify<false>(int, int, int, int, int)", Family::DEEPEP, Op::Notify, Some(Axis::Ep)),
    ("void deep_ep::internode_ll::clean_low_latency_buffer<32>(int*, int, int*, int)", Family::DEEPEP, Op::Notify, Some(Axis::Ep)),
    ("void deep_ep::intranode::barrier<8>(int**, int)", Family::DEEPEP, Op::Barrier, Some(Axis::Ep)),
    // DeepSeek's own, as deepseek-ai/profile-data's train.json names them (arguments cut).
    ("void dpsk::ep::internode::dispatch<false, 8, true, 8>(int4*, float*, long*, float*, dpsk::ep::internode::SourceMeta*)", Family::DEEPSEEK_EP, Op::Dispatch, Some(Axis::Ep)),
    ("void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*, bool const*)", Family::DEEPSEEK_EP, Op::Combine, Some(Axis::Ep)),
    ("void dpsk::ep::internode::notify_dispatch<false, 8>(int const*, long*, int, int const*, int*)", Family::DEEPSEEK_EP, Op::Notify, Some(Axis::Ep)),
    ("void dpsk::ep::internode::cached_notify<false>(int, int, int, int, int*, int, int, int const*)", Family::DEEPSEEK_EP, Op::Notify, Some(Axis::Ep)),
    ("void deep_ep::elastic::dispatch_impl<true, 8, 1024>(void*, void*)", Family::DEEPEP, Op::Dispatch, Some(Axis::Ep)),
    ("void deep_ep::elastic::hybrid_dispatch_impl<8, 2>(void*)", Family::DEEPEP, Op::Dispatch, Some(Axis::Ep)),
    ("void deep_ep::elastic::combine_impl<8>(void*)", Family::DEEPEP, Op::Combine, Some(Axis::Ep)),
    ("void deep_ep::elastic::hybrid_combine_impl<8, 2>(void*)", Family::DEEPEP, Op::Combine, Some(Axis::Ep)),
    ("void deep_ep::elastic::barrier_impl<32>(int)", Family::DEEPEP, Op::Barrier, Some(Axis::Ep)),
    ("void deep_ep::elastic::pp_send_impl<8, 0, 100>(ncclDevComm_t, ncclWindow_t, void*, long)", Family::DEEPEP, Op::SendRecv, Some(Axis::Pp)),
    ("void deep_ep::elastic::pp_recv_impl<8, 0, 100>(ncclDevComm_t, ncclWindow_t, void*, long)", Family::DEEPEP, Op::SendRecv, Some(Axis::Pp)),
    ("void (anonymous namespace)::one_shot_all_reduce_kernel<c10::BFloat16, 16, 8>(c10::BFloat16**, c10::BFloat16*)", Family::SYMMETRIC_MEMORY, Op::AllReduce, None),
    ("void (anonymous namespace)::two_shot_all_reduce_kernel<float, 16, 8, true, false>(float**, float*)", Family::SYMMETRIC_MEMORY, Op::AllReduce, None),
    ("void (anonymous namespace)::two_shot_all_reduce_kernel_inplace<float, 16, 8>(float**, unsigned long)", Family::SYMMETRIC_MEMORY, Op::AllReduce, None),
    ("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long)", Family::SYMMETRIC_MEMORY, Op::AllReduce, None),
    ("void (anonymous namespace)::multimem_one_shot_all_reduce_kernel<float, 16>(float*, float*)", Family::SYMMETRIC_MEMORY, Op::AllReduce, None),
    ("void (anonymous namespace)::multimem_all_gather_kernel<16>(char*, char*, unsigned long)", Family::SYMMETRIC_MEMORY, Op::AllGather, None),
    ("barrier_kernel(unsigned int**, int, int, int, unsigned long)", Family::SYMMETRIC_MEMORY, Op::Barrier, None),
    ("put_signal_kernel(unsigned int**, int, int, int, int, unsigned long)", Family::SYMMETRIC_MEMORY, Op::Barrier, None),
    ("wait_signal_kernel(unsigned int**, int, int, int, int, unsigned long)", Family::SYMMETRIC_MEMORY, Op::Barrier, None),
    ("Memcpy PtoP (Device -> Device)", Family::PEER_COPY, Op::Copy, None),
];

#[test]
fn every_row_of_the_table_reads_its_own_name() {
    for &(name, family, op, axis) in SAMPLES {
        assert_eq!(
            classify(GpuCat::Kernel, name),
            Class::Comm { family, op, axis },
            "{name}"
        );
    }
    for (i, rule) in rules().iter().enumerate() {
        let hit = SAMPLES
            .iter()
            .any(|(n, ..)| rule_for(n).is_some_and(|r| std::ptr::eq(r, rule)));
        assert!(hit, "row {i} ({:?}) has no sample name here", rule.pattern);
        assert!(!rule.source.is_empty());
    }
}

#[test]
fn names_no_row_matches_are_compute_copies_or_sets() {
    for name in [
        "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn",
        "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float>>(int)",
        "flash_fwd_kernel",
        // DeepEP's own local work: the layout and the v2 epilogues compute.
        "void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*)",
        // DeepSeek's layout is local work too.
        "void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int, int, int, int)",
        "void deep_ep::elastic::dispatch_copy_epilogue_impl<8>(void*)",
        "void deep_ep::elastic::combine_reduce_epilogue_impl<8>(void*)",
        // A function of the same name outside DeepEP's namespace.
        "void moe::dispatch<8>(float*)",
        "my_barrier_kernel(int)",
    ] {
        assert_eq!(classify(GpuCat::Kernel, name), Class::Compute, "{name}");
    }
    assert_eq!(
        classify(GpuCat::Memcpy, "Memcpy DtoD (Device -> Device)"),
        Class::Memcpy
    );
    assert_eq!(
        classify(GpuCat::Kernel, "Memcpy HtoD (Pageable -> Device)"),
        Class::Memcpy
    );
    assert_eq!(classify(GpuCat::Memset, "Memset (Device)"), Class::Memset);
    // A peer copy is communication whatever its category.
    assert!(matches!(
        classify(GpuCat::Memcpy, "Memcpy PtoP (Device -> Device)"),
        Class::Comm { .. }
    ));
}

/// One small trace: a compute kernel, a DeepEP dispatch and an NCCL
/// all-reduce of a TP group, with a launch and its record.
fn small_trace() -> String {
    r#"{"distributedInfo": {"rank": 2, "world_size": 16}, "deviceProperties": [{"id": 0}, {"id": 1}, {"id": 2}, {"id": 3}],
"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#5", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"Process Group Ranks": "[0, 1, 2, 3]", "Process Group Name": "3"}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 12, "dur": 2, "args": {"correlation": 77}},
{"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 2, "tid": 7, "ts": 20, "dur": 40, "args": {"device": 2, "stream": 7}},
{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", "pid": 2, "tid": 13, "ts": 50, "dur": 20, "args": {"device": 2, "stream": 13, "correlation": 77}},
{"ph": "X", "cat": "kernel", "name": "void deep_ep::intranode::dispatch<8>(int4*)", "pid": 2, "tid": 21, "ts": 70, "dur": 10, "args": {"device": 2, "stream": 21}}
]}"#
    .to_string()
}

#[test]
fn axes_come_from_the_group_or_the_row_and_idle_goes_to_the_last_to_end() {
    let t = read_trace_with(small_trace().as_bytes(), "small", 1 << 20, 100).unwrap();
    let imported = overlap_trace::figures_of(&[t]);
    let g = &imported.gpus[0];
    assert_eq!((g.rank, g.device, g.steps), (Some(2), 2, 1));
    // Kernels 20..80; compute 20..60; TP 50..70 (ranks 0-3, stride 1, one
    // node of 4); EP 70..80.
    assert!((g.step_ms - 0.060).abs() < 1e-12);
    let tp = &g.axes["tp"];
    assert!((tp.comm_ms - 0.020).abs() < 1e-12 && (tp.under_compute_ms - 0.010).abs() < 1e-12);
    assert!((tp.exposed_ms - 0.010).abs() < 1e-12);
    let ep = &g.axes["ep"];
    assert!((ep.exposed_ms - 0.010).abs() < 1e-12 && ep.hidden == Some(0.0));
    assert!((g.exposed_ms - 0.020).abs() < 1e-12);
    assert!((g.overlap - 10.0 / 30.0).abs() < 1e-12);
    assert!(g.comm_by_kind_ms.contains_key("DeepEP dispatch"));
}

fn one_line(e: &impl std::fmt::Display) -> String {
    let m = e.to_string();
    assert!(!m.contains('\n') && m.len() < 400, "{m}");
    m
}

fn import_bytes(name: &str, bytes: &[u8]) -> Result<Imported, String> {
    let dir = fresh_dir(&format!("bad-{name}"));
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    import_paths(&[path]).map_err(|e| one_line(&e))
}

#[test]
fn bad_input_gets_one_line_naming_the_problem() {
    let json = small_trace();
    let cut = &json.as_bytes()[..json.len() / 2];
    for (name, bytes, needle) in [
        ("cut.json", cut.to_vec(), "ends early"),
        ("cut.json.gz", gzip(json.as_bytes())[..60].to_vec(), "cut short"),
        ("shape.json", br#"{"traceEvents": {"a": 1}}"#.to_vec(), "not a trace"),
        ("string.json", br#""a trace""#.to_vec(), "not a trace"),
        ("other.json", br#"{"a": [1, 2]}"#.to_vec(), "no traceEvents array"),
        ("cpu.json", br#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]}"#.to_vec(), "no GPU kernels"),
        ("empty.json", Vec::new(), "ends early"),
        ("image.json", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0".to_vec(), "not JSON text"),
        ("trailing.json", format!("{json} x").into_bytes(), "not valid JSON"),
        // Times where a microsecond no longer exists: step and exposed
        // would print as 1e300 ms or inf, so the file is refused instead.
        ("far.json", br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "gemm", "ts": 1.7e300, "dur": 100}]}"#.to_vec(), "ts 1.7e300 us and dur 100 us; ts must lie within"),
        ("endless.json", br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "gemm", "ts": 5, "dur": 1.7e308}]}"#.to_vec(), "dur within 0 to 8.64e10 us"),
        ("backwards.json", br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "gemm", "ts": 5, "dur": -3}]}"#.to_vec(), "dur -3 us"),
    ] {
        let e = import_bytes(name, &bytes).expect_err(name);
        assert!(e.contains(needle) && e.contains(name), "{name}: {e}");
    }
}

#[test]
fn a_file_over_the_limit_is_refused_before_it_is_read() {
    let dir = fresh_dir("huge");
    let path = dir.join("huge.json");
    // A sparse 2 GiB file: refused by its size, at once.
    std::fs::File::create(&path)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let start = std::time::Instant::now();
    let e = one_line(&import_paths(&[path]).unwrap_err());
    assert!(e.contains("2 GiB") && e.contains("over the 1 GiB"), "{e}");
    assert!(start.elapsed().as_secs_f64() < 1.0);
}

#[test]
fn inflating_past_the_limit_or_too_many_kernels_stops_the_read() {
    let json = small_trace();
    let bomb = gzip(format!("{}{}", " ".repeat(100_000), json).as_bytes());
    let e = one_line(&read_trace_with(&bomb[..], "bomb.json.gz", 10_000, MAX_KERNELS).unwrap_err());
    assert!(e.contains("more than 10000 B of JSON once inflated"), "{e}");
    let e = one_line(&read_trace_with(json.as_bytes(), "many.json", 1 << 20, 2).unwrap_err());
    assert!(e.contains("more than 2 GPU kernels"), "{e}");
    // Exactly at the limits reads.
    assert!(read_trace_with(json.as_bytes(), "exact.json", json.len() as u64, 3).is_ok());
}

#[test]
fn folders_without_traces_and_missing_paths_are_refused() {
    let dir = fresh_dir("empty-folder");
    std::fs::write(dir.join("notes.txt"), "x").unwrap();
    let e = one_line(&import_paths(std::slice::from_ref(&dir)).unwrap_err());
    assert!(e.contains("holds no trace files"), "{e}");
    let e = one_line(&import_paths(&[dir.join("missing.json")]).unwrap_err());
    assert!(e.contains("cannot read"), "{e}");
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
        match read_trace_with(bytes, "fuzz.json", 1 << 16, 1000) {
            Err(e) => {
                let m = e.to_string();
                prop_assert!(!m.contains('\n') && m.len() < 400, "{}", m);
            }
            Ok(t) => {
                prop_assert!(!t.kernels.is_empty());
                let imported = overlap_trace::figures_of(&[t]);
                for g in &imported.gpus {
                    prop_assert!((0.0..=1.0).contains(&g.overlap), "{}", g.overlap);
                    prop_assert!(g.exposed_ms <= g.comm_ms + 1e-9);
                    prop_assert!(g.compute_ms <= g.step_ms + 1e-9);
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            check(&bytes)?;
            let mut gz = vec![0x1f, 0x8b];
            gz.extend(&bytes);
            check(&gz)?;
        }

        #[test]
        fn mutated_traces_never_panic(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8),
            cut in any::<prop::sample::Index>(),
            truncate in any::<bool>(),
        ) {
            let mut bytes = small_trace().into_bytes();
            for (at, byte, how) in edits {
                let i = at.index(bytes.len());
                match how {
                    0 => bytes[i] = byte,
                    1 => bytes.insert(i, byte),
                    _ => { bytes.remove(i); }
                }
            }
            if truncate {
                bytes.truncate(cut.index(bytes.len() + 1));
            }
            check(&bytes)?;
            check(&gzip(&bytes))?;
        }
    }
}

#[test]
fn the_pages_sources_give_the_figures_and_bars_of_the_round_trip() {
    use overlap_trace::bars::BarClass;
    use overlap_trace::import_sources;
    let s = presets::scenario("didactic").unwrap();
    let sim = simulate(&s);
    let traces = rank_traces(&s, &sim.timeline);
    // One file gzipped, the others plain, as a page's picker may give them.
    let sources: Vec<(String, u64, std::io::Cursor<Vec<u8>>)> = traces
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let bytes = if i == 0 {
                gzip(t.json.as_bytes())
            } else {
                t.json.as_bytes().to_vec()
            };
            (
                t.file_name.clone(),
                bytes.len() as u64,
                std::io::Cursor::new(bytes),
            )
        })
        .collect();
    let (figures, measured) = import_sources(sources).unwrap();
    let (_, by_path) = round_trip("didactic", false);
    assert_eq!(figures.gpus.len(), by_path.gpus.len());
    for (a, b) in figures.gpus.iter().zip(&by_path.gpus) {
        assert_eq!(
            (a.rank, a.step_ms, a.overlap),
            (b.rank, b.step_ms, b.overlap)
        );
    }
    let mut gpus: Vec<_> = sim.timeline.gpus.iter().collect();
    gpus.sort_by_key(|g| g.rank);
    for (i, gpu) in gpus.iter().enumerate() {
        let rows: Vec<u32> = (0..measured.rows.len() as u32)
            .filter(|&r| measured.rows[r as usize].gpu == i as u32)
            .collect();
        assert_eq!(
            measured.rows[rows[0] as usize].rank,
            Some(u64::from(gpu.rank))
        );
        let of = |keep: &dyn Fn(BarClass) -> bool| {
            measured
                .bars
                .iter()
                .filter(|b| rows.contains(&b.row) && keep(b.class))
                .count()
        };
        // Every kernel of the one step is drawn, compute as compute and
        // each lane's collectives as its axis's (the export writes their
        // process groups; the tied embedding's all-reduce, its own group's,
        // is read as DP's, the lane it runs on).
        assert_eq!(of(&|c| c == BarClass::Compute), gpu.compute.len());
        for axis in [Axis::Tp, Axis::Pp, Axis::Dp] {
            assert_eq!(
                of(&|c| c == BarClass::Comm(Some(axis))),
                gpu.comm[axis.index()].len()
            );
        }
        assert_eq!(of(&|c| c == BarClass::Comm(None)), 0);
        // The bars start at the GPU's first kernel and fit in its step.
        let first = measured
            .bars
            .iter()
            .filter(|b| rows.contains(&b.row))
            .map(|b| b.start_s)
            .fold(f64::INFINITY, f64::min);
        assert_eq!(first, 0.0);
        let last = measured
            .bars
            .iter()
            .filter(|b| rows.contains(&b.row))
            .map(|b| b.end_s)
            .fold(0.0, f64::max);
        assert!((last * 1e3 - figures.gpus[i].step_ms).abs() < 1e-9);
    }
    assert!((measured.span_s * 1e3 - figures.over_ranks.step_ms).abs() < 1e-9);
}

#[test]
fn the_pages_sources_are_refused_over_the_size_limit_before_reading() {
    use overlap_trace::{import_sources, MAX_TRACE_BYTES};
    let huge = MAX_TRACE_BYTES * 2;
    let e = import_sources([("big.json".to_string(), huge, std::io::empty())]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "big.json is 2 GiB: over the 1 GiB a trace file may hold; profile fewer steps (torch.profiler.schedule with active=1)"
    );
    let none: [(String, u64, std::io::Empty); 0] = [];
    assert_eq!(
        import_sources(none).unwrap_err().to_string(),
        "no trace files given"
    );
}

#[test]
fn the_comparison_sums_communication_over_axes_on_both_sides() {
    use overlap_trace::compare::{compare, Figure};
    let (sim, imported) = round_trip("contention", false);
    let rows = compare(&imported, &sim.report);
    let get = |f: Figure| rows.iter().find(|c| c.figure == f).unwrap();
    let o = &imported.over_ranks;
    let comm: f64 = o.axes.values().map(|a| a.comm_ms).sum();
    // Two axes in flight at once count twice, as the report counts them:
    // more than the union the slowest GPU's own figure gives.
    assert!(comm > o.comm_ms, "{comm} vs {}", o.comm_ms);
    assert_eq!(get(Figure::Comm).measured, Some(comm));
    assert_eq!(
        get(Figure::Hidden).measured,
        Some(1.0 - o.exposed_ms / comm)
    );
    let sim_comm: f64 = overlap_core::Axis::ALL
        .iter()
        .map(|&a| sim.report.axes.get(a).comm_ms)
        .sum();
    assert_eq!(get(Figure::Comm).simulated, Some(sim_comm));
    // Step, compute and HTA's overlap: the report's, to the export's µs.
    assert!((get(Figure::Step).measured.unwrap() - sim.report.step_time_ms).abs() < 1e-3);
    // The export rounds each kernel's start and end to the µs: busy time
    // may move by up to a µs per kernel of the busiest GPU.
    let kernels = sim
        .timeline
        .gpus
        .iter()
        .map(|g| g.compute.len())
        .max()
        .unwrap_or(0);
    let compute = get(Figure::Compute).measured.unwrap();
    assert!(
        (compute - sim.report.compute_ms).abs() <= kernels as f64 * 1e-3,
        "{compute} vs {}",
        sim.report.compute_ms
    );
    assert!((get(Figure::Overlap).measured.unwrap() - sim.report.hta_overlap).abs() < 5e-3);
}
