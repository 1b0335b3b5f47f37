//! Which GPUs the bus-bandwidth view measures: TP's group (its GPUs inside
//! a node), DP's group (the replicas that reduce each gradient, across
//! nodes) or the whole cluster, each named by its GPUs and nodes, with the
//! message sizes of the axis that runs on it marked on its own curve (TP's
//! chunks on TP's group, DP's buckets on DP's), never on another's.

use overlap_core::scenario::HardwareInput;
use overlap_core::Scenario;

use crate::plot;

/// A group of GPUs the curves are measured on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BusGroup {
    /// TP's group: its GPUs, inside a node when TP fits in one.
    Tp,
    /// DP's group: DP x CP ranks, a node's share each (model.md 4d).
    Dp,
    /// Every GPU of the scenario.
    #[default]
    All,
}

impl BusGroup {
    /// The groups, in the picker's order.
    pub const ALL: [BusGroup; 3] = [BusGroup::Tp, BusGroup::Dp, BusGroup::All];

    /// Its code in the picker.
    pub fn code(self) -> &'static str {
        match self {
            BusGroup::Tp => "tp",
            BusGroup::Dp => "dp",
            BusGroup::All => "all",
        }
    }

    /// The group of a code.
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|g| g.code() == code)
    }
}

/// The group's GPUs per node and nodes in `s`, as its collectives run:
/// `None` for a group of one GPU (it moves nothing).
pub fn shape(group: BusGroup, s: &Scenario) -> Option<(u32, u32)> {
    let per_node = s.hardware.gpus_per_node.max(1);
    let (tp, dp) = (s.parallel.tp.max(1), s.parallel.dp_group().max(1));
    match group {
        BusGroup::Tp if tp > 1 => {
            let k = tp.min(per_node);
            Some((k, tp.div_ceil(k)))
        }
        // TP fastest, then CP, then DP: a DP group has one rank in every
        // TP group, `per_node / tp` of them in a node (workload/cost/layout.rs).
        BusGroup::Dp if dp > 1 => {
            let k = (per_node / tp).clamp(1, dp);
            Some((k, dp / k))
        }
        BusGroup::All if per_node * s.hardware.nodes > 1 => Some((per_node, s.hardware.nodes)),
        _ => None,
    }
}

/// The group in words: "TP's group: 4 GPUs in 1 node", "DP's group: 16
/// GPUs, 1 in each of 16 nodes"; `None` for a group of one GPU.
pub fn label(group: BusGroup, s: &Scenario) -> Option<String> {
    let (k, nodes) = shape(group, s)?;
    let whose = match group {
        BusGroup::Tp => "TP's group",
        BusGroup::Dp => "DP's group",
        BusGroup::All => "every GPU",
    };
    let gpus = k * nodes;
    Some(if nodes == 1 {
        format!("{whose}: {gpus} GPUs in 1 node")
    } else {
        format!("{whose}: {gpus} GPUs, {k} in each of {nodes} nodes")
    })
}

/// The hardware of the group alone, for the curves: the scenario's
/// hardware input with the group's nodes and GPUs per node.
pub fn hardware(group: BusGroup, s: &Scenario, input: &HardwareInput) -> Option<HardwareInput> {
    let (k, nodes) = shape(group, s)?;
    let mut hw = input.clone();
    hw.nodes = Some(nodes);
    hw.gpus_per_node = Some(k);
    Some(hw)
}

/// The message sizes of the axis that runs on `group`, with their words:
/// TP's calls on TP's group, DP's buckets on DP's group; none on the whole
/// cluster, which no one axis runs on.
pub fn marks(group: BusGroup, s: &Scenario) -> Vec<(f64, String)> {
    match group {
        BusGroup::Tp => overlap_core::sweep::tp_call_bytes(s)
            .map(|bytes| {
                let chunks = if s.overlap.tp { s.overlap.tp_chunks } else { 1 };
                vec![(bytes, crate::bus_plot::tp_mark_text(bytes, chunks))]
            })
            .unwrap_or_default(),
        BusGroup::Dp if s.parallel.dp_group() > 1 && s.overlap.bucket_mb > 0.0 => {
            let bytes = s.overlap.bucket_mb * 1e6;
            vec![(
                bytes,
                format!("your DP buckets are {} each: here", plot::bytes_tick(bytes)),
            )]
        }
        _ => Vec::new(),
    }
}

/// The group to show first: TP's where the scenario has TP, else DP's,
/// else every GPU.
pub fn first(s: &Scenario) -> BusGroup {
    [BusGroup::Tp, BusGroup::Dp]
        .into_iter()
        .find(|g| shape(*g, s).is_some())
        .unwrap_or(BusGroup::All)
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::presets;

    fn scenario(id: &str) -> Scenario {
        presets::scenario(id).unwrap()
    }

    /// On the default scenario (two 8-GPU nodes, TP 4), TP's group is four
    /// GPUs of one node and DP's spans both nodes; each is named so, and
    /// each axis's sizes are marked on its own group only.
    #[test]
    fn each_group_is_named_by_its_gpus_and_nodes_and_carries_its_axis_marks() {
        let s = scenario(presets::DEFAULT_ID);
        let (tp, dp) = (s.parallel.tp, s.parallel.dp_group());
        assert!(tp > 1 && dp > 1, "the default scenario has TP and DP");
        let (k, n) = shape(BusGroup::Tp, &s).unwrap();
        assert_eq!((k * n, n), (tp, 1));
        assert_eq!(
            label(BusGroup::Tp, &s).unwrap(),
            format!("TP's group: {tp} GPUs in 1 node")
        );
        let (k, n) = shape(BusGroup::Dp, &s).unwrap();
        assert_eq!(k * n, dp);
        assert!(label(BusGroup::Dp, &s).unwrap().starts_with("DP's group: "));
        let all = label(BusGroup::All, &s).unwrap();
        assert!(
            all.contains(&format!("{} nodes", s.hardware.nodes)),
            "{all}"
        );
        let tp_marks = marks(BusGroup::Tp, &s);
        assert!(tp_marks.len() == 1 && tp_marks[0].1.starts_with("your TP"));
        let dp_marks = marks(BusGroup::Dp, &s);
        assert!(dp_marks.len() == 1 && dp_marks[0].1.starts_with("your DP buckets"));
        assert!(marks(BusGroup::All, &s).is_empty());
        assert_eq!(first(&s), BusGroup::Tp);
        for g in BusGroup::ALL {
            assert_eq!(BusGroup::from_code(g.code()), Some(g));
        }
    }

    /// The group's hardware gives a curve of the group's own size.
    #[test]
    fn a_groups_hardware_is_its_gpus_and_nodes() {
        let s = scenario(presets::DEFAULT_ID);
        let input = presets::default_preset().input();
        let hw = hardware(BusGroup::Tp, &s, &input.hardware).unwrap();
        assert_eq!((hw.nodes, hw.gpus_per_node), (Some(1), Some(s.parallel.tp)));
        let curve =
            overlap_core::sweep::bus_curve(&hw, overlap_core::scenario::CollectiveOp::AllReduce);
        assert!(curve.is_ok(), "{curve:?}");
    }
}
