//! `workload.moe.recompute`: the modules Megatron-LM recomputes in its
//! backward instead of keeping their activations (`recompute_modules`,
//! megatron/core/transformer/transformer_config.py:560-580, read under
//! selective granularity, :1943-1962). Each module keeps less memory
//! (`output::memory`) and runs its forward again before its backward
//! (`workload::build::transformer`). A scenario lists them by Megatron's names.

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

/// The modules' names, in the order a list writes them (Megatron's, minus
/// the experimental attention variants' and hyper-connections' modules,
/// which this model has none of).
pub const RECOMPUTE_MODULE_NAMES: [&str; 7] = [
    "core_attn",
    "moe_act",
    "layernorm",
    "mla_up_proj",
    "mlp",
    "moe",
    "shared_experts",
];

/// Which modules are recomputed; none by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RecomputeModules {
    /// The attention core (attention.py:394), as `workload.recompute:
    /// "selective"` recomputes it.
    pub core_attn: bool,
    /// The routed experts' activation function: its output is discarded
    /// and recomputed from the fc1 output (experts.py:269-271, 1019-1032,
    /// output-discarding checkpoint).
    pub moe_act: bool,
    /// The input and pre-MLP LayerNorms: their outputs are discarded and
    /// recomputed (transformer_layer.py:475-527).
    pub layernorm: bool,
    /// Multi-latent attention's up-projections (multi_latent_attention.py:171).
    pub mla_up_proj: bool,
    /// The dense MLP of a layer without experts (transformer_layer.py:528-530).
    pub mlp: bool,
    /// The whole MoE layer, its all-to-alls included: only its input is
    /// kept (moe_layer.py:247-251, 701-716).
    pub moe: bool,
    /// The shared experts (moe_layer.py:252-255, shared_experts.py:158).
    pub shared_experts: bool,
}

impl RecomputeModules {
    fn flags(self) -> [bool; 7] {
        [
            self.core_attn,
            self.moe_act,
            self.layernorm,
            self.mla_up_proj,
            self.mlp,
            self.moe,
            self.shared_experts,
        ]
    }

    /// The modules named in `names`; an unknown name is returned as the error.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut m = RecomputeModules::default();
        for name in names {
            let flag = match name {
                "core_attn" => &mut m.core_attn,
                "moe_act" => &mut m.moe_act,
                "layernorm" => &mut m.layernorm,
                "mla_up_proj" => &mut m.mla_up_proj,
                "mlp" => &mut m.mlp,
                "moe" => &mut m.moe,
                "shared_experts" => &mut m.shared_experts,
                other => return Err(other.to_string()),
            };
            *flag = true;
        }
        Ok(m)
    }

    /// The names of the modules set, in `RECOMPUTE_MODULE_NAMES` order.
    pub fn names(self) -> Vec<&'static str> {
        RECOMPUTE_MODULE_NAMES
            .iter()
            .zip(self.flags())
            .filter(|(_, on)| *on)
            .map(|(n, _)| *n)
            .collect()
    }

    /// Whether no module is recomputed.
    pub fn is_empty(self) -> bool {
        self == Self::default()
    }
}

impl Serialize for RecomputeModules {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let names = self.names();
        let mut seq = s.serialize_seq(Some(names.len()))?;
        for n in names {
            seq.serialize_element(n)?;
        }
        seq.end()
    }
}

struct ModulesVisitor;

impl<'de> Visitor<'de> for ModulesVisitor {
    type Value = RecomputeModules;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "a list of {} (or false for none)",
            RECOMPUTE_MODULE_NAMES
                .map(|n| format!("\"{n}\""))
                .join(", ")
        )
    }

    /// `false` is the empty list, as links write it (`0`); `true` names no
    /// module and is refused.
    fn visit_bool<E: de::Error>(self, on: bool) -> Result<RecomputeModules, E> {
        if on {
            return Err(E::invalid_value(de::Unexpected::Bool(true), &self));
        }
        Ok(RecomputeModules::default())
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<RecomputeModules, E> {
        RecomputeModules::from_names([name])
            .map_err(|bad| E::invalid_value(de::Unexpected::Str(&bad), &self))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RecomputeModules, A::Error> {
        let mut names = Vec::new();
        while let Some(name) = seq.next_element::<String>()? {
            names.push(name);
        }
        RecomputeModules::from_names(names.iter().map(String::as_str))
            .map_err(|bad| de::Error::invalid_value(de::Unexpected::Str(&bad), &self))
    }
}

impl<'de> Deserialize<'de> for RecomputeModules {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ModulesVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_and_write_back() {
        for (json, names) in [
            ("[]", vec![]),
            ("false", vec![]),
            (r#"["moe_act"]"#, vec!["moe_act"]),
            (
                r#"["shared_experts","layernorm","moe_act"]"#,
                vec!["moe_act", "layernorm", "shared_experts"],
            ),
        ] {
            let read: RecomputeModules = serde_json::from_str(json).unwrap();
            assert_eq!(read.names(), names, "{json}");
            let again: RecomputeModules =
                serde_json::from_value(serde_json::to_value(read).unwrap()).unwrap();
            assert_eq!(again, read);
        }
        for bad in [r#"["moe_layer"]"#, "true"] {
            let e = serde_json::from_str::<RecomputeModules>(bad).unwrap_err();
            assert!(e.to_string().contains("shared_experts"), "{e}");
        }
    }
}
