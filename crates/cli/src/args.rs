//! The command line's grammar: which options each command takes, and a
//! strict reading of the arguments against it. Every misuse is refused with
//! one line that says what was expected; nothing is silently dropped or
//! taken for a file name.

use overlap_core::scenario::clip_echoes;

/// One command: its name, the options it takes and whether it reads a FILE.
pub struct CommandSpec {
    pub name: &'static str,
    /// Options without a value, such as `--json`.
    pub flags: &'static [&'static str],
    /// Options followed by a value (`--preset ID` or `--preset=ID`), each
    /// with a word that says what the value is.
    pub valued: &'static [(&'static str, &'static str)],
    /// Whether the command reads exactly one FILE operand.
    pub reads_file: bool,
}

/// Every command, in the order the usage lists them.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "simulate",
        flags: &["--json"],
        valued: &[],
        reads_file: true,
    },
    CommandSpec {
        name: "link",
        flags: &[],
        valued: &[("--preset", "a preset name")],
        reads_file: true,
    },
    CommandSpec {
        name: "trace",
        flags: &[],
        valued: &[("--kineto", "a directory")],
        reads_file: true,
    },
    CommandSpec {
        name: "import",
        flags: &["--json"],
        valued: &[("--scenario", "a scenario FILE")],
        reads_file: false,
    },
    CommandSpec {
        name: "presets",
        flags: &[],
        valued: &[],
        reads_file: false,
    },
    CommandSpec {
        name: "fields",
        flags: &[],
        valued: &[],
        reads_file: false,
    },
    CommandSpec {
        name: "busbw",
        flags: &[],
        valued: &[
            ("--hardware", "a hardware preset"),
            ("--nodes", "a number of nodes"),
            ("--collective", "a collective"),
        ],
        reads_file: false,
    },
    CommandSpec {
        name: "sweep",
        flags: &["--json", "--csv"],
        valued: &[
            ("--field", "a field path"),
            ("--values", "a comma-separated list"),
            ("--range", "MIN:MAX[:STEP]"),
        ],
        reads_file: true,
    },
    CommandSpec {
        name: "published",
        flags: &[],
        valued: &[],
        reads_file: false,
    },
    CommandSpec {
        name: "help",
        flags: &[],
        valued: &[],
        reads_file: false,
    },
];

/// The arguments of one command, read against its [`CommandSpec`].
#[derive(Debug, Default, PartialEq)]
pub struct Parsed {
    pub command: &'static str,
    flags: Vec<&'static str>,
    values: Vec<(&'static str, String)>,
    /// Where the FILE operand is in the arguments given to [`parse`], for
    /// commands that read one: the caller opens it by its name as given,
    /// which need not be UTF-8.
    pub file_index: Option<usize>,
    /// Where the PATH operands of `import` are in the arguments, in order.
    pub path_indices: Vec<usize>,
    /// `--help` or `-h` was given: print the usage and nothing else.
    pub help: bool,
}

impl Parsed {
    /// Whether the flag was given.
    pub fn flag(&self, name: &str) -> bool {
        self.flags.contains(&name)
    }

    /// The value given to a valued option.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// An argument as an error line quotes it: clipped, on one line.
fn quoted(arg: &str) -> String {
    clip_echoes(&format!("{arg:?}"))
}

fn command_names() -> String {
    let names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
    names.join(", ")
}

/// Reads `args` (without the program name). `--` ends the options, so that
/// a file named like an option can still be given; `-` is standard input.
pub fn parse(args: &[String]) -> Result<Parsed, String> {
    let Some((command, rest)) = args.split_first() else {
        return Err(format!(
            "no command given: valid are {}; `overlap-lab help` shows the usage",
            command_names()
        ));
    };
    if command == "--help" || command == "-h" {
        return Ok(Parsed {
            command: "help",
            help: true,
            ..Parsed::default()
        });
    }
    let spec = COMMANDS.iter().find(|c| c.name == command).ok_or_else(|| {
        format!(
            "unknown command {}: valid are {}",
            quoted(command),
            command_names()
        )
    })?;
    let mut parsed = Parsed {
        command: spec.name,
        ..Parsed::default()
    };
    // Operands with their index in `args`.
    let mut operands: Vec<(usize, &String)> = Vec::new();
    let mut options_ended = false;
    let mut i = 0;
    while i < rest.len() {
        let arg = &rest[i];
        i += 1;
        if options_ended || arg == "-" || !arg.starts_with('-') {
            operands.push((i, arg));
            continue;
        }
        if arg == "--" {
            options_ended = true;
            continue;
        }
        if arg == "--help" || arg == "-h" {
            parsed.help = true;
            continue;
        }
        let (name, inline_value) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (arg.as_str(), None),
        };
        if let Some(&flag) = spec.flags.iter().find(|f| **f == name) {
            if inline_value.is_some() {
                return Err(format!("{flag} takes no value"));
            }
            if parsed.flag(flag) {
                return Err(format!("{flag} is given twice"));
            }
            parsed.flags.push(flag);
        } else if let Some(&(option, what)) = spec.valued.iter().find(|(o, _)| *o == name) {
            let value = match inline_value {
                Some(v) => v.to_string(),
                None => {
                    let v = rest
                        .get(i)
                        .ok_or_else(|| format!("{option} needs {what}"))?;
                    i += 1;
                    v.clone()
                }
            };
            if value.is_empty() {
                return Err(format!("{option} needs {what}"));
            }
            if parsed.value(option).is_some() {
                return Err(format!("{option} is given twice"));
            }
            parsed.values.push((option, value));
        } else {
            return Err(unknown_option(spec, arg));
        }
    }
    if parsed.help {
        return Ok(parsed);
    }
    // `import` reads one or more trace files or folders.
    if spec.name == "import" {
        if operands.is_empty() {
            return Err(
                "import needs a PATH: a trace file (.json, .json.gz) or a folder of them"
                    .to_string(),
            );
        }
        if let Some((_, dash)) = operands.iter().find(|(_, a)| a.as_str() == "-") {
            return Err(format!(
                "import reads trace files, not standard input: {} is not a PATH",
                quoted(dash)
            ));
        }
        parsed.path_indices = operands.iter().map(|(i, _)| *i).collect();
        return Ok(parsed);
    }
    match (spec.reads_file, operands.as_slice()) {
        (true, [(index, _)]) => parsed.file_index = Some(*index),
        (true, []) => {
            return Err(format!(
                "{} needs a FILE (scenario JSON, - for standard input, or preset:NAME)",
                spec.name
            ))
        }
        (true, [_, (_, extra), ..]) => {
            return Err(format!(
                "{} reads one FILE; {} is one too many",
                spec.name,
                quoted(extra)
            ))
        }
        (false, []) => {}
        (false, [(_, extra), ..]) => {
            return Err(format!(
                "{} takes no FILE; {} was given",
                spec.name,
                quoted(extra)
            ))
        }
    }
    Ok(parsed)
}

fn unknown_option(spec: &CommandSpec, arg: &str) -> String {
    let mut valid: Vec<&str> = spec.flags.to_vec();
    valid.extend(spec.valued.iter().map(|(o, _)| *o));
    let elsewhere: Vec<&str> = COMMANDS
        .iter()
        .filter(|c| {
            let name = arg.split('=').next().unwrap_or(arg);
            c.flags.contains(&name) || c.valued.iter().any(|(o, _)| *o == name)
        })
        .map(|c| c.name)
        .collect();
    let hint = if !elsewhere.is_empty() {
        format!(" (it belongs to {})", elsewhere.join(", "))
    } else if valid.is_empty() {
        String::new()
    } else {
        format!("; valid are {}", valid.join(", "))
    };
    let takes = if valid.is_empty() {
        format!("{} takes no options", spec.name)
    } else {
        format!("not an option of {}", spec.name)
    };
    format!(
        "{}: {takes}{hint}; a file whose name starts with - is given after --",
        quoted(arg)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_preset_value_equal_to_the_file_name_keeps_the_file() {
        let p = parse(&args(&["link", "--preset", "didactic", "didactic"])).unwrap();
        assert_eq!(p.value("--preset"), Some("didactic"));
        assert_eq!(p.file_index, Some(3));
        let p = parse(&args(&["link", "didactic", "--preset=didactic"])).unwrap();
        assert_eq!(p.value("--preset"), Some("didactic"));
        assert_eq!(p.file_index, Some(1));
    }

    #[test]
    fn import_reads_every_path() {
        let p = parse(&args(&[
            "import",
            "a",
            "--json",
            "b",
            "--scenario",
            "s.json",
        ]))
        .unwrap();
        assert_eq!(p.path_indices, vec![1, 3]);
        assert!(p.flag("--json"));
        assert_eq!(p.value("--scenario"), Some("s.json"));
    }

    #[test]
    fn a_double_dash_ends_the_options() {
        let p = parse(&args(&["simulate", "--json", "--", "--json"])).unwrap();
        assert!(p.flag("--json"));
        assert_eq!(p.file_index, Some(3));
    }

    #[test]
    fn misuse_is_refused_with_one_line() {
        for (list, needle) in [
            (&[][..], "no command given"),
            (&["frobnicate"][..], "unknown command"),
            (&["simulate"][..], "needs a FILE"),
            (&["simulate", "a", "b"][..], "one too many"),
            (&["simulate", "--jsn", "a"][..], "not an option of simulate"),
            (&["simulate", "--preset", "x", "a"][..], "belongs to link"),
            (&["simulate", "--json", "--json", "a"][..], "given twice"),
            (&["simulate", "--json=1", "a"][..], "takes no value"),
            (&["link", "--preset"][..], "--preset needs a preset name"),
            (&["link", "--preset="][..], "--preset needs a preset name"),
            (
                &["link", "--preset", "a", "--preset", "b", "f"][..],
                "given twice",
            ),
            (&["link", "--json", "-"][..], "belongs to simulate"),
            (&["presets", "extra"][..], "takes no FILE"),
            (&["published", "--json"][..], "takes no options"),
            (&["import"][..], "import needs a PATH"),
            (&["import", "--json"][..], "import needs a PATH"),
            (&["import", "-"][..], "not standard input"),
            (
                &["import", "--scenario"][..],
                "--scenario needs a scenario FILE",
            ),
        ] {
            let e = parse(&args(list)).expect_err(&format!("{list:?}"));
            assert!(e.contains(needle), "{list:?}: {e}");
            assert!(!e.contains('\n'), "{list:?}: {e}");
        }
    }

    #[test]
    fn a_long_or_multi_line_argument_is_quoted_clipped() {
        let long = format!("{}\n{}", "z".repeat(10_000), "z".repeat(10));
        let e = parse(&args(&["simulate", "a", &long])).unwrap_err();
        assert!(e.len() < 300 && !e.contains('\n'), "{e}");
        let e = parse(&[long]).unwrap_err();
        assert!(e.len() < 300 && !e.contains('\n'), "{e}");
    }

    #[test]
    fn help_is_read_anywhere_before_a_double_dash() {
        assert!(parse(&args(&["--help"])).unwrap().help);
        assert!(parse(&args(&["simulate", "-h"])).unwrap().help);
        assert!(!parse(&args(&["simulate", "--", "-h"])).unwrap().help);
    }
}
