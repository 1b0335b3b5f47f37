//! The scenario a trace implies, as scenario JSON a user edits: the GPU
//! from `deviceProperties`, the world size, and each axis's size from the
//! process groups the collectives state, laid over the preset closest to
//! what the trace shows (DeepSeek's own expert parallelism, another
//! mixture of experts, or a dense model). A trace does not say the model,
//! the sequence or the batch: those are the preset's, and the notes say
//! so. The proposal is validated as `simulate` would read it; a refusal is
//! a note, with the field to edit.

use std::collections::BTreeMap;

use overlap_core::{presets, Axis, HardwarePreset, ScenarioInput};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::classify::{Class, Family};
use crate::identify::Identified;
use crate::matching::Matched;
use crate::read::FileTrace;

/// A proposed scenario and what the reader should know of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Proposed {
    /// Scenario JSON (interface.md), ready for `simulate` once edited.
    pub scenario: Value,
    /// Where each part comes from, and what to edit.
    pub notes: Vec<String>,
}

/// The hardware preset of a GPU named as `deviceProperties` names it.
fn hardware_of(device: &str) -> Option<HardwarePreset> {
    let name = device.to_ascii_uppercase();
    if ["H100", "H800", "H200", "H20", "GH200"]
        .iter()
        .any(|g| name.contains(g))
    {
        Some(HardwarePreset::DgxH100)
    } else if ["A100", "A800"].iter().any(|g| name.contains(g)) {
        Some(HardwarePreset::DgxA100)
    } else if name.contains("V100") {
        Some(HardwarePreset::Dgx2V100)
    } else {
        None
    }
}

/// Proposes the scenario of an import's files (in the import's order),
/// their identified kernels and their matching (whose inferred groups size
/// the axes of a trace that states none).
pub(crate) fn propose(files: &[&FileTrace], ids: &[Identified], matched: &Matched) -> Proposed {
    let mut notes = Vec::new();
    // Each axis's largest group, and whether an axis's kernels were seen
    // with no group at all.
    let mut sizes: BTreeMap<Axis, usize> = BTreeMap::new();
    let mut seen_alone: BTreeMap<Axis, bool> = BTreeMap::new();
    let mut deepseek = false;
    for (fi, (f, id)) in files.iter().zip(ids).enumerate() {
        for (ki, (k, c)) in f.kernels.iter().zip(&id.comm).enumerate() {
            let Some(c) = c else { continue };
            if let Class::Comm {
                family: Family::DEEPSEEK_EP,
                ..
            } = id.classes[k.name as usize]
            {
                deepseek = true;
            }
            let Some(axis) = c.axis else { continue };
            let stated = k.group.and_then(|g| f.groups[g as usize].ranks.as_ref());
            let inferred = || matched.inferred_group(fi, ki as u32).map(|g| &g.ranks);
            match stated.or_else(inferred) {
                Some(ranks) => {
                    let s = sizes.entry(axis).or_default();
                    *s = (*s).max(ranks.len());
                }
                None => {
                    seen_alone.insert(axis, true);
                }
            }
        }
    }
    let world = files
        .iter()
        .find_map(|f| f.world_size)
        .unwrap_or(files.len() as u64)
        .max(1);
    let ep_seen = sizes.contains_key(&Axis::Ep) || seen_alone.contains_key(&Axis::Ep);
    let base = if deepseek {
        "deepseek-v3"
    } else if ep_seen {
        "moe-didactic"
    } else {
        "megatron-1.7b"
    };
    let preset = presets::find(base).expect("a listed preset");
    let mut scenario: Value =
        serde_json::from_str(&preset.input().to_json_pretty()).expect("a preset's JSON reads");
    notes.push(format!(
        "the model, sequence, batch and overlap settings are preset {base}'s ({}): a trace does not say them; edit workload",
        preset.title
    ));

    // The hardware: the GPU's preset, as many nodes as the world needs.
    let device = files.iter().find_map(|f| f.device_name.clone());
    let base_hw = scenario["hardware"]["preset"]
        .as_str()
        .and_then(HardwarePreset::from_name);
    let hw = match device.as_deref().map(|d| (d, hardware_of(d))) {
        Some((_, Some(h))) => h,
        Some((d, None)) => {
            notes.push(format!(
                "GPU {d:?} has no hardware preset: kept {base}'s; edit hardware"
            ));
            base_hw.unwrap_or(HardwarePreset::DgxH100)
        }
        None => {
            notes.push(format!(
                "the traces name no GPU (deviceProperties): kept {base}'s hardware"
            ));
            base_hw.unwrap_or(HardwarePreset::DgxH100)
        }
    };
    if base_hw != Some(hw) {
        // Another GPU: the base's own link and peak figures do not apply.
        scenario["hardware"] = json!({ "preset": hw.name() });
    }
    // A node's GPUs as the trace lists them, fewer when the whole world
    // is fewer (a two-GPU job on an eight-GPU machine).
    let per_node = files
        .iter()
        .find_map(|f| f.devices_listed)
        .filter(|&n| (1..=64).contains(&n))
        .unwrap_or(8)
        .min(world);
    let nodes = world.div_ceil(per_node);
    scenario["hardware"]["preset"] = json!(hw.name());
    scenario["hardware"]["nodes"] = json!(nodes);
    if per_node != 8 || hw == HardwarePreset::Dgx2V100 {
        scenario["hardware"]["gpus_per_node"] = json!(per_node);
    }
    if let Some(d) = &device {
        notes.push(format!(
            "hardware: {d} read as {}, {nodes} node{} of {per_node} GPUs for a world of {world}",
            hw.name(),
            if nodes == 1 { "" } else { "s" }
        ));
    }

    // The parallel layout: each axis's size from its groups.
    let size = |a: Axis| sizes.get(&a).copied().unwrap_or(1) as u64;
    let (tp, pp, cp) = (size(Axis::Tp), size(Axis::Pp), size(Axis::Cp));
    let inner = (tp * pp * cp).max(1);
    if world % inner != 0 {
        notes.push(format!(
            "the groups' sizes (tp {tp} x pp {pp} x cp {cp}) do not divide the world of {world}: edit parallel"
        ));
    }
    let dp = (world / inner).max(1);
    let missing: Vec<&str> = [Axis::Tp, Axis::Pp, Axis::Cp]
        .into_iter()
        .filter(|a| !sizes.contains_key(a))
        .map(Axis::name)
        .collect();
    if !missing.is_empty() {
        notes.push(format!(
            "no process group in the traces for {}: taken as 1, dp as the rest of the world ({dp})",
            missing.join(", ")
        ));
    }
    let parallel = &mut scenario["parallel"];
    parallel["tp"] = json!(tp);
    parallel["pp"] = json!(pp);
    parallel["dp"] = json!(dp);
    if let Some(p) = parallel.as_object_mut() {
        p.remove("cp");
        p.remove("ep");
        if pp == 1 {
            // No pipeline: its schedule and stages say nothing.
            for key in ["schedule", "virtual_stages", "pipeline_layout"] {
                p.remove(key);
            }
        }
    }
    if cp > 1 {
        parallel["cp"] = json!(cp);
    }
    if ep_seen {
        let ep = match sizes.get(&Axis::Ep) {
            Some(&s) => s as u64,
            None => {
                notes.push(format!(
                    "expert parallelism seen without its process group: ep taken as dp ({dp})"
                ));
                dp
            }
        };
        parallel["ep"] = json!(ep);
    }

    // A global batch the replicas share evenly.
    let workload = &mut scenario["workload"];
    let micro = workload["micro_batch"].as_u64().unwrap_or(1).max(1);
    let batch = workload["global_batch"].as_u64().unwrap_or(micro * dp);
    let unit = micro * dp;
    let even = batch.div_ceil(unit).max(1) * unit;
    if even != batch {
        workload["global_batch"] = json!(even);
        notes.push(format!(
            "workload.global_batch {batch} rounded to {even}, a multiple of micro_batch x dp"
        ));
    }
    if let Err(e) = ScenarioInput::from_json(&scenario.to_string()).and_then(|s| s.resolve()) {
        notes.push(format!("as proposed, simulate refuses it: {e}"));
    }
    Proposed { scenario, notes }
}
