//! The user's own classification rules (`--classify PATTERN=KIND[:AXIS]`),
//! read before the built-in table ([`crate::classify::RULES`]): a trace's
//! kernels are named by whoever wrote them, so a reader whose library the
//! table does not know names its kernels here, and one whose kernel the
//! table misreads overrides it (`compute` takes a name out of
//! communication).
//!
//! PATTERN is a regular expression searched for in the kernel's name (the
//! demangled name as the trace writes it); KIND one of [`Kind::ALL`]; AXIS
//! one of the model's axes, for communication only (without it the axis
//! comes from the process group, as for NCCL's kernels).

use std::fmt;
use std::sync::Arc;

use overlap_core::Axis;

use crate::classify::{classify, Class, Family, GpuCat, Op};

/// What a rule says a kernel is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// All-reduce.
    AllReduce,
    /// All-gather.
    AllGather,
    /// Reduce-scatter.
    ReduceScatter,
    /// All-to-all.
    AllToAll,
    /// Point-to-point send and receive.
    SendRecv,
    /// A local memory copy: neither compute nor communication.
    Memcpy,
    /// Compute.
    Compute,
}

impl Kind {
    /// Every kind, in the order messages list them.
    pub const ALL: [Kind; 7] = [
        Kind::AllReduce,
        Kind::AllGather,
        Kind::ReduceScatter,
        Kind::AllToAll,
        Kind::SendRecv,
        Kind::Memcpy,
        Kind::Compute,
    ];

    /// The name a rule spells it with.
    pub fn name(self) -> &'static str {
        match self {
            Kind::AllReduce => "all_reduce",
            Kind::AllGather => "all_gather",
            Kind::ReduceScatter => "reduce_scatter",
            Kind::AllToAll => "all_to_all",
            Kind::SendRecv => "send_recv",
            Kind::Memcpy => "memcpy",
            Kind::Compute => "compute",
        }
    }

    /// The communication operation it stands for, if it is communication.
    pub fn op(self) -> Option<Op> {
        match self {
            Kind::AllReduce => Some(Op::AllReduce),
            Kind::AllGather => Some(Op::AllGather),
            Kind::ReduceScatter => Some(Op::ReduceScatter),
            Kind::AllToAll => Some(Op::AllToAll),
            Kind::SendRecv => Some(Op::SendRecv),
            Kind::Memcpy | Kind::Compute => None,
        }
    }
}

/// Whether a rule's pattern matches a kernel's name.
type Matcher = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// One rule: a pattern and what a kernel it matches is.
#[derive(Clone)]
pub struct UserRule {
    /// The rule as the user wrote it.
    pub text: String,
    /// What a matching kernel is.
    pub kind: Kind,
    /// Its axis, for communication (else from the process group).
    pub axis: Option<Axis>,
    matches: Matcher,
}

impl fmt::Debug for UserRule {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("UserRule")
            .field("text", &self.text)
            .field("kind", &self.kind)
            .field("axis", &self.axis)
            .finish()
    }
}

/// The valid kinds, as a message lists them.
pub fn kinds() -> String {
    Kind::ALL.map(Kind::name).join(", ")
}

/// The valid axes, as a message lists them.
pub fn axes() -> String {
    Axis::NAMES.join(", ")
}

/// A rule is cut here where a message quotes it.
const SHOWN_RULE_CHARS: usize = 80;

impl UserRule {
    /// Reads `PATTERN=KIND[:AXIS]`. The pattern may itself hold `=` and
    /// `:`: the rule is cut at its last `=`. A refusal is one line saying
    /// what is wrong and what is valid; the caller names the rule (the
    /// command line quotes it, [`parse_rules`] gives its file and line).
    pub fn parse(text: &str) -> Result<UserRule, String> {
        let refuse = |why: String| Err(why);
        let Some((pattern, what)) = text.rsplit_once('=') else {
            return refuse(format!(
                "not PATTERN=KIND[:AXIS] (KIND one of {}, AXIS one of {})",
                kinds(),
                axes()
            ));
        };
        if pattern.is_empty() {
            return refuse(
                "the pattern before = is empty: give a regular expression on the kernel's name"
                    .into(),
            );
        }
        let (kind_text, axis_text) = match what.split_once(':') {
            Some((k, a)) => (k.trim(), Some(a.trim())),
            None => (what.trim(), None),
        };
        let Some(kind) = Kind::ALL.into_iter().find(|k| k.name() == kind_text) else {
            return refuse(format!("kind {kind_text:?} is not one of {}", kinds()));
        };
        let axis = match axis_text {
            None => None,
            Some(a) => match Axis::from_name(a) {
                Some(axis) if kind.op().is_some() => Some(axis),
                Some(_) => {
                    return refuse(format!(
                        "{} takes no axis: an axis is for communication ({})",
                        kind.name(),
                        Kind::ALL
                            .iter()
                            .filter(|k| k.op().is_some())
                            .map(|k| k.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                }
                None => return refuse(format!("axis {a:?} is not one of {}", axes())),
            },
        };
        let regex = match regex::Regex::new(pattern) {
            Ok(r) => r,
            Err(e) => {
                let why = e.to_string();
                // regex's own message is several lines; the last says what is wrong.
                let last = why
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("");
                let last = last.trim().trim_start_matches("error: ");
                return refuse(format!("the pattern is not a regular expression ({last})"));
            }
        };
        Ok(UserRule {
            text: text.to_string(),
            kind,
            axis,
            matches: Arc::new(move |name| regex.is_match(name)),
        })
    }

    /// A rule whose pattern is a function of the name (for callers with
    /// their own matching, and tests).
    pub fn with_matcher(
        text: &str,
        kind: Kind,
        axis: Option<Axis>,
        matches: impl Fn(&str) -> bool + Send + Sync + 'static,
    ) -> UserRule {
        UserRule {
            text: text.to_string(),
            kind,
            axis,
            matches: Arc::new(matches),
        }
    }

    /// Whether the rule matches the kernel's name.
    pub fn matches(&self, name: &str) -> bool {
        (self.matches)(name)
    }

    /// What a kernel this rule matches is.
    pub fn class(&self) -> Class {
        match self.kind.op() {
            Some(op) => Class::Comm {
                family: Family::USER,
                op,
                axis: self.axis,
            },
            None if self.kind == Kind::Memcpy => Class::Memcpy,
            None => Class::Compute,
        }
    }
}

/// Reads rules one a line (`--classify-file`): blank lines and lines
/// starting with `#` are skipped; a refusal names the line.
pub fn parse_rules(text: &str, shown: &str) -> Result<Vec<UserRule>, String> {
    let mut rules = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let rule = UserRule::parse(line).map_err(|e| {
            let text: String = line.chars().take(SHOWN_RULE_CHARS).collect();
            format!("{shown} line {}: rule {text:?}: {e}", i + 1)
        })?;
        rules.push(rule);
    }
    Ok(rules)
}

/// The classification an import uses: the user's rules, first match
/// deciding, then the built-in table.
#[derive(Clone, Debug, Default)]
pub struct Classifier {
    /// The user's rules, in the order given.
    pub rules: Vec<UserRule>,
}

impl Classifier {
    /// The built-in table with `rules` before it.
    pub fn new(rules: Vec<UserRule>) -> Self {
        Self { rules }
    }

    /// What a GPU event is, from its category and name.
    pub fn classify(&self, cat: GpuCat, name: &str) -> Class {
        match self.rules.iter().find(|r| r.matches(name)) {
            Some(rule) => rule.class(),
            None => classify(cat, name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_their_kind_and_axis_and_cut_at_the_last_equals() {
        let r = UserRule::parse("my_a2a=all_to_all:ep").unwrap();
        assert_eq!((r.kind, r.axis), (Kind::AllToAll, Some(Axis::Ep)));
        assert!(r.matches("void my_a2a_kernel<4>()"));
        let r = UserRule::parse("a=b::c=compute").unwrap();
        assert_eq!(r.kind, Kind::Compute);
        assert!(r.matches("a=b::c"));
        assert_eq!(UserRule::parse("x=memcpy").unwrap().class(), Class::Memcpy);
    }

    #[test]
    fn bad_rules_name_the_rule_and_what_is_valid() {
        for (text, needle) in [
            ("nothing", "not PATTERN=KIND[:AXIS]"),
            ("=compute", "pattern before = is empty"),
            ("x=alltoall", "is not one of all_reduce, all_gather"),
            (
                "x=all_reduce:zz",
                "axis \"zz\" is not one of tp, pp, dp, ep, cp",
            ),
            ("x=compute:tp", "compute takes no axis"),
            ("(x=all_reduce", "not a regular expression"),
        ] {
            let e = UserRule::parse(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = parse_rules("# mine\n\nx=compute\ny=nope\n", "rules.txt").unwrap_err();
        assert!(e.starts_with("rules.txt line 4: rule \"y=nope\""), "{e}");
    }
}
