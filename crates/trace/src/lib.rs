//! Reading real PyTorch profiler (Kineto) traces: one file per rank,
//! `.json` or `.json.gz`, or a folder of them, into the figures the
//! simulated report gives (`figures`), so that a measured job can be laid
//! beside a scenario.
//!
//! - `read`: one file, streamed event by event (`split` cuts the stream,
//!   `events` reads each event, `sink` keeps what the figures need); only
//!   GPU kernels, launches,
//!   collectives' records and profiler steps are kept.
//! - `classify`: the table of name patterns that tells communication from
//!   compute, and the axis of a collective from its process group.
//! - `rules`: the user's own rules, read before the table (`--classify`).
//! - `identify`: each file's kernels classified once, for every pass after.
//! - `matching`: collectives matched across ranks: transfer and wait;
//!   `infer_groups`: their process groups, where the trace states none.
//! - `figures`, `over_ranks`: per GPU and over ranks.
//! - `propose`: the scenario the traces imply.
//!
//! Limits, each refused with the figure in one line: a file holds at most
//! [`MAX_TRACE_BYTES`] of JSON (after gzip), an import at most
//! [`MAX_KERNELS`] GPU events and [`MAX_FILES`] files.

mod analyse;
pub mod bars;
pub mod classify;
pub mod compare;
mod error;
mod event;
mod events;
pub mod figures;
pub mod identify;
pub mod infer_groups;
mod limits;
mod matching;
pub mod over_ranks;
pub mod propose;
pub mod read;
pub mod rules;
mod sink;
pub mod split;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use bars::{bars_of, bars_with, Measured};
pub use error::ImportError;
pub use figures::{AxisFigures, GpuFigures, Transfer};
pub use identify::Candidate;
pub use limits::{MAX_FILES, MAX_KERNELS, MAX_TRACE_BYTES};
pub use over_ranks::{LateRank, OverRanks};
pub use propose::Proposed;
pub use read::{read_trace, FileTrace, Kernel, RankLists};
pub use rules::{Classifier, UserRule};
pub use sink::MAX_HELD_RANKS;

/// An imported job: its GPUs' figures, in rank order, and over ranks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Imported {
    /// Files read, in the order their GPUs are listed.
    pub files: Vec<String>,
    /// `distributedInfo.world_size` of the first file that states it.
    pub world_size: Option<u64>,
    /// Per GPU: by rank, then file, then device.
    pub gpus: Vec<GpuFigures>,
    /// Over ranks.
    pub over_ranks: OverRanks,
    /// What the figures could not say, in sentences: collectives not
    /// matched across ranks, GPUs with no communication recognised.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<String>,
    /// The scenario the traces imply, for the user to edit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed: Option<Proposed>,
}

/// The figures of traces already read (one per rank), in rank order.
pub fn figures_of(files: &[FileTrace]) -> Imported {
    figures_with(files, &Classifier::default())
}

/// As [`figures_of`], kernels classified by `classifier`.
pub fn figures_with(files: &[FileTrace], classifier: &Classifier) -> Imported {
    figures_from(&analyse::analyse(files, classifier))
}

/// The figures of an analysed import.
fn figures_from(a: &analyse::Analysed) -> Imported {
    let (order, ids, matched) = (&a.order, &a.ids, &a.matched);
    // HTA reads the steps of all ranks into one table of names.
    let mut steps: Vec<u64> = order
        .iter()
        .flat_map(|f| f.step_numbers.iter().copied())
        .collect();
    steps.sort_unstable();
    steps.dedup();
    let hta_steps = steps.len() >= 2;
    let mut gpus: Vec<GpuFigures> = Vec::new();
    for (f, file) in order.iter().enumerate() {
        let first = gpus.len();
        gpus.extend(figures::gpus_of(
            file, f, &ids[f], matched, first, hta_steps,
        ));
    }
    let mut messages = matched.messages.clone();
    let silent: Vec<&GpuFigures> = gpus
        .iter()
        .filter(|g| g.comm_by_kind_ms.is_empty())
        .collect();
    if let Some(g) = silent.first() {
        let which = if silent.len() == gpus.len() {
            "any GPU".to_string()
        } else {
            format!("{} of {} GPUs", silent.len(), gpus.len())
        };
        let hint = match g.comm_candidates.first() {
            Some(c) => format!(
                "; the longest kernel off its compute stream on {} is {} (stream {}, {:.3} ms per step): if it is communication, name it with --classify PATTERN=KIND[:AXIS]",
                gpu_label(g.rank, g.device),
                c.function,
                c.stream,
                c.ms
            ),
            None => "; every kernel runs on one stream: name communication kernels with --classify PATTERN=KIND[:AXIS]".to_string(),
        };
        messages.push(format!(
            "no kernel is recognised as communication on {which}: communication is 0 ms only because the table does not know its kernels{hint}"
        ));
    }
    Imported {
        files: order.iter().map(|f| f.source.clone()).collect(),
        world_size: order.iter().find_map(|f| f.world_size),
        over_ranks: over_ranks::over_ranks(&gpus, &matched.late, matched.matched),
        gpus,
        messages,
        proposed: Some(propose::propose(order, ids, matched)),
    }
}

/// A GPU as messages name it: "rank 3 gpu 3", or "gpu 0" without a rank.
pub fn gpu_label(rank: Option<u64>, device: i64) -> String {
    match rank {
        Some(r) => format!("rank {r} gpu {device}"),
        None => format!("gpu {device}"),
    }
}

/// Refuses traces two of which say the same rank: one trace per rank.
pub fn check_ranks(files: &[FileTrace]) -> Result<(), ImportError> {
    let mut by_rank: std::collections::HashMap<u64, &str> = std::collections::HashMap::new();
    for f in files {
        let Some(r) = f.rank else { continue };
        if let Some(other) = by_rank.insert(r, &f.source) {
            return Err(ImportError::new(format!(
                "{other} and {} both say rank {r} (distributedInfo.rank): give one trace per rank, of one profiling run",
                f.source
            )));
        }
    }
    Ok(())
}

/// The trace files a path names: the file itself, or a folder's `.json`
/// and `.json.gz` files, by name.
fn trace_files(path: &Path) -> Result<Vec<PathBuf>, ImportError> {
    let shown = path.display();
    let meta = std::fs::metadata(path)
        .map_err(|e| ImportError::new(format!("cannot read {shown}: {e}")))?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    if !meta.is_dir() {
        return Err(ImportError::new(format!(
            "{shown} is neither a file nor a folder: give trace files (.json, .json.gz) or a folder of them"
        )));
    }
    let mut found = Vec::new();
    let entries = std::fs::read_dir(path)
        .map_err(|e| ImportError::new(format!("cannot read {shown}: {e}")))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_ascii_lowercase();
        let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
        if is_file && (name.ends_with(".json") || name.ends_with(".json.gz")) {
            found.push(entry.path());
        }
        if found.len() > MAX_FILES {
            break;
        }
    }
    if found.is_empty() {
        return Err(ImportError::new(format!(
            "{shown} holds no trace files (.json or .json.gz)"
        )));
    }
    found.sort();
    Ok(found)
}

/// The traces of one import as they are read, within its limits: the
/// kernels of all its files together at most [`MAX_KERNELS`], and the
/// process groups' rank lists held once across files.
#[derive(Default)]
struct Traces {
    files: Vec<FileTrace>,
    kernels: usize,
    rank_lists: RankLists,
}

impl Traces {
    /// Reads one file, `shown` by that name in messages.
    fn read(&mut self, source: impl std::io::Read, shown: &str) -> Result<(), ImportError> {
        let t = read::read_trace_in(
            source,
            shown,
            MAX_TRACE_BYTES,
            MAX_KERNELS - self.kernels,
            &mut self.rank_lists,
        )?;
        self.kernels += t.kernels.len();
        self.files.push(t);
        Ok(())
    }

    /// Every file read, refused when there is none or two say they are
    /// the same rank.
    fn all(self) -> Result<Vec<FileTrace>, ImportError> {
        if self.files.is_empty() {
            return Err(ImportError::new("no trace files given".to_string()));
        }
        check_ranks(&self.files)?;
        Ok(self.files)
    }
}

/// Refuses an import of more than [`MAX_FILES`] files.
fn too_many_files() -> ImportError {
    ImportError::new(format!(
        "more than {MAX_FILES} trace files given: over the import limit; import fewer ranks"
    ))
}

/// Reads every trace the paths name and gives their figures.
pub fn import_paths(paths: &[PathBuf]) -> Result<Imported, ImportError> {
    import_paths_with(paths, &Classifier::default())
}

/// As [`import_paths`], kernels classified by `classifier`.
pub fn import_paths_with(
    paths: &[PathBuf],
    classifier: &Classifier,
) -> Result<Imported, ImportError> {
    let mut files = Vec::new();
    for p in paths {
        files.extend(trace_files(p)?);
    }
    if files.len() > MAX_FILES {
        return Err(too_many_files());
    }
    let mut traces = Traces::default();
    for f in &files {
        let shown = f.display().to_string();
        let meta = std::fs::metadata(f)
            .map_err(|e| ImportError::new(format!("cannot read {shown}: {e}")))?;
        if !meta.is_file() {
            return Err(ImportError::new(format!(
                "{shown} is not a regular file: give trace files (.json, .json.gz) or a folder of them"
            )));
        }
        check_size(&shown, meta.len())?;
        let opened = std::fs::File::open(f)
            .map_err(|e| ImportError::new(format!("cannot read {shown}: {e}")))?;
        traces.read(opened, &shown)?;
    }
    let traces = traces.all()?;
    Ok(figures_with(&traces, classifier))
}

/// Refuses a file of `len` bytes over [`MAX_TRACE_BYTES`], before reading it.
pub fn check_size(shown: &str, len: u64) -> Result<(), ImportError> {
    if len > MAX_TRACE_BYTES {
        return Err(ImportError::new(format!(
            "{shown} is {}: over the {} a trace file may hold; profile fewer steps (torch.profiler.schedule with active=1)",
            read::bytes(len),
            read::bytes(MAX_TRACE_BYTES)
        )));
    }
    Ok(())
}

/// Reads traces given as named byte sources of known length (the page's
/// files), within the same limits as [`import_paths`]: their figures and
/// their bars.
pub fn import_sources<R: std::io::Read>(
    sources: impl IntoIterator<Item = (String, u64, R)>,
) -> Result<(Imported, Measured), ImportError> {
    import_sources_with(sources, &Classifier::default())
}

/// As [`import_sources`], kernels classified by `classifier` (the page's
/// own rules, as `--classify` gives them to [`import_paths_with`]).
pub fn import_sources_with<R: std::io::Read>(
    sources: impl IntoIterator<Item = (String, u64, R)>,
    classifier: &Classifier,
) -> Result<(Imported, Measured), ImportError> {
    let mut traces = Traces::default();
    for (shown, len, source) in sources {
        if traces.files.len() >= MAX_FILES {
            return Err(too_many_files());
        }
        check_size(&shown, len)?;
        traces.read(source, &shown)?;
    }
    let traces = traces.all()?;
    let analysed = analyse::analyse(&traces, classifier);
    Ok((figures_from(&analysed), bars::bars_from(&analysed)))
}
