//! `overlap.ep`: which of the frameworks' expert all-to-all overlaps a
//! scenario runs (model.md section 4c, interface.md round 4). `false`
//! runs none; `true` the schedule's natural form (`workload::build::schedule::merged_passes::ep_form`);
//! a list names Megatron-LM's options one by one. Old links wrote a switch
//! (`true`/`false`, `1`/`0`), which keeps its place in both forms.

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

/// Megatron-LM's EP overlap options, each a flag of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EpOptions {
    /// `moe_shared_expert_overlap`: the shared experts on another stream
    /// beside the dispatch and combine of the same micro-batch.
    pub shared_expert: bool,
    /// `overlap_dispatch_backward_with_experts_wgrad`: the experts' weight
    /// gradients delayed under the dispatch's backward.
    pub dispatch_wgrad: bool,
    /// `overlap_moe_expert_parallel_comm` (with `delay_wgrad_compute`): a
    /// forward and another micro-batch's backward merged layer pair by
    /// layer pair (combined 1F1B; DualPipe's chunk pairs on DualPipeV).
    pub combined_1f1b: bool,
}

/// The value of `overlap.ep`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EpOverlap {
    /// No overlap: each all-to-all blocks the compute stream where it is
    /// launched.
    #[default]
    Off,
    /// `true`: the schedule's natural form.
    Natural,
    /// A list of Megatron-LM's options.
    Options(EpOptions),
}

/// The options' names, in the order a list writes them.
pub const EP_OPTION_NAMES: [&str; 3] = ["shared_expert", "dispatch_wgrad", "combined_1f1b"];

impl From<bool> for EpOverlap {
    fn from(on: bool) -> Self {
        if on {
            EpOverlap::Natural
        } else {
            EpOverlap::Off
        }
    }
}

impl EpOptions {
    /// The options named in `names`; an unknown name is returned as the error.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut o = EpOptions::default();
        for name in names {
            match name {
                "shared_expert" => o.shared_expert = true,
                "dispatch_wgrad" => o.dispatch_wgrad = true,
                "combined_1f1b" => o.combined_1f1b = true,
                other => return Err(other.to_string()),
            }
        }
        Ok(o)
    }

    /// The names of the options set, in `EP_OPTION_NAMES` order.
    pub fn names(self) -> Vec<&'static str> {
        let set = [self.shared_expert, self.dispatch_wgrad, self.combined_1f1b];
        EP_OPTION_NAMES
            .iter()
            .zip(set)
            .filter(|(_, on)| *on)
            .map(|(n, _)| *n)
            .collect()
    }
}

impl EpOverlap {
    /// Whether any overlap is asked for.
    pub fn is_on(self) -> bool {
        self != EpOverlap::Off
    }

    /// A list of names as the value it stands for: the empty list is off.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let o = EpOptions::from_names(names)?;
        Ok(if o == EpOptions::default() {
            EpOverlap::Off
        } else {
            EpOverlap::Options(o)
        })
    }
}

impl Serialize for EpOverlap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            EpOverlap::Off => s.serialize_bool(false),
            EpOverlap::Natural => s.serialize_bool(true),
            EpOverlap::Options(o) => {
                let names = o.names();
                let mut seq = s.serialize_seq(Some(names.len()))?;
                for n in names {
                    seq.serialize_element(n)?;
                }
                seq.end()
            }
        }
    }
}

struct EpOverlapVisitor;

impl<'de> Visitor<'de> for EpOverlapVisitor {
    type Value = EpOverlap;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "false, true, or a list of {}",
            EP_OPTION_NAMES.map(|n| format!("\"{n}\"")).join(", ")
        )
    }

    fn visit_bool<E: de::Error>(self, on: bool) -> Result<EpOverlap, E> {
        Ok(on.into())
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<EpOverlap, E> {
        EpOverlap::from_names([name])
            .map_err(|bad| E::invalid_value(de::Unexpected::Str(&bad), &self))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<EpOverlap, A::Error> {
        let mut names = Vec::new();
        while let Some(name) = seq.next_element::<String>()? {
            names.push(name);
        }
        EpOverlap::from_names(names.iter().map(String::as_str))
            .map_err(|bad| de::Error::invalid_value(de::Unexpected::Str(&bad), &self))
    }
}

impl<'de> Deserialize<'de> for EpOverlap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(EpOverlapVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_and_lists_read_and_write_back() {
        for (json, value) in [
            ("false", EpOverlap::Off),
            ("true", EpOverlap::Natural),
            ("[]", EpOverlap::Off),
            (
                r#"["combined_1f1b"]"#,
                EpOverlap::Options(EpOptions {
                    combined_1f1b: true,
                    ..Default::default()
                }),
            ),
            (
                r#"["dispatch_wgrad","shared_expert"]"#,
                EpOverlap::Options(EpOptions {
                    shared_expert: true,
                    dispatch_wgrad: true,
                    ..Default::default()
                }),
            ),
        ] {
            let read: EpOverlap = serde_json::from_str(json).unwrap();
            assert_eq!(read, value, "{json}");
            let again: EpOverlap =
                serde_json::from_value(serde_json::to_value(read).unwrap()).unwrap();
            assert_eq!(again, value);
        }
        let bad = serde_json::from_str::<EpOverlap>(r#"["overlap_all"]"#).unwrap_err();
        assert!(bad.to_string().contains("combined_1f1b"), "{bad}");
    }
}
