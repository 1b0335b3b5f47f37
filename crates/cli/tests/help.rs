//! Help, the version and shell completions, as a user of a Rust command
//! line expects them: `help`, `help COMMAND`, `COMMAND --help`,
//! `--version`, `completions SHELL`; and a usage error as one line.

mod common;

use common::run_cli;

/// Standard output of a run that must succeed with nothing on standard error.
fn printed(args: &[&str]) -> String {
    let out = run_cli(args, None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    assert!(err.is_empty(), "{args:?}: {err}");
    String::from_utf8(out.stdout).unwrap()
}

/// Every command with what its help names: its options and operands, and
/// the values of those that have a fixed set.
const COMMANDS: &[(&str, &[&str])] = &[
    ("simulate", &["--json", "<FILE>", "preset:NAME"]),
    ("link", &["--preset <ID>", "<FILE>", "closest preset"]),
    ("trace", &["--kineto <DIR>", "<FILE>"]),
    ("import", &["--json", "--scenario <FILE>", "<PATH>..."]),
    ("presets", &[]),
    ("fields", &[]),
    (
        "busbw",
        &[
            "--hardware <PRESET>",
            "dgx2-v100",
            "dgx-a100",
            "dgx-h100",
            "--nodes <N>",
            "[default: 1]",
            "--collective <C>",
            "all_reduce",
            "all_gather",
            "reduce_scatter",
            "all_to_all",
        ],
    ),
    (
        "sweep",
        &[
            "--field <PATH>",
            "--values <A,B,...>",
            "--range <MIN:MAX[:STEP]>",
            "--json",
            "--csv",
            "<FILE>",
        ],
    ),
    (
        "search",
        &[
            "--gpus <N>",
            "--objective <O>",
            "--top <K>",
            "--max-batch <B>",
            "--fix <PATH,...>",
            "--json",
            "--csv",
            "<FILE>",
        ],
    ),
    ("published", &[]),
    ("completions", &["<SHELL>", "bash", "zsh", "fish"]),
];

#[test]
fn help_lists_every_command() {
    let text = printed(&["help"]);
    assert!(text.contains("Usage: overlap-lab <COMMAND>"), "{text}");
    for (command, _) in COMMANDS {
        assert!(
            text.contains(&format!("\n  {command} ")),
            "{command}: {text}"
        );
    }
    assert_eq!(printed(&["--help"]), text);
}

#[test]
fn each_commands_help_names_its_options_and_their_values() {
    for (command, names) in COMMANDS {
        let text = printed(&[command, "--help"]);
        assert!(
            text.contains(&format!("Usage: overlap-lab {command}")),
            "{command}: {text}"
        );
        assert!(text.contains("-h, --help"), "{command}: {text}");
        for name in *names {
            assert!(text.contains(name), "{command} --help lacks {name}: {text}");
        }
        // `help COMMAND` is the same page, and -h its summary.
        assert_eq!(printed(&["help", command]), text, "{command}");
        let summary = printed(&[command, "-h"]);
        assert!(summary.len() <= text.len(), "{command}");
    }
}

#[test]
fn help_sweep_shows_each_option_with_what_it_takes() {
    let text = printed(&["help", "sweep"]);
    for line in [
        "A scenario field: its path as `overlap-lab fields` lists them",
        "A list of values: comma-separated",
        "A range of values: MIN, MIN+STEP, ... up to MAX",
        "Writes the table as JSON",
        "Writes the table as CSV",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
}

#[test]
fn version_is_the_packages() {
    let expected = format!("overlap-lab {}\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(printed(&["--version"]), expected);
    assert_eq!(printed(&["-V"]), expected);
}

#[test]
fn completions_for_bash_zsh_and_fish_name_every_command() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = printed(&["completions", shell]);
        assert!(script.len() > 1000, "{shell}: {script}");
        for (command, _) in COMMANDS {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
        for option in ["hardware", "collective", "kineto"] {
            assert!(script.contains(option), "{shell} lacks {option}");
        }
    }
    // Options' values too, in the shells whose scripts list them.
    for shell in ["bash", "zsh", "fish"] {
        let script = printed(&["completions", shell]);
        for value in ["dgx-h100", "reduce_scatter"] {
            assert!(script.contains(value), "{shell} lacks {value}");
        }
    }
    assert!(printed(&["completions", "bash"]).contains("complete -F _overlap__lab"));
    assert!(printed(&["completions", "zsh"]).starts_with("#compdef overlap-lab"));
    assert!(printed(&["completions", "fish"]).contains("complete -c overlap-lab"));
}

/// A usage error is one line on standard error, naming the argument and
/// what is valid, with exit status 2 and nothing on standard output.
#[test]
fn a_usage_error_is_one_line_with_exit_status_2() {
    for (args, needle) in [
        (&["sweep", "preset:didactic", "--field", "overlap.tp_chunks"][..], "--values or --range"),
        (
            &["busbw", "--collective", "all_reduc"],
            "--collective \"all_reduc\": not a collective; valid are all_reduce, all_gather, reduce_scatter, all_to_all; did you mean all_reduce?",
        ),
        (&["completions"], "valid are bash, elvish, fish, powershell, zsh"),
        (&["help", "frobnicate"], "unknown command \"frobnicate\""),
        (&["simulate", "--jsn", "-"], "did you mean --json?"),
    ] {
        let out = run_cli(args, None);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("overlap-lab: "), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("For more information"), "{args:?}: {err}");
    }
}
