//! Importing a large profiler trace: writes a single-rank Kineto trace of
//! about 100 MB shaped as PyTorch writes one (for each kernel: an `aten::`
//! operator with its shapes, a `cudaLaunchKernel`, the kernel with its
//! launch arguments, and the flow arrows between them; every tenth kernel
//! an NCCL all-reduce under a `record_param_comms` with its process group),
//! then times `import_paths` on it and prints the time and the peak memory
//! of the import alone (the peak is reset after the file is written).
//! Goal (issue 44): under 2 s and under 300 MB. Then the same shape as an
//! 8-rank set of 30 MB in all, each rank's all-reduces longer by its wait
//! for the last rank, so that the cross-rank matching has every rank to
//! match: goal (issue 57) under 1 s natively. Figures, never assertions.
//!
//! Run: `cargo bench -p overlap-trace --bench import_trace` (the file is
//! written under the system temp directory and removed after).

use std::io::{BufWriter, Write};
use std::time::Instant;

use overlap_trace::import_paths;

/// The CLI's allocator (see its `main.rs`), so that these figures are what
/// `overlap-lab import` ships.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The size of the single-rank trace written, bytes.
const TARGET_BYTES: u64 = 100 * 1000 * 1000;

/// The ranks of the multi-rank set, and its size in all, bytes.
const RANKS: u64 = 8;
const SET_BYTES: u64 = 30 * 1000 * 1000;

/// Compute kernel names of a transformer step, as cuBLAS, FlashAttention
/// and ATen name them.
const NAMES: &[&str] = &[
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
    "flash_fwd_kernel",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
    "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)",
];

/// Writes rank `rank`'s trace of about `target_bytes`; returns its size and
/// kernel count. A rank's all-reduce lasts 40 us of transfer plus its wait
/// for the last rank to arrive (rank 7 arrives last).
fn write_trace(path: &std::path::Path, rank: u64, target_bytes: u64) -> (u64, u64) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let mut bytes = 0u64;
    let mut put = |w: &mut BufWriter<std::fs::File>, s: &str| {
        w.write_all(s.as_bytes()).unwrap();
        bytes += s.len() as u64;
        bytes
    };
    put(
        &mut w,
        &format!("{{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {rank}, \"world_size\": 8}},\n  \"deviceProperties\": [{{\"id\": {rank}, \"name\": \"NVIDIA H100 80GB HBM3\"}}],\n  \"traceEvents\": [\n"
        ),
    );
    put(
        &mut w,
        "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 100, \"tid\": 100, \"ts\": 0, \"dur\": 1000000000, \"args\": {\"External id\": 1}},\n",
    );
    let mut kernels = 0u64;
    let (mut host_us, mut gpu_us) = (10.0f64, 20.0f64);
    let mut written = 0;
    while written < target_bytes {
        let i = kernels;
        let comm = i % 10 == 9;
        let corr = i + 1;
        let (name, stream, dur) = if comm {
            (
                "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                13,
                40.0 + 2.0 * (RANKS - 1 - rank) as f64,
            )
        } else {
            (
                NAMES[(i % NAMES.len() as u64) as usize],
                7,
                25.0 + (i % 7) as f64,
            )
        };
        let op = if comm {
            format!(
                "  {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 100, \"tid\": 100, \"ts\": {host_us:.3}, \"dur\": 8.5, \"args\": {{\"External id\": {corr}, \"Record function id\": {i}, \"Process Group Name\": \"3\", \"Process Group Description\": \"TENSOR_MODEL_PARALLEL_GROUP\", \"Process Group Ranks\": \"[0, 1, 2, 3, 4, 5, 6, 7]\", \"Group size\": 8, \"Collective name\": \"allreduce\", \"dtype\": \"BFloat16\", \"In msg nelems\": 4194304, \"Out msg nelems\": 4194304, \"In split size\": \"[]\", \"Out split size\": \"[]\"}}}},\n"
            )
        } else {
            format!(
                "  {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 100, \"tid\": 100, \"ts\": {host_us:.3}, \"dur\": 8.5, \"args\": {{\"External id\": {corr}, \"Record function id\": 0, \"Ev Idx\": {i}, \"Input Dims\": [[4096, 8192], [8192, 28672]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"], \"Input Strides\": [[8192, 1], [1, 8192]], \"Concrete Inputs\": [\"\", \"\"], \"Sequence number\": {i}, \"Fwd thread id\": 0}}}},\n"
            )
        };
        put(&mut w, &op);
        put(&mut w, &format!(
            "  {{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100, \"ts\": {:.3}, \"dur\": 4.1, \"args\": {{\"External id\": {corr}, \"cbid\": 211, \"correlation\": {corr}}}}},\n",
            host_us + 2.0
        ));
        put(&mut w, &format!(
            "  {{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{name}\", \"pid\": {rank}, \"tid\": {stream}, \"ts\": {gpu_us:.3}, \"dur\": {dur:.3}, \"args\": {{\"External id\": {corr}, \"queued\": 0, \"device\": {rank}, \"context\": 1, \"stream\": {stream}, \"correlation\": {corr}, \"registers per thread\": 168, \"shared memory\": 213248, \"blocks per SM\": 1.0, \"warps per SM\": 12.0, \"grid\": [132, 1, 1], \"block\": [384, 1, 1], \"est. achieved occupancy %\": 19}}}},\n"
        ));
        written = put(&mut w, &format!(
            "  {{\"ph\": \"s\", \"id\": {corr}, \"pid\": 100, \"tid\": 100, \"ts\": {:.3}, \"cat\": \"ac2g\", \"name\": \"ac2g\"}},\n  {{\"ph\": \"f\", \"id\": {corr}, \"pid\": {rank}, \"tid\": {stream}, \"ts\": {gpu_us:.3}, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}},\n",
            host_us + 2.0
        ));
        host_us += 12.0;
        // Compute back to back on stream 7; the all-reduce on stream 13 runs
        // beside the next compute kernels.
        if !comm {
            gpu_us += dur + 1.0;
        }
        kernels += 1;
    }
    put(
        &mut w,
        &format!("  {{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": {rank}, \"tid\": 0, \"args\": {{\"name\": \"GPU {rank}\"}}}}\n  ],\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1700000000000000000\n}}\n"),
    );
    w.flush().unwrap();
    drop(w);
    (std::fs::metadata(path).unwrap().len(), kernels)
}

// The core's benchmarks measure memory the same way: one definition.
#[path = "../../core/benches/common/mod.rs"]
mod common;
use common::{peak_memory_mb, reset_peak_memory};

/// CPU time this process has used, s (Linux `/proc/self/stat`, user +
/// system, in clock ticks of 1/100 s, the kernel's USER_HZ): on a shared
/// machine the wall time also counts other processes' turns.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command's closing parenthesis; utime and stime are
    // the 14th and 15th of the whole line.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Imports `paths` three times and prints the median time, CPU and peak
/// memory of the import alone, under `label`.
fn measure(label: &str, paths: &[std::path::PathBuf], size: u64, kernels: u64, goal: &str) {
    let mut times = Vec::new();
    let mut cpu = Vec::new();
    let mut peaks = Vec::new();
    for _ in 0..3 {
        reset_peak_memory();
        let before = peak_memory_mb();
        let cpu_before = cpu_seconds();
        let start = Instant::now();
        let imported = import_paths(paths).expect("the generated traces import");
        let secs = start.elapsed().as_secs_f64();
        if let (Some(a), Some(b)) = (cpu_before, cpu_seconds()) {
            cpu.push(b - a);
        }
        let peak = peak_memory_mb();
        let read: u64 = imported.gpus.iter().map(|g| g.kernels as u64).sum();
        assert_eq!(read, kernels);
        std::hint::black_box(&imported);
        drop(imported);
        times.push(secs);
        if let (Some(p), Some(b)) = (peak, before) {
            peaks.push((p, b));
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{label}: {:.3} s median of 3 (fastest {:.3} s), {:.0} MB/s",
        times[1],
        times[0],
        size as f64 / 1e6 / times[1]
    );
    cpu.sort_by(f64::total_cmp);
    if cpu.len() == 3 {
        println!(
            "{label}: {:.2} s of CPU median (the wall time counts other processes' turns on a shared machine)",
            cpu[1]
        );
    }
    if let Some(&(peak, before)) = peaks.iter().max_by(|a, b| a.0.total_cmp(&b.0)) {
        println!(
            "{label}: peak resident memory {peak:.0} MB ({before:.0} MB before the import); {goal}"
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter that is not ours skips the run.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if filter.is_some_and(|f| !"import_trace".contains(f.as_str())) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("overlap-lab-import-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rank0.json");
    let (size, kernels) = write_trace(&path, 0, TARGET_BYTES);
    println!(
        "import_trace: {:.1} MB single-rank trace, {kernels} kernels",
        size as f64 / 1e6
    );
    measure(
        "import_trace",
        std::slice::from_ref(&path),
        size,
        kernels,
        "goal < 2 s and < 300 MB",
    );
    std::fs::remove_file(&path).unwrap();

    let set = dir.join("set");
    std::fs::create_dir_all(&set).unwrap();
    let (mut size, mut kernels) = (0, 0);
    let paths: Vec<_> = (0..RANKS)
        .map(|rank| {
            let path = set.join(format!("rank{rank}.json"));
            let (b, k) = write_trace(&path, rank, SET_BYTES / RANKS);
            size += b;
            kernels += k;
            path
        })
        .collect();
    println!(
        "import_trace_8_ranks: {:.1} MB over {RANKS} ranks, {kernels} kernels",
        size as f64 / 1e6
    );
    measure("import_trace_8_ranks", &paths, size, kernels, "goal < 1 s");
    let _ = std::fs::remove_dir_all(&dir);
}
