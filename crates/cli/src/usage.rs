//! Reading the arguments with clap, and turning what clap refuses into the
//! one line interface.md promises. clap's own error text is several lines
//! (the error, a tip, the usage, "For more information"); scripts read
//! standard error as one line, so the line is made here from the error's
//! kind and context, and says what the argument takes (its help) and,
//! where clap knows them, its valid values.

use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, CommandFactory, Parser};
use overlap_core::scenario::clip_echoes;

use crate::cli::Cli;

/// What the arguments ask for.
pub enum Parsed {
    /// A command to run.
    Run(Cli),
    /// Help or the version: printed on standard output, exit status 0.
    Print(String),
    /// A usage error: one line, exit status 2.
    Refuse(String),
}

/// Reads `args` (without the program name).
pub fn parse(args: &[OsString]) -> Parsed {
    let program = std::iter::once(OsString::from("overlap-lab"));
    match Cli::try_parse_from(program.chain(args.iter().cloned())) {
        Ok(cli) => Parsed::Run(cli),
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                Parsed::Print(e.render().to_string())
            }
            _ => Parsed::Refuse(one_line(&e, args)),
        },
    }
}

/// An argument as an error line quotes it: clipped, on one line.
fn quoted(arg: &str) -> String {
    clip_echoes(&format!("{arg:?}"))
}

fn string(e: &clap::Error, kind: ContextKind) -> Option<&str> {
    match e.get(kind)? {
        ContextValue::String(s) => Some(s),
        _ => None,
    }
}

fn strings(e: &clap::Error, kind: ContextKind) -> Vec<String> {
    match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    }
}

/// An argument as clap names it in its errors (`--preset <ID>`,
/// `<FILE>`, `<PATH>...`) as the line names it: `--preset`, `FILE`.
fn short_name(shown: &str) -> String {
    if shown.starts_with('-') {
        return shown.split(' ').next().unwrap_or(shown).to_string();
    }
    // A group of options, one of which is required: `<--a <X>|--b <Y>>`.
    if shown.starts_with("<-") {
        let names: Vec<String> = shown
            .trim_start_matches('<')
            .split('|')
            .map(|part| short_name(part.trim_start_matches('<')))
            .collect();
        return names.join(" or ");
    }
    shown
        .trim_end_matches("...")
        .trim_start_matches('<')
        .trim_end_matches('>')
        .to_string()
}

/// The argument clap's error names, looked up in the command.
fn find_arg<'a>(command: &'a clap::Command, shown: &str) -> Option<&'a Arg> {
    let name = short_name(shown);
    command
        .get_arguments()
        .find(|a| match name.strip_prefix("--") {
            Some(long) => a.get_long() == Some(long),
            None => a.is_positional() && a.get_value_names().is_some_and(|v| v[0] == name),
        })
}

/// The argument's help, as the clause of a sentence: what it takes.
fn help(arg: &Arg) -> String {
    let text = arg.get_help().map(ToString::to_string).unwrap_or_default();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The argument's help as one clause: "A scenario field: its path ..."
/// reads "a scenario field, its path ...".
fn help_clause(arg: &Arg) -> String {
    help(arg).replacen(": ", ", ", 1)
}

/// What the argument's value is: its help up to the first colon
/// ("a hardware preset" of "A hardware preset: the GPUs ...").
fn what(arg: &Arg) -> String {
    let text = help(arg);
    text.split(": ").next().unwrap_or(&text).to_string()
}

/// `; valid are A, B` where clap lists the argument's values.
fn valid_values(values: &[String]) -> String {
    if values.is_empty() {
        String::new()
    } else {
        format!("; valid are {}", values.join(", "))
    }
}

fn possible_values(arg: &Arg) -> Vec<String> {
    arg.get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_string())
        .collect()
}

/// The options a command takes, without clap's own `--help`.
fn options(command: &clap::Command) -> Vec<String> {
    command
        .get_arguments()
        .filter_map(Arg::get_long)
        .map(|l| format!("--{l}"))
        .collect()
}

/// The line that refuses the arguments: it names the argument and what is
/// valid, quoting what was given clipped (`clip_echoes`) so that the line
/// stays short whatever was given.
fn one_line(e: &clap::Error, args: &[OsString]) -> String {
    let root = Cli::command();
    // The command is the first argument: `overlap-lab` itself takes no
    // options but --help and --version, which end the parse.
    let sub = args
        .first()
        .and_then(|a| a.to_str())
        .and_then(|n| root.find_subcommand(n));
    let command = sub.unwrap_or(&root);
    let name = command.get_name();
    let arg = string(e, ContextKind::InvalidArg).unwrap_or_default();
    let value = string(e, ContextKind::InvalidValue).unwrap_or_default();
    let commands = || {
        let names: Vec<&str> = root.get_subcommands().map(|c| c.get_name()).collect();
        names.join(", ")
    };
    let did_you_mean = |kind| {
        let suggested = strings(e, kind);
        match suggested.first() {
            Some(s) => format!("; did you mean {s}?"),
            None => String::new(),
        }
    };
    let line = match e.kind() {
        ErrorKind::MissingSubcommand => format!(
            "no command given: valid are {}; `overlap-lab help` shows the usage",
            commands()
        ),
        ErrorKind::InvalidSubcommand => format!(
            "unknown command {}: valid are {}{}",
            quoted(string(e, ContextKind::InvalidSubcommand).unwrap_or_default()),
            commands(),
            did_you_mean(ContextKind::SuggestedSubcommand)
        ),
        ErrorKind::UnknownArgument if arg.starts_with('-') && arg != "-" => {
            unknown_option(e, &root, command, arg)
        }
        // An operand more than the command reads.
        ErrorKind::UnknownArgument => match command.get_positionals().next() {
            Some(p) => format!(
                "{name} reads one {}; {} is one too many",
                short_name(&p.to_string()),
                quoted(arg)
            ),
            None => format!("{name} takes no FILE; {} was given", quoted(arg)),
        },
        ErrorKind::MissingRequiredArgument => {
            let missing: Vec<String> = strings(e, ContextKind::InvalidArg)
                .iter()
                .map(|shown| match find_arg(command, shown) {
                    Some(a) if a.is_positional() => format!(
                        "a {}: {}{}",
                        short_name(shown),
                        help(a),
                        valid_values(&possible_values(a))
                    ),
                    Some(a) => format!("{}: {}", short_name(shown), help_clause(a)),
                    None => short_name(shown),
                })
                .collect();
            format!("{name} needs {}", missing.join("; and "))
        }
        ErrorKind::InvalidValue => {
            let valid = valid_values(&strings(e, ContextKind::ValidValue));
            let taken = find_arg(command, arg).map(what).unwrap_or_default();
            if value.is_empty() {
                format!("{} needs {taken}{valid}", short_name(arg))
            } else {
                format!(
                    "{} {}: not {taken}{valid}{}",
                    short_name(arg),
                    quoted(value),
                    did_you_mean(ContextKind::SuggestedValue)
                )
            }
        }
        ErrorKind::ValueValidation => {
            let why = std::error::Error::source(e).map_or_else(String::new, |s| s.to_string());
            let taken = find_arg(command, arg).map(help_clause).unwrap_or_default();
            format!(
                "{} {}: {why}; valid is {taken}",
                short_name(arg),
                quoted(value)
            )
        }
        ErrorKind::ArgumentConflict => {
            let prior = string(e, ContextKind::PriorArg).unwrap_or_default();
            if short_name(prior) == short_name(arg) {
                format!("{} is given twice", short_name(arg))
            } else {
                // In the order `help` lists them, whichever came first.
                let mut both = [short_name(prior), short_name(arg)];
                let listed = |n: &String| options(command).iter().position(|o| o == n);
                both.sort_by_key(listed);
                format!("{name} takes {} or {}, not both", both[0], both[1])
            }
        }
        ErrorKind::TooManyValues => format!(
            "{} takes no value; {} was given",
            short_name(arg),
            quoted(value)
        ),
        ErrorKind::InvalidUtf8 => {
            let given = args
                .iter()
                .find(|a| a.to_str().is_none())
                .map(|a| a.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!(
                "{}: not UTF-8 text; only a file or directory name may be",
                quoted(&given)
            )
        }
        // Kinds this grammar does not produce: clap's own first line.
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            first.trim_start_matches("error: ").to_string()
        }
    };
    clip_echoes(&line)
}

/// `--x` that the command does not take: the option it resembles, the
/// commands that take it, or the command's options.
fn unknown_option(
    e: &clap::Error,
    root: &clap::Command,
    command: &clap::Command,
    given: &str,
) -> String {
    let name = command.get_name();
    let at_root = std::ptr::eq(command, root);
    let valid = if at_root {
        vec!["--help".to_string(), "--version".to_string()]
    } else {
        options(command)
    };
    let option = given.split('=').next().unwrap_or(given);
    let elsewhere: Vec<&str> = root
        .get_subcommands()
        .filter(|c| options(c).iter().any(|o| o == option))
        .map(|c| c.get_name())
        .collect();
    let hint = if let Some(s) = string(e, ContextKind::SuggestedArg) {
        format!(" (did you mean {s}?)")
    } else if !elsewhere.is_empty() {
        format!(" (it belongs to {})", elsewhere.join(", "))
    } else if valid.is_empty() {
        String::new()
    } else {
        format!("; valid are {}", valid.join(", "))
    };
    let takes = if valid.is_empty() {
        format!("{name} takes no options")
    } else {
        format!("not an option of {name}")
    };
    let operand = if at_root {
        ""
    } else {
        "; a file whose name starts with - is given after --"
    };
    format!("{}: {takes}{hint}{operand}", quoted(given))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(list: &[&str]) -> String {
        let args: Vec<OsString> = list.iter().map(OsString::from).collect();
        match parse(&args) {
            Parsed::Refuse(line) => line,
            Parsed::Run(cli) => panic!("{list:?} runs {cli:?}"),
            Parsed::Print(text) => panic!("{list:?} prints {text}"),
        }
    }

    #[test]
    fn misuse_is_refused_with_one_line() {
        for (list, needle) in [
            (&[][..], "no command given: valid are simulate, link"),
            (&["frobnicate"][..], "unknown command \"frobnicate\""),
            (&["simulte"][..], "did you mean simulate?"),
            (&["simulate"][..], "simulate needs a FILE: scenario JSON"),
            (&["simulate", "a", "b"][..], "one too many"),
            (&["simulate", "--jsn", "a"][..], "not an option of simulate"),
            (&["simulate", "--jsn", "a"][..], "did you mean --json?"),
            (&["simulate", "--preset", "x", "a"][..], "belongs to link"),
            (&["simulate", "--json", "--json", "a"][..], "--json is given twice"),
            (&["simulate", "--json=1", "a"][..], "--json takes no value"),
            (&["link", "--preset"][..], "--preset needs a preset name"),
            (&["link", "--preset="][..], "--preset needs a preset name"),
            (
                &["link", "--preset", "a", "--preset", "b", "f"][..],
                "--preset is given twice",
            ),
            (&["link", "--json", "-"][..], "belongs to simulate"),
            (&["presets", "extra"][..], "presets takes no FILE"),
            (&["published", "--json"][..], "published takes no options"),
            (&["import"][..], "import needs a PATH"),
            (&["import", "--json"][..], "import needs a PATH"),
            (&["import", "-"][..], "not standard input"),
            (&["import", "--scenario"][..], "--scenario needs a scenario FILE"),
            (&["trace", "--kineto"][..], "--kineto needs a directory"),
            (&["busbw", "--nodes", "0"][..], "valid is a number of nodes, 1 or more"),
            (
                &["busbw", "--hardware", "tpu"][..],
                "--hardware \"tpu\": not a hardware preset; valid are dgx2-v100, dgx-a100, dgx-h100",
            ),
            (
                &["busbw", "--collective", "broadcast"][..],
                "not a collective; valid are all_reduce, all_gather, reduce_scatter, all_to_all",
            ),
            (&["sweep", "f", "--values", "1"][..], "sweep needs --field: a scenario field"),
            (&["sweep", "f", "--field", "x"][..], "sweep needs --values or --range"),
            (
                &["sweep", "f", "--field", "x", "--values", "1", "--range", "1:2"][..],
                "sweep takes --values or --range, not both",
            ),
            (
                &["sweep", "f", "--field", "x", "--range", "1:2", "--json", "--csv"][..],
                "sweep takes --json or --csv, not both",
            ),
            (&["completions"][..], "valid are bash, elvish, fish, powershell, zsh"),
            (&["completions", "tcsh"][..], "SHELL \"tcsh\": not a shell"),
            (&["--frobnicate"][..], "valid are --help, --version"),
        ] {
            let line = refusal(list);
            assert!(line.contains(needle), "{list:?}: {line}");
            assert!(!line.contains('\n'), "{list:?}: {line}");
        }
    }

    #[test]
    fn a_long_or_multi_line_argument_is_quoted_clipped() {
        let long = format!("{}\n{}", "z".repeat(10_000), "z".repeat(10));
        for list in [
            &["simulate", "a", &long][..],
            &[&long],
            &["busbw", "--collective", &long],
            &["simulate", &format!("--{long}")],
        ] {
            let line = refusal(list);
            assert!(line.len() < 300 && !line.contains('\n'), "{line}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn an_option_value_that_is_not_utf8_is_refused_naming_it() {
        use std::os::unix::ffi::OsStrExt;
        let args: Vec<OsString> = ["link", "--preset"]
            .iter()
            .map(OsString::from)
            .chain([std::ffi::OsStr::from_bytes(b"x\xff").to_os_string()])
            .collect();
        let Parsed::Refuse(line) = parse(&args) else {
            panic!()
        };
        assert!(line.contains("\"x\u{fffd}\": not UTF-8"), "{line}");
    }

    #[test]
    fn help_and_the_version_are_printed() {
        for list in [&["help"][..], &["--help"], &["help", "sweep"], &["-V"]] {
            let args: Vec<OsString> = list.iter().map(OsString::from).collect();
            assert!(matches!(parse(&args), Parsed::Print(_)), "{list:?}");
        }
    }
}
