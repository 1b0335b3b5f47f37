//! The command line's grammar as clap reads it: one struct per command.
//!
//! Each argument's `help` begins with what its value is ("A preset
//! name ..."): a usage error quotes it (usage.rs), so the one line that
//! refuses an argument also says what is valid.

use std::path::PathBuf;

use clap::builder::{PathBufValueParser, PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use overlap_core::scenario::CollectiveOp;
use overlap_core::HardwarePreset;
use overlap_trace::UserRule;

const AFTER_HELP: &str = "\
FILE is scenario JSON (interface.md) of at most 1 MiB; - reads standard input; preset:NAME uses a preset \
(`overlap-lab presets` lists them); -- before FILE lets its name start with -.
Bad input exits with status 2 and one line on standard error.
`overlap-lab help COMMAND` shows a command's options and their values.";

/// `overlap-lab`: the Overlap Lab simulator on the command line.
#[derive(Debug, Parser)]
#[command(
    name = "overlap-lab",
    version,
    about = "The Overlap Lab simulator: when overlapping communication with compute \
             in large-scale training is free, and when it is not",
    after_help = AFTER_HELP,
    subcommand_required = true,
    // No command is a usage error (exit status 2, one line), not help.
    arg_required_else_help = false
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Every command, in the order `overlap-lab help` lists them.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate a scenario and print a readable summary (--json: the report)
    Simulate(SimulateArgs),
    /// Print the share link's query string for a scenario
    #[command(
        long_about = "Print the share link's query string for a scenario: the fields that \
                      differ from the closest preset, or from --preset ID"
    )]
    Link(LinkArgs),
    /// Write the simulated step as a Chrome trace (Perfetto opens it) to standard output
    #[command(
        long_about = "Write the simulated step as a Chrome trace-event JSON (Perfetto opens \
                      it) to standard output; with --kineto DIR, one PyTorch-profiler trace \
                      per simulated GPU, DIR/rank<N>.json, which HolisticTraceAnalysis loads \
                      as a real job's traces"
    )]
    Trace(TraceArgs),
    /// Read PyTorch profiler traces and print each GPU's figures
    #[command(
        long_about = "Read PyTorch profiler (Kineto) traces, .json or .json.gz, one per rank \
                      or a folder of them, and print each GPU's step, compute, communication, \
                      exposed time and overlap; with --scenario FILE, the simulated figures \
                      beside them"
    )]
    Import(ImportArgs),
    /// List the built-in scenarios (FILE preset:NAME)
    Presets,
    /// List every scenario field: its link key, type and range, default and label
    Fields,
    /// Simulate one collective from 8 B to 4 GiB: nccl-tests' time, algbw and busbw
    #[command(
        long_about = "Simulate one collective over every GPU of the hardware from 8 B to \
                      4 GiB and print nccl-tests' time, algbw and busbw with NCCL's algorithm \
                      and protocol"
    )]
    Busbw(BusbwArgs),
    /// Simulate a scenario once per value of one field: one row per value
    #[command(
        long_about = "Set one field (a path `overlap-lab fields` lists) to each value, \
                      simulate each scenario and print one row per value: step, baseline, \
                      speedup, compute, exposed per axis, bubble, memory; a refused value is \
                      a row with its message"
    )]
    Sweep(SweepArgs),
    /// Search the layouts and overlaps of a scenario's model on N GPUs: the best ones and the Pareto front
    #[command(
        long_about = "Search every layout of the scenario's model on N GPUs (tp, pp, virtual \
                      stages, dp, ep, cp, schedule, micro-batch, recomputation, sequence \
                      parallelism, DP sharding, each overlap switch), pruning by a lower bound \
                      of the step and simulating the rest: the best layouts, the \
                      step-time/memory Pareto front, refusals counted by reason; progress on \
                      standard error"
    )]
    Search(SearchArgs),
    /// Print the published measurements beside the simulated figures
    Published,
    /// Write a shell completion script to standard output
    #[command(
        long_about = "Write a shell completion script to standard output, for example \
                      `overlap-lab completions bash > ~/.local/share/bash-completion/completions/overlap-lab`"
    )]
    Completions(CompletionsArgs),
}

/// Where a scenario is read from: the FILE operand.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// `-`.
    Stdin,
    /// `preset:NAME`: the name is looked up when the scenario is loaded,
    /// so that an unknown one is refused with the list of presets.
    Preset(String),
    /// A file, opened by its name as given (which need not be UTF-8).
    Path(PathBuf),
}

impl Source {
    fn from_path(path: PathBuf) -> Self {
        if path.as_os_str() == "-" {
            return Source::Stdin;
        }
        match path.to_str().and_then(|s| s.strip_prefix("preset:")) {
            Some(name) => Source::Preset(name.to_string()),
            None => Source::Path(path),
        }
    }
}

/// FILE: a scenario's file, standard input or preset.
fn scenario_source() -> impl TypedValueParser<Value = Source> {
    PathBufValueParser::new().map(Source::from_path)
}

/// The scenario a command reads.
#[derive(Debug, Args)]
pub struct ScenarioFile {
    /// Scenario JSON of at most 1 MiB (interface.md), - for standard input, or preset:NAME
    #[arg(value_name = "FILE", value_parser = scenario_source())]
    pub file: Source,
}

/// `simulate [--json] FILE`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Prints the report (interface.md) as JSON in place of the summary
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub scenario: ScenarioFile,
}

/// `link [--preset ID] FILE`.
#[derive(Debug, Args)]
pub struct LinkArgs {
    /// A preset name: the link holds the fields that differ from it [default: the closest preset]
    #[arg(long, value_name = "ID", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub preset: Option<String>,
    #[command(flatten)]
    pub scenario: ScenarioFile,
}

/// `trace [--kineto DIR] FILE`.
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// A directory: one PyTorch-profiler trace per simulated GPU is written into it, DIR/rank<N>.json, in place of the Chrome trace
    #[arg(long, value_name = "DIR", value_parser = PathBufValueParser::new())]
    pub kineto: Option<PathBuf>,
    #[command(flatten)]
    pub scenario: ScenarioFile,
}

/// A PATH of `import`: a trace file or a folder, not standard input
/// (a job's traces are several files, read more than once).
fn trace_path() -> impl TypedValueParser<Value = PathBuf> {
    PathBufValueParser::new().try_map(|p: PathBuf| {
        if p.as_os_str() == "-" {
            Err("import reads trace files, not standard input")
        } else {
            Ok(p)
        }
    })
}

/// A `--classify` rule, read as the trace crate reads it.
fn classify_rule() -> impl TypedValueParser<Value = UserRule> {
    clap::builder::StringValueParser::new().try_map(|text: String| UserRule::parse(&text))
}

/// `import [--json] [--scenario FILE] [--classify RULE]... [--classify-file F] PATH...`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Prints the figures as JSON
    #[arg(long)]
    pub json: bool,
    /// A scenario FILE: simulated, its figures printed beside the measured ones
    #[arg(long, value_name = "FILE", value_parser = scenario_source())]
    pub scenario: Option<Source>,
    /// A rule PATTERN=KIND[:AXIS]: PATTERN a regular expression on the kernel's name, KIND one of all_reduce, all_gather, reduce_scatter, all_to_all, send_recv, memcpy, compute, AXIS one of tp, pp, dp, ep, cp; read before the built-in table, the first match deciding (repeatable)
    #[arg(long, value_name = "RULE", value_parser = classify_rule())]
    pub classify: Vec<UserRule>,
    /// A file of classification rules: one PATTERN=KIND[:AXIS] a line (blank lines and lines starting with # skipped), read after the --classify rules
    #[arg(long, value_name = "F", value_parser = PathBufValueParser::new())]
    pub classify_file: Option<PathBuf>,
    /// Prints the scenario the traces imply (GPU, world size, group sizes over the closest preset) as scenario JSON to edit, its notes on standard error
    #[arg(long, conflicts_with_all = ["json", "scenario"])]
    pub propose: bool,
    /// A trace file (.json, .json.gz) or a folder of them, one file per rank
    #[arg(value_name = "PATH", required = true, value_parser = trace_path())]
    pub paths: Vec<PathBuf>,
}

/// `--hardware`'s values: the core's hardware presets, each with its label.
fn hardware_preset() -> impl TypedValueParser<Value = HardwarePreset> {
    PossibleValuesParser::new(
        HardwarePreset::ALL.map(|p| PossibleValue::new(p.name()).help(p.label())),
    )
    .map(|name| HardwarePreset::from_name(&name).expect("a listed preset"))
}

/// The collective `busbw` runs, as scenarios spell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Collective {
    /// nccl-tests' all_reduce_perf
    AllReduce,
    /// nccl-tests' all_gather_perf
    AllGather,
    /// nccl-tests' reduce_scatter_perf
    ReduceScatter,
    /// nccl-tests' alltoall_perf
    AllToAll,
}

impl From<Collective> for CollectiveOp {
    fn from(c: Collective) -> Self {
        match c {
            Collective::AllReduce => CollectiveOp::AllReduce,
            Collective::AllGather => CollectiveOp::AllGather,
            Collective::ReduceScatter => CollectiveOp::ReduceScatter,
            Collective::AllToAll => CollectiveOp::AllToAll,
        }
    }
}

impl Collective {
    /// The name as given on the command line and in scenarios.
    pub fn name(self) -> String {
        self.to_possible_value()
            .expect("no value is skipped")
            .get_name()
            .to_string()
    }
}

/// `busbw [--hardware PRESET] [--nodes N] [--collective C]`.
#[derive(Debug, Args)]
pub struct BusbwArgs {
    /// A hardware preset: the GPUs and network the collective runs over
    #[arg(
        long,
        value_name = "PRESET",
        default_value = HardwarePreset::DgxH100.name(),
        value_parser = hardware_preset()
    )]
    pub hardware: HardwarePreset,
    /// A number of nodes: 1 or more, each of the preset's GPUs per node
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub nodes: u32,
    /// A collective: run over every GPU of the nodes, as nccl-tests runs it
    #[arg(long, value_name = "C", value_enum, default_value_t = Collective::AllReduce)]
    pub collective: Collective,
    /// A token dispatcher for --collective all_to_all: deepep prints DeepEP's bottleneck bandwidth per EP size as its tests compute it (alltoall: nccl-tests' all-to-all, the default)
    #[arg(long, value_name = "D", value_enum)]
    pub dispatcher: Option<Dispatcher>,
    /// A number of tokens: per rank, in DeepEP's benchmark [default: 4096]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    pub tokens: Option<u32>,
    /// A hidden size: each token's width in DeepEP's benchmark [default: 7168]
    #[arg(long, value_name = "H", value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    pub hidden: Option<u32>,
    /// A number of experts per token: of the 256 of DeepEP's benchmark [default: 8]
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub top_k: Option<u32>,
}

/// The all-to-all `busbw --dispatcher` runs, as scenarios spell
/// `workload.moe.dispatcher`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Dispatcher {
    /// nccl-tests' alltoall_perf
    Alltoall,
    /// DeepEP's normal kernels, as its tests/legacy/test_{intra,inter}node.py time them
    Deepep,
}

/// How a table is written; one of them at most.
#[derive(Debug, Args)]
pub struct TableFormat {
    /// Writes the table as JSON
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Writes the table as CSV
    #[arg(long)]
    pub csv: bool,
}

/// `sweep FILE --field PATH (--values A,B,... | --range MIN:MAX[:STEP]) [--json|--csv]`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("points").required(true).args(["values", "range"]))]
pub struct SweepArgs {
    #[command(flatten)]
    pub scenario: ScenarioFile,
    /// A scenario field: its path as `overlap-lab fields` lists them, such as overlap.tp_chunks
    #[arg(long, value_name = "PATH", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub field: String,
    /// A list of values: comma-separated, as links write them (a name for an enumerated field, 1 or 0 for a switch)
    #[arg(long, value_name = "A,B,...", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub values: Option<String>,
    /// A range of values: MIN, MIN+STEP, ... up to MAX, for a number field [default STEP: 1 for whole numbers, the page slider's step otherwise]
    #[arg(long, value_name = "MIN:MAX[:STEP]", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub range: Option<String>,
    #[command(flatten)]
    pub format: TableFormat,
}

/// What `search` ranks its best list by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Objective {
    /// The step time (per sample, with --max-batch), then memory
    Step,
    /// The memory of the fullest GPU, then the step time
    Memory,
    /// The Pareto front of step time and memory, fastest first
    Both,
}

impl From<Objective> for overlap_core::search::Objective {
    fn from(o: Objective) -> Self {
        match o {
            Objective::Step => Self::Step,
            Objective::Memory => Self::Memory,
            Objective::Both => Self::Both,
        }
    }
}

/// `search FILE [--gpus N] [--objective O] [--top K] [--max-batch B] [--fix PATH,...] [--json|--csv]`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    #[command(flatten)]
    pub scenario: ScenarioFile,
    /// A number of GPUs: whole nodes of the scenario's hardware [default: the scenario's GPUs]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub gpus: Option<u64>,
    /// An objective: what the best list is ranked by
    #[arg(long, value_name = "O", value_enum, default_value_t = Objective::Step)]
    pub objective: Objective,
    /// A number of layouts: how many of the best to list, 1 to 1000
    #[arg(long, value_name = "K", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub top: u32,
    /// A maximum batch: each layout's global batch is the largest multiple of dp x micro_batch not above it (Calculon's) [default: the scenario's global batch]
    #[arg(long = "max-batch", value_name = "B", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_batch: Option<u32>,
    /// A list of fields: comma-separated paths the search keeps at the scenario's values, such as overlap.tp,parallel.schedule
    #[arg(long, value_name = "PATH,...", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub fix: Option<String>,
    #[command(flatten)]
    pub format: TableFormat,
}

/// `completions SHELL`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// A shell: the script completes overlap-lab's commands, options and their values in it
    #[arg(value_name = "SHELL", value_enum)]
    pub shell: clap_complete::Shell,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(list: &[&str]) -> Result<Command, clap::Error> {
        let args = std::iter::once("overlap-lab").chain(list.iter().copied());
        Cli::try_parse_from(args).map(|c| c.command)
    }

    #[test]
    fn the_grammar_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_preset_value_equal_to_the_file_name_keeps_the_file() {
        for list in [
            &["link", "--preset", "didactic", "didactic"][..],
            &["link", "didactic", "--preset=didactic"],
        ] {
            let Ok(Command::Link(a)) = parse(list) else {
                panic!("{list:?}")
            };
            assert_eq!(a.preset.as_deref(), Some("didactic"));
            assert_eq!(a.scenario.file, Source::Path("didactic".into()));
        }
    }

    #[test]
    fn file_is_standard_input_a_preset_or_a_path() {
        for (given, source) in [
            ("-", Source::Stdin),
            ("preset:didactic", Source::Preset("didactic".into())),
            ("a.json", Source::Path("a.json".into())),
        ] {
            let Ok(Command::Simulate(a)) = parse(&["simulate", given]) else {
                panic!("{given}")
            };
            assert_eq!(a.scenario.file, source);
        }
    }

    #[test]
    fn import_reads_every_path() {
        let Ok(Command::Import(a)) = parse(&["import", "a", "--json", "b", "--scenario", "s.json"])
        else {
            panic!()
        };
        assert_eq!(a.paths, [PathBuf::from("a"), PathBuf::from("b")]);
        assert!(a.json);
        assert_eq!(a.scenario, Some(Source::Path("s.json".into())));
    }

    #[test]
    fn a_double_dash_ends_the_options() {
        let Ok(Command::Simulate(a)) = parse(&["simulate", "--json", "--", "--json"]) else {
            panic!()
        };
        assert!(a.json);
        assert_eq!(a.scenario.file, Source::Path("--json".into()));
        let Ok(Command::Simulate(a)) = parse(&["simulate", "--", "-h"]) else {
            panic!("-h after -- is a FILE")
        };
        assert_eq!(a.scenario.file, Source::Path("-h".into()));
    }

    #[test]
    fn help_is_read_anywhere_before_a_double_dash() {
        for list in [&["--help"][..], &["simulate", "-h"], &["help", "sweep"]] {
            let e = parse(list).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::DisplayHelp, "{list:?}");
        }
    }

    #[test]
    fn an_option_or_a_file_given_twice_is_refused() {
        use clap::error::ErrorKind;
        for list in [
            &["simulate", "--json", "--json", "a"][..],
            &["link", "--preset", "a", "--preset", "b", "f"],
            &["busbw", "--nodes", "1", "--nodes=2"],
        ] {
            let kind = parse(list).unwrap_err().kind();
            assert_eq!(kind, ErrorKind::ArgumentConflict, "{list:?}");
        }
        let kind = parse(&["simulate", "a", "b"]).unwrap_err().kind();
        assert_eq!(kind, ErrorKind::UnknownArgument);
    }

    #[test]
    fn busbw_defaults_to_one_dgx_h100_and_all_reduce() {
        let Ok(Command::Busbw(a)) = parse(&["busbw"]) else {
            panic!()
        };
        assert_eq!(
            (a.hardware, a.nodes, a.collective),
            (HardwarePreset::DgxH100, 1, Collective::AllReduce)
        );
    }

    /// `--collective` spells each collective as scenarios do
    /// (`workload.collective`), and names every one the core has.
    #[test]
    fn collectives_are_the_cores_in_its_spelling() {
        let ours: Vec<CollectiveOp> = Collective::value_variants()
            .iter()
            .map(|&c| {
                let op = CollectiveOp::from(c);
                assert_eq!(serde_json::to_value(op).unwrap(), c.name());
                op
            })
            .collect();
        assert_eq!(ours, CollectiveOp::ALL);
    }

    #[test]
    fn hardware_values_are_the_cores_presets() {
        let command = Cli::command();
        let busbw = command.find_subcommand("busbw").unwrap();
        let hardware = busbw
            .get_arguments()
            .find(|a| a.get_long() == Some("hardware"))
            .unwrap();
        let names: Vec<String> = hardware
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        let core: Vec<&str> = HardwarePreset::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(names, core);
        for name in core {
            let Ok(Command::Busbw(a)) = parse(&["busbw", "--hardware", name]) else {
                panic!("{name}")
            };
            assert_eq!(a.hardware.name(), name);
        }
    }

    /// A usage error quotes an option's help up to its first colon as what
    /// the option takes (usage.rs): each option with a value says it so.
    #[test]
    fn every_option_with_a_value_says_what_it_takes() {
        for command in Cli::command().get_subcommands() {
            for arg in command
                .get_arguments()
                .filter(|a| a.get_long().is_some() && a.get_action().takes_values())
            {
                let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
                assert!(
                    help.starts_with('A') && help.contains(": "),
                    "{} --{}: {help}",
                    command.get_name(),
                    arg.get_long().unwrap()
                );
            }
        }
    }
}
