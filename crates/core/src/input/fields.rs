//! The field table as users of the core read it: every scenario field with
//! its path, share-link key, type and valid range, default, label, unit and
//! slider range (declared once, in `input::table`), and the reference
//! `overlap-lab fields` prints. The tests below fail if a `ScenarioInput`
//! field has no row, or if a row does not round-trip through a share link.

use serde_json::Value;

pub use crate::input::field::shown;
pub use crate::input::fill::complete_input;
pub use crate::input::kind::{Choice, DefaultFrom, FieldValue, Kind};
pub use crate::input::table::{by_key, field, find, Field, FIELDS};

use crate::input::table::ScenarioInput;
use crate::input::validate;
use crate::model::scenario::WorkloadKind;

impl Field {
    /// The value the field takes when the scenario leaves it out, for
    /// [`DefaultFrom::Fixed`] fields (the transformer's for its fields, the
    /// micro-benchmark's for `m`, `n`, `k`); the default hardware preset's for
    /// [`DefaultFrom::HardwarePreset`]; the transformer's for the rest.
    pub fn default_value(&self) -> Option<Value> {
        let transformer = validate::resolve(&ScenarioInput::default()).ok()?;
        (self.resolved)(&transformer).or_else(|| {
            let mut i = ScenarioInput::default();
            // One TP group on one node, as the micro-benchmark runs.
            i.workload.kind = Some(WorkloadKind::MatmulAllreduce);
            i.hardware.nodes = Some(1);
            (self.resolved)(&validate::resolve(&i).ok()?).or_else(|| {
                // The collective workload's own fields.
                let mut i = ScenarioInput::default();
                i.workload.kind = Some(WorkloadKind::Collective);
                (self.resolved)(&validate::resolve(&i).ok()?)
            })
        })
    }
}

/// The first dotted field path (`workload.moe.experts`) `text` names, if
/// any: text for students names controls by their labels, and the tests of
/// the page's notes and the tour's sentences check it with this.
pub fn field_path_in(text: &str) -> Option<&'static str> {
    FIELDS
        .iter()
        .map(|f| f.path)
        .filter(|p| p.contains('.'))
        .find(|p| text.contains(p))
}

/// Every field as a Markdown table: path, link key, type and range,
/// default, and the page's label (`overlap-lab fields`).
pub fn table() -> String {
    let mut out = String::from(
        "| field | link key | type and range | default | label |\n|---|---|---|---|---|\n",
    );
    for f in FIELDS {
        let default = match (f.default, f.default_value()) {
            (DefaultFrom::HardwarePreset, _) => "from the hardware preset".to_string(),
            (DefaultFrom::WorkloadKind, Some(v)) => {
                format!(
                    "{} (transformer); one TP group for matmul_allreduce",
                    Field::text(&v)
                )
            }
            (DefaultFrom::Absent, _) => "absent".to_string(),
            (DefaultFrom::Derived(rule), _) => format!("= {rule}"),
            (_, Some(v)) => Field::text(&v),
            (_, None) => String::new(),
        };
        let label = if f.unit.is_empty() {
            f.label.to_string()
        } else {
            format!("{} ({})", f.label, f.unit)
        };
        out += &format!(
            "| `{}` | `{}` | {} | {} | {} |\n",
            f.path,
            f.key,
            f.kind.describe(),
            default,
            label
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::share_link;
    use crate::model::hardware::HardwarePreset;
    use crate::model::scenario::*;

    fn to_json<T: serde::Serialize>(value: &T) -> Value {
        serde_json::to_value(value).unwrap()
    }

    /// Every leaf of a JSON object, as dotted paths.
    fn leaves(prefix: &str, value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    let path = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    leaves(&path, v, out);
                }
            }
            _ => out.push(prefix.to_string()),
        }
    }

    /// An input with every field set: each row's default, through the table.
    fn fully_populated() -> ScenarioInput {
        let mut input = ScenarioInput::default();
        for f in FIELDS {
            let v = match (f.default, f.kind) {
                // A field without a default: its smallest valid value.
                (DefaultFrom::Absent, Kind::Real { min, .. }) => serde_json::json!(min),
                (DefaultFrom::Absent, Kind::Int { min, .. }) => serde_json::json!(min),
                (DefaultFrom::Absent, Kind::Layout) => serde_json::json!(["E t*4", "t*4 L"]),
                _ => f
                    .default_value()
                    .unwrap_or_else(|| panic!("{} has a default", f.path)),
            };
            (f.set)(&mut input, Some(&v)).unwrap();
        }
        input
    }

    #[test]
    fn every_input_field_has_a_row() {
        let json = serde_json::to_value(fully_populated()).unwrap();
        let mut paths = Vec::new();
        leaves("", &json, &mut paths);
        let mut rows: Vec<&str> = FIELDS.iter().map(|f| f.path).collect();
        paths.sort();
        rows.sort();
        assert_eq!(paths, rows);
        // The other way: a struct field missing from the table would not be
        // set above, so serde would not list it. Deserialising an object
        // with every row's path set proves each path is a struct field.
        let back: ScenarioInput = serde_json::from_value(json).unwrap();
        assert_eq!(back, fully_populated());
    }

    #[test]
    fn no_struct_field_is_missing_from_the_table() {
        // serde names the expected fields of a section when an unknown one is
        // given: every one of them must be a row.
        for section in [
            "hardware",
            "workload",
            "parallel",
            "overlap",
            "",
            "workload.moe",
        ] {
            let probe = match section.split_once('.') {
                _ if section.is_empty() => r#"{"zz_unknown": 1}"#.to_string(),
                Some((outer, inner)) => {
                    format!(r#"{{"{outer}": {{"{inner}": {{"zz_unknown": 1}}}}}}"#)
                }
                None => format!(r#"{{"{section}": {{"zz_unknown": 1}}}}"#),
            };
            let message = serde_json::from_str::<ScenarioInput>(&probe)
                .unwrap_err()
                .to_string();
            let expected = message
                .split("expected one of ")
                .nth(1)
                .unwrap_or_else(|| panic!("{message}"));
            for name in expected.split(", ") {
                let name = name.trim_matches(|c: char| c == '`' || c.is_whitespace());
                let name = name.split('`').next().unwrap();
                if section.is_empty() && FIELDS.iter().any(|f| f.section() == name) {
                    continue;
                }
                // An object of fields inside a section, probed on its own.
                let prefix = format!("{section}.{name}.");
                if FIELDS.iter().any(|f| f.path.starts_with(&prefix)) {
                    continue;
                }
                let path = if section.is_empty() {
                    name.to_string()
                } else {
                    format!("{section}.{name}")
                };
                assert!(find(&path).is_some(), "{path} has no row in FIELDS");
            }
        }
    }

    #[test]
    fn every_row_round_trips_through_a_share_link() {
        for f in FIELDS {
            let mut values: Vec<Value> = f
                .choices()
                .iter()
                .map(|c| f.parse_text(c.name).unwrap())
                .collect();
            match f.kind {
                Kind::Int { min, max } => values.extend([min, max].map(Value::from)),
                Kind::Real { min, max } => values.extend([min, max].map(Value::from)),
                Kind::Bool => values.extend([true, false].map(Value::from)),
                Kind::Switches { choices, .. } => {
                    values.extend(choices.iter().map(|c| f.parse_text(c.name).unwrap()))
                }
                Kind::Enum(_) | Kind::IntOf { .. } => {}
                // The default scenario's 8 layers on 2 stages, unevenly and
                // with the loss alone; then one that misses a layer.
                Kind::Layout => values.extend(
                    [
                        vec!["E t*3", "tttt t L"],
                        vec!["Et*8", "L"],
                        vec!["E t*3", "t*4 L"],
                    ]
                    .map(|l| Value::from(l.into_iter().map(Value::from).collect::<Vec<_>>())),
                ),
            }
            for v in values {
                let mut input = ScenarioInput::default();
                // m, n, k apply to the micro-benchmark only.
                if f.path.starts_with("workload.") && matches!(f.name(), "m" | "n" | "k") {
                    input.workload.kind = Some(WorkloadKind::MatmulAllreduce);
                }
                // collective and bytes apply to the collective workload only.
                if f.path.starts_with("workload.") && matches!(f.name(), "collective" | "bytes") {
                    input.workload.kind = Some(WorkloadKind::Collective);
                }
                (f.set)(&mut input, Some(&v)).unwrap();
                let link = format!("v=1&{}={}", f.key, f.link_text(&v));
                let back = share_link::decode(&link, &[]);
                let back_value = (f.get)(&back.input);
                // A link that makes the scenario invalid keeps the preset's value
                // and says so; every other value comes back exactly.
                if back.errors.is_empty() {
                    assert_eq!(back_value.as_ref(), Some(&v), "{link}");
                    let again = share_link::encode(&back.input, None);
                    let twice = share_link::decode(&again, &[]);
                    assert_eq!(twice.input.resolve(), back.input.resolve(), "{again}");
                } else {
                    assert!(
                        back.errors
                            .iter()
                            .any(|e| e.field == f.key || e.field == "scenario"),
                        "{link}: {:?}",
                        back.errors
                    );
                }
            }
        }
    }

    #[test]
    fn a_fully_populated_input_round_trips_through_a_link() {
        let input = complete_input(&ScenarioInput::default().resolve().unwrap());
        let link = share_link::encode(&input, Some("contention"));
        let back = share_link::decode(&link, &[]);
        assert!(back.errors.is_empty(), "{link}: {:?}", back.errors);
        assert_eq!(
            complete_input(&back.input.resolve().unwrap()),
            input,
            "{link}"
        );
    }

    #[test]
    fn every_enum_value_has_a_choice() {
        // The matches are exhaustive: a new variant stops the build here
        // until the table lists it.
        let name = |v: Value| v.as_str().unwrap().to_string();
        let names = |path: &str| -> Vec<String> {
            find(path)
                .unwrap()
                .choices()
                .iter()
                .map(|c| c.name.to_string())
                .collect()
        };
        for p in HardwarePreset::ALL {
            match p {
                HardwarePreset::Dgx2V100 | HardwarePreset::DgxA100 | HardwarePreset::DgxH100 => {}
            }
            assert!(names("hardware.preset").contains(&name(to_json(&p))));
        }
        for k in [
            WorkloadKind::Transformer,
            WorkloadKind::MatmulAllreduce,
            WorkloadKind::Collective,
        ] {
            match k {
                WorkloadKind::Transformer
                | WorkloadKind::MatmulAllreduce
                | WorkloadKind::Collective => {}
            }
            assert!(names("workload.kind").contains(&name(to_json(&k))));
        }
        for c in CollectiveOp::ALL {
            match c {
                CollectiveOp::AllReduce
                | CollectiveOp::AllGather
                | CollectiveOp::ReduceScatter
                | CollectiveOp::AllToAll => {}
            }
            assert!(names("workload.collective").contains(&name(to_json(&c))));
        }
        for m in [Mode::Train, Mode::Inference] {
            match m {
                Mode::Train | Mode::Inference => {}
            }
            assert!(names("workload.mode").contains(&name(to_json(&m))));
        }
        for r in [Recompute::None, Recompute::Selective, Recompute::Full] {
            match r {
                Recompute::None | Recompute::Selective | Recompute::Full => {}
            }
            assert!(names("workload.recompute").contains(&name(to_json(&r))));
        }
        // The match fails to compile when a schedule is added: then add it
        // to `Schedule::ALL` too.
        for s in Schedule::ALL {
            match s {
                Schedule::Gpipe
                | Schedule::OneFOneB
                | Schedule::Interleaved
                | Schedule::ZeroBubble1p
                | Schedule::ZeroBubble2p
                | Schedule::ZeroBubbleV
                | Schedule::DualPipeV => {}
            }
            assert!(names("parallel.schedule").contains(&name(to_json(&s))));
        }
        for i in [Interference::Modelled, Interference::Off] {
            match i {
                Interference::Modelled | Interference::Off => {}
            }
            assert!(names("interference").contains(&name(to_json(&i))));
        }
        for a in [Attention::Materialized, Attention::Flash] {
            match a {
                Attention::Materialized | Attention::Flash => {}
            }
            assert!(names("workload.attention").contains(&name(to_json(&a))));
        }
        for m in [Mlp::Gelu, Mlp::Swiglu] {
            match m {
                Mlp::Gelu | Mlp::Swiglu => {}
            }
            assert!(names("workload.mlp").contains(&name(to_json(&m))));
        }
        for d in [DpSharding::None, DpSharding::Optimizer, DpSharding::Full] {
            match d {
                DpSharding::None | DpSharding::Optimizer | DpSharding::Full => {}
            }
            assert!(names("parallel.dp_sharding").contains(&name(to_json(&d))));
        }
        for g in [GradSync::EveryMicroBatch, GradSync::LastMicroBatch] {
            match g {
                GradSync::EveryMicroBatch | GradSync::LastMicroBatch => {}
            }
            assert!(names("overlap.grad_sync").contains(&name(to_json(&g))));
        }
        for d in [Dispatcher::Alltoall, Dispatcher::Deepep] {
            match d {
                Dispatcher::Alltoall | Dispatcher::Deepep => {}
            }
            assert!(names("workload.moe.dispatcher").contains(&name(to_json(&d))));
        }
        // And every choice is a value serde reads.
        for f in FIELDS {
            for c in f.choices() {
                let mut input = ScenarioInput::default();
                let v = f.parse_text(c.name).unwrap();
                (f.set)(&mut input, Some(&v)).unwrap_or_else(|e| panic!("{}: {e}", f.path));
            }
        }
    }

    #[test]
    fn keys_and_paths_are_unique() {
        for (i, f) in FIELDS.iter().enumerate() {
            for g in &FIELDS[i + 1..] {
                assert_ne!(f.key, g.key);
                assert_ne!(f.path, g.path);
            }
            assert!(f.key != "v" && f.key != "preset", "{} is reserved", f.key);
        }
    }

    #[test]
    fn unreadable_link_values_name_the_valid_range() {
        let tp = find("parallel.tp").unwrap();
        assert_eq!(
            tp.parse_text("banana").unwrap_err(),
            "\"banana\" is not a whole number: valid is 1 to 64"
        );
        let tax = find("sm_tax").unwrap();
        assert_eq!(
            tax.parse_text("lots").unwrap_err(),
            "\"lots\" is not a number: valid is from 0 to 0.9"
        );
        let grad = find("overlap.grad_bytes").unwrap();
        assert_eq!(
            grad.parse_text("two").unwrap_err(),
            "\"two\" is not a gradient width: valid are 1, 2 or 4 bytes"
        );
    }

    #[test]
    fn range_messages_name_the_valid_range() {
        let tp = find("parallel.tp").unwrap();
        assert_eq!(
            tp.check_range(&Value::from(65)).unwrap_err(),
            "65 is out of range: valid is 1 to 64"
        );
        let tax = find("sm_tax").unwrap();
        assert_eq!(
            tax.check_range(&Value::from(0.95)).unwrap_err(),
            "0.95 is out of range: valid is from 0 to 0.9"
        );
        let grad = find("overlap.grad_bytes").unwrap();
        assert_eq!(
            grad.check_range(&Value::from(3)).unwrap_err(),
            "3 is not a gradient width: valid are 1, 2 or 4 bytes"
        );
        assert!(grad.check_range(&Value::from(4)).is_ok());
    }

    #[test]
    fn the_const_lookup_finds_rows() {
        assert_eq!(field("parallel.tp").key, "tp");
        assert_eq!(field("sm_tax").section(), "");
    }
}
