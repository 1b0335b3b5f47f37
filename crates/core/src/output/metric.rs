//! The report's figures by name: each [`Metric`] knows how to read itself
//! from a [`Report`], its name (the report's JSON path, as in the page's
//! `data-metric` attributes), its label, its unit and how its number is
//! shown. The page's figures, the guided tour and the published table all
//! speak in it.

use crate::model::axis::Axis;
use crate::model::link::LinkClass;
use crate::output::report::Report;
use crate::sim::link_log::{axis_pairs, pair_key};

/// How a figure's number is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
    /// A fraction 0..1, shown as a percentage.
    Fraction,
    /// A ratio, shown as `1.23×`.
    Ratio,
    /// TFLOP/s.
    Tflops,
    /// Gigabytes.
    Gb,
    /// A GPU, by rank ("GPU 3").
    Gpu,
}

impl Unit {
    /// The unit's symbol as a label shows it (`""` for a bare ratio).
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::S => "s",
            Unit::Fraction => "%",
            Unit::Ratio => "×",
            Unit::Tflops => "TFLOP/s",
            Unit::Gb => "GB",
            Unit::Gpu => "",
        }
    }
}

/// One of an axis's figures (model.md section 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisFigure {
    /// Time its collectives were in flight.
    Comm,
    /// Time the compute stream stood idle charged to them.
    Exposed,
    /// Of comm, the time the compute stream ran (hidden).
    UnderCompute,
    /// Of comm, the time the compute stream stood idle charged elsewhere.
    UnderIdle,
    /// under compute / comm.
    Hidden,
    /// 1 - exposed / comm.
    NotExposed,
    /// Compute available to hide it.
    Window,
    /// How much longer its collectives took than alone on the same links.
    Contention,
}

impl AxisFigure {
    /// Every axis figure, in the order the page shows them.
    pub const ALL: [AxisFigure; 8] = [
        AxisFigure::Comm,
        AxisFigure::Exposed,
        AxisFigure::UnderCompute,
        AxisFigure::UnderIdle,
        AxisFigure::Hidden,
        AxisFigure::NotExposed,
        AxisFigure::Window,
        AxisFigure::Contention,
    ];

    /// Its field name in the report's `AxisReport`.
    pub fn field(self) -> &'static str {
        match self {
            AxisFigure::Comm => "comm_ms",
            AxisFigure::Exposed => "exposed_ms",
            AxisFigure::UnderCompute => "under_compute_ms",
            AxisFigure::UnderIdle => "under_idle_ms",
            AxisFigure::Hidden => "hidden",
            AxisFigure::NotExposed => "not_exposed",
            AxisFigure::Window => "window_ms",
            AxisFigure::Contention => "contention_ms",
        }
    }

    /// A short label, as inside an axis's card ("exposed").
    pub fn label(self) -> &'static str {
        match self {
            AxisFigure::Comm => "comm",
            AxisFigure::Exposed => "exposed",
            AxisFigure::UnderCompute => "under compute",
            AxisFigure::UnderIdle => "under idle",
            AxisFigure::Hidden => "hidden",
            AxisFigure::NotExposed => "not exposed",
            AxisFigure::Window => "window",
            AxisFigure::Contention => "contention",
        }
    }

    /// One sentence on what it measures.
    pub fn help(self) -> &'static str {
        match self {
            AxisFigure::Comm => "Time its collectives were in flight",
            AxisFigure::Exposed => {
                "Time compute stood idle waiting on them (each idle instant charged once)"
            }
            AxisFigure::UnderCompute => "Of comm, the time compute ran beside it: hidden",
            AxisFigure::UnderIdle => {
                "Of comm, the time compute stood idle charged to another axis or the bubble"
            }
            AxisFigure::Hidden => "Under compute / comm: the share hidden under compute",
            AxisFigure::NotExposed => {
                "1 − exposed / comm: hidden under compute or under another axis's or the bubble's idle"
            }
            AxisFigure::Window => {
                "Compute that ran while its collectives could legally run, idle time excluded"
            }
            AxisFigure::Contention => "How much longer it took than alone on the same links",
        }
    }
}

/// One of an axis's figures on the GPU where its communication is largest
/// (`axes.<axis>.heaviest` in the report; model.md 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaviestFigure {
    /// Which GPU (its rank).
    Gpu,
    /// Time the axis's collectives were in flight on it.
    Comm,
    /// Of comm, while its compute stream ran.
    UnderCompute,
    /// Its idle time charged to the axis.
    Exposed,
    /// Of comm, while its stream stood idle charged elsewhere.
    UnderIdle,
    /// under compute / comm on it.
    Hidden,
    /// The axis's window on it.
    Window,
}

impl HeaviestFigure {
    /// Every figure, in report order.
    pub const ALL: [HeaviestFigure; 7] = [
        HeaviestFigure::Gpu,
        HeaviestFigure::Comm,
        HeaviestFigure::UnderCompute,
        HeaviestFigure::Exposed,
        HeaviestFigure::UnderIdle,
        HeaviestFigure::Hidden,
        HeaviestFigure::Window,
    ];

    /// Its field name in the report's `HeaviestGpu`.
    pub fn field(self) -> &'static str {
        match self {
            HeaviestFigure::Gpu => "gpu",
            HeaviestFigure::Comm => "comm_ms",
            HeaviestFigure::UnderCompute => "under_compute_ms",
            HeaviestFigure::Exposed => "exposed_ms",
            HeaviestFigure::UnderIdle => "under_idle_ms",
            HeaviestFigure::Hidden => "hidden",
            HeaviestFigure::Window => "window_ms",
        }
    }

    /// Its value in a report's `HeaviestGpu`.
    pub fn of(self, h: &crate::output::report::HeaviestGpu) -> f64 {
        match self {
            HeaviestFigure::Gpu => f64::from(h.gpu),
            HeaviestFigure::Comm => h.comm_ms,
            HeaviestFigure::UnderCompute => h.under_compute_ms,
            HeaviestFigure::Exposed => h.exposed_ms,
            HeaviestFigure::UnderIdle => h.under_idle_ms,
            HeaviestFigure::Hidden => h.hidden,
            HeaviestFigure::Window => h.window_ms,
        }
    }
}

/// One of a link class's figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkFigure {
    /// Busy fraction.
    Busy,
    /// Fraction of busy time two or more axes shared the link.
    Shared,
    /// Fraction of busy time these two axes moved data on it at once
    /// (`shared_by`; 0 where they never met, which the report leaves out).
    SharedBy(Axis, Axis),
}

impl LinkFigure {
    /// Its field's path in the report's `LinkReport`.
    pub fn field(self) -> String {
        match self {
            LinkFigure::Busy => "busy".to_string(),
            LinkFigure::Shared => "shared".to_string(),
            LinkFigure::SharedBy(a, b) => format!("shared_by.{}", pair_key(a, b)),
        }
    }
}

/// One part of the fullest GPU's memory (`memory_gb` in the report).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryFigure {
    /// Half-precision weights.
    Weights,
    /// Gradient buffers.
    Gradients,
    /// Optimizer states.
    Optimizer,
    /// Activations of every micro-batch in flight.
    Activations,
    /// The sum of the four.
    Total,
    /// The GPU's memory.
    Capacity,
}

impl MemoryFigure {
    /// Every memory figure, parts first, in report order.
    pub const ALL: [MemoryFigure; 6] = [
        MemoryFigure::Weights,
        MemoryFigure::Gradients,
        MemoryFigure::Optimizer,
        MemoryFigure::Activations,
        MemoryFigure::Total,
        MemoryFigure::Capacity,
    ];

    /// Its field name in the report's `MemoryGb`.
    pub fn field(self) -> &'static str {
        match self {
            MemoryFigure::Weights => "weights",
            MemoryFigure::Gradients => "gradients",
            MemoryFigure::Optimizer => "optimizer",
            MemoryFigure::Activations => "activations",
            MemoryFigure::Total => "total",
            MemoryFigure::Capacity => "capacity",
        }
    }

    /// Its value in a report's `MemoryGb`.
    pub fn of(self, m: &crate::output::report::MemoryGb) -> f64 {
        match self {
            MemoryFigure::Weights => m.weights,
            MemoryFigure::Gradients => m.gradients,
            MemoryFigure::Optimizer => m.optimizer,
            MemoryFigure::Activations => m.activations,
            MemoryFigure::Total => m.total,
            MemoryFigure::Capacity => m.capacity,
        }
    }
}

/// A figure of the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// The simulated time of one step.
    StepTime,
    /// The step time in seconds, as papers state it.
    StepTimeS,
    /// The same scenario with every overlap off.
    Baseline,
    /// baseline / step time.
    Speedup,
    /// The slowest GPU's busy compute time.
    Compute,
    /// Model FLOPs per GPU per second.
    ModelTflops,
    /// Executed FLOPs (recomputation counted) per GPU per second.
    HardwareTflops,
    /// Model FLOPs utilisation against peak.
    Mfu,
    /// Model FLOPs per GPU per second, attention counted causal.
    CausalTflops,
    /// Model FLOPs utilisation against peak, attention counted causal.
    CausalMfu,
    /// Pipeline bubble fraction.
    Bubble,
    /// HolisticTraceAnalysis's communication/computation overlap.
    HtaOverlap,
    /// One figure of one parallelism axis.
    Axis(Axis, AxisFigure),
    /// One figure of one axis on the GPU where its communication is largest.
    Heaviest(Axis, HeaviestFigure),
    /// One figure of one link class.
    Link(LinkClass, LinkFigure),
    /// One part of the fullest GPU's memory.
    Memory(MemoryFigure),
}

/// The step-wide metrics, in the order the page's headline shows them.
pub const HEADLINE: [Metric; 9] = [
    Metric::StepTime,
    Metric::Baseline,
    Metric::Speedup,
    // Both conventions, each named (model.md 4: "MFU says which it
    // uses"): at long context the unmasked count nearly doubles attention.
    Metric::Mfu,
    Metric::CausalMfu,
    Metric::Bubble,
    Metric::ModelTflops,
    Metric::HardwareTflops,
    Metric::Compute,
];

/// The link metrics, in the order the page shows them.
pub const LINKS: [Metric; 4] = [
    Metric::Link(LinkClass::Nvlink, LinkFigure::Busy),
    Metric::Link(LinkClass::Nvlink, LinkFigure::Shared),
    Metric::Link(LinkClass::Network, LinkFigure::Busy),
    Metric::Link(LinkClass::Network, LinkFigure::Shared),
];

fn link_name(class: LinkClass) -> &'static str {
    match class {
        LinkClass::Nvlink => "nvlink",
        LinkClass::Network => "network",
    }
}

fn link_label(class: LinkClass) -> &'static str {
    match class {
        LinkClass::Nvlink => "NVLink",
        LinkClass::Network => "Network",
    }
}

impl Metric {
    /// Every metric, in report order: the inverse of [`Metric::from_name`].
    pub fn all() -> Vec<Metric> {
        let mut all = vec![
            Metric::StepTime,
            Metric::StepTimeS,
            Metric::Baseline,
            Metric::Speedup,
            Metric::Compute,
            Metric::ModelTflops,
            Metric::HardwareTflops,
            Metric::Mfu,
            Metric::CausalTflops,
            Metric::CausalMfu,
            Metric::Bubble,
            Metric::HtaOverlap,
        ];
        for axis in Axis::ALL {
            all.extend(AxisFigure::ALL.map(|f| Metric::Axis(axis, f)));
            all.extend(HeaviestFigure::ALL.map(|f| Metric::Heaviest(axis, f)));
        }
        all.extend(LINKS);
        all.extend(MemoryFigure::ALL.map(Metric::Memory));
        all
    }

    /// The metric of a name ([`Metric::name`]), if there is one. A pair
    /// of axes sharing a link is not in [`Metric::all`] (the report names
    /// only the pairs that met) but has its metric all the same.
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::all()
            .into_iter()
            .chain(Self::link_pairs())
            .find(|m| m.name() == name)
    }

    /// Every link class's pairs of axes (`links.*.shared_by.*`).
    fn link_pairs() -> impl Iterator<Item = Metric> {
        [LinkClass::Nvlink, LinkClass::Network]
            .into_iter()
            .flat_map(|class| {
                axis_pairs().map(move |(a, b)| Metric::Link(class, LinkFigure::SharedBy(a, b)))
            })
    }

    /// Reads the figure from a report.
    pub fn get(self, r: &Report) -> f64 {
        match self {
            Metric::StepTime => r.step_time_ms,
            Metric::StepTimeS => r.step_time_ms / 1e3,
            Metric::Baseline => r.baseline_ms,
            Metric::Speedup => r.speedup,
            Metric::Compute => r.compute_ms,
            Metric::ModelTflops => r.model_tflops_per_gpu,
            Metric::HardwareTflops => r.hardware_tflops_per_gpu,
            Metric::Mfu => r.mfu,
            Metric::CausalTflops => r.causal_tflops_per_gpu,
            Metric::CausalMfu => r.causal_mfu,
            Metric::Bubble => r.bubble_fraction,
            Metric::HtaOverlap => r.hta_overlap,
            Metric::Axis(axis, figure) => {
                let a = r.axes.get(axis);
                match figure {
                    AxisFigure::Comm => a.comm_ms,
                    AxisFigure::Exposed => a.exposed_ms,
                    AxisFigure::UnderCompute => a.under_compute_ms,
                    AxisFigure::UnderIdle => a.under_idle_ms,
                    AxisFigure::Hidden => a.hidden,
                    AxisFigure::NotExposed => a.not_exposed,
                    AxisFigure::Window => a.window_ms,
                    AxisFigure::Contention => a.contention_ms,
                }
            }
            Metric::Heaviest(axis, figure) => figure.of(&r.axes.get(axis).heaviest),
            Metric::Memory(figure) => figure.of(&r.memory_gb),
            Metric::Link(class, figure) => {
                let l = match class {
                    LinkClass::Nvlink => &r.links.nvlink,
                    LinkClass::Network => &r.links.network,
                };
                match figure {
                    LinkFigure::Busy => l.busy,
                    LinkFigure::Shared => l.shared,
                    LinkFigure::SharedBy(a, b) => {
                        l.shared_by.get(&pair_key(a, b)).copied().unwrap_or(0.0)
                    }
                }
            }
        }
    }

    /// The report's JSON path (`step_time_ms`, `axes.tp.exposed_ms`), as
    /// `data-metric` carries it. `step_time_s` is not in the report: it is
    /// the published tables' unit.
    pub fn name(self) -> String {
        match self {
            Metric::Axis(axis, figure) => format!("axes.{}.{}", axis.name(), figure.field()),
            Metric::Heaviest(axis, figure) => {
                format!("axes.{}.heaviest.{}", axis.name(), figure.field())
            }
            Metric::Link(class, figure) => format!("links.{}.{}", link_name(class), figure.field()),
            Metric::Memory(figure) => format!("memory_gb.{}", figure.field()),
            _ => self.step_name().to_string(),
        }
    }

    fn step_name(self) -> &'static str {
        match self {
            Metric::StepTime => "step_time_ms",
            Metric::StepTimeS => "step_time_s",
            Metric::Baseline => "baseline_ms",
            Metric::Speedup => "speedup",
            Metric::Compute => "compute_ms",
            Metric::ModelTflops => "model_tflops_per_gpu",
            Metric::HardwareTflops => "hardware_tflops_per_gpu",
            Metric::Mfu => "mfu",
            Metric::CausalTflops => "causal_tflops_per_gpu",
            Metric::CausalMfu => "causal_mfu",
            Metric::Bubble => "bubble_fraction",
            Metric::HtaOverlap => "hta_overlap",
            Metric::Axis(..) | Metric::Heaviest(..) | Metric::Link(..) | Metric::Memory(..) => "",
        }
    }

    /// What the page calls it ("Step time", "DP exposed").
    pub fn label(self) -> String {
        match self {
            Metric::Axis(axis, figure) => format!("{} {}", axis.label(), figure.label()),
            Metric::Heaviest(axis, HeaviestFigure::Gpu) => {
                format!("{}'s heaviest GPU", axis.label())
            }
            Metric::Heaviest(axis, figure) => format!(
                "{} {} on its heaviest GPU",
                axis.label(),
                figure.field().trim_end_matches("_ms").replace('_', " ")
            ),
            Metric::Link(class, LinkFigure::Busy) => format!("{} busy", link_label(class)),
            Metric::Link(class, LinkFigure::Shared) => {
                format!("{} shared by axes", link_label(class))
            }
            Metric::Link(class, LinkFigure::SharedBy(a, b)) => {
                format!(
                    "{} shared by {} and {}",
                    link_label(class),
                    a.label(),
                    b.label()
                )
            }
            Metric::Memory(MemoryFigure::Total) => "Memory per GPU".to_string(),
            Metric::Memory(MemoryFigure::Capacity) => "GPU memory".to_string(),
            Metric::Memory(figure) => format!("Memory: {}", figure.field()),
            _ => match self {
                Metric::StepTime | Metric::StepTimeS => "Step time",
                Metric::Baseline => "All-off baseline",
                Metric::Speedup => "Speedup",
                Metric::Compute => "Compute busy",
                Metric::ModelTflops => "Model TFLOP/s per GPU",
                Metric::HardwareTflops => "Hardware TFLOP/s per GPU",
                Metric::Mfu => "MFU, attention unmasked",
                Metric::CausalTflops => "Causal TFLOP/s per GPU",
                Metric::CausalMfu => "Causal MFU",
                Metric::Bubble => "Pipeline bubble",
                Metric::HtaOverlap => "HTA overlap",
                Metric::Axis(..) | Metric::Heaviest(..) | Metric::Link(..) | Metric::Memory(..) => {
                    ""
                }
            }
            .to_string(),
        }
    }

    /// One sentence on what it measures (`""` where the label says it).
    pub fn help(self) -> &'static str {
        match self {
            Metric::StepTime | Metric::StepTimeS => "Simulated time of one step, on the slowest GPU",
            Metric::Baseline => "The same scenario with all three overlaps off",
            Metric::Speedup => "baseline / step time",
            Metric::Mfu => "Model FLOPs utilisation against peak, attention counted unmasked (Megatron's 2021 count)",
            Metric::CausalTflops => "Model FLOPs with attention counted causal, as the Llama 3 paper counts them",
            Metric::CausalMfu => "MFU with attention counted causal, as the Llama 3 paper counts it",
            Metric::HardwareTflops => "Recomputation counted, as Megatron-LM reports",
            Metric::HtaOverlap => {
                "Share of communication kernel time a compute kernel also runs, as HolisticTraceAnalysis computes it"
            }
            Metric::Axis(_, figure) => figure.help(),
            Metric::Heaviest(..) => {
                "On the GPU where this axis's communication is largest, which may not be the one that ends last"
            }
            Metric::Link(_, LinkFigure::Shared) => {
                "Fraction of busy time two or more axes shared the link"
            }
            Metric::Link(_, LinkFigure::SharedBy(..)) => {
                "Fraction of busy time these two axes moved data on the link at once"
            }
            Metric::Memory(MemoryFigure::Total) => "The fullest GPU: weights, gradients, optimizer states and activations",
            Metric::Memory(_) => "",
            Metric::Compute
            | Metric::ModelTflops
            | Metric::Bubble
            | Metric::Link(_, LinkFigure::Busy) => "",
        }
    }

    /// Its unit, which also says how the number is written.
    pub fn unit(self) -> Unit {
        match self {
            Metric::StepTime | Metric::Baseline | Metric::Compute => Unit::Ms,
            Metric::StepTimeS => Unit::S,
            Metric::Speedup => Unit::Ratio,
            Metric::ModelTflops | Metric::HardwareTflops | Metric::CausalTflops => Unit::Tflops,
            Metric::Mfu
            | Metric::CausalMfu
            | Metric::Bubble
            | Metric::HtaOverlap
            | Metric::Link(..) => Unit::Fraction,
            Metric::Axis(_, AxisFigure::Hidden | AxisFigure::NotExposed) => Unit::Fraction,
            Metric::Axis(..) => Unit::Ms,
            Metric::Heaviest(_, HeaviestFigure::Gpu) => Unit::Gpu,
            Metric::Heaviest(_, HeaviestFigure::Hidden) => Unit::Fraction,
            Metric::Heaviest(..) => Unit::Ms,
            Metric::Memory(_) => Unit::Gb,
        }
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every number leaf of the report's JSON, as dotted paths.
    fn leaves(prefix: &str, value: &serde_json::Value, out: &mut Vec<(String, f64)>) {
        match value {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    let path = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    leaves(&path, v, out);
                }
            }
            serde_json::Value::Number(n) => out.push((prefix.to_string(), n.as_f64().unwrap())),
            _ => {}
        }
    }

    #[test]
    fn every_metric_reads_the_report_field_it_is_named_for() {
        // A model with experts: its report has every axis.
        let scenario = crate::input::presets::scenario("moe-didactic").unwrap();
        let report = crate::simulate(&scenario).report;
        let json = serde_json::to_value(&report).unwrap();
        let mut fields = Vec::new();
        leaves("", &json, &mut fields);
        for m in Metric::all() {
            // The didactic preset has no CP: the report leaves its axis out.
            if matches!(m, Metric::Axis(Axis::Cp, _) | Metric::Heaviest(Axis::Cp, _))
                && !report.axes.has(Axis::Cp)
            {
                continue;
            }
            if m == Metric::StepTimeS {
                assert_eq!(m.get(&report), report.step_time_ms / 1e3);
                continue;
            }
            let (_, value) = fields
                .iter()
                .find(|(path, _)| *path == m.name())
                .unwrap_or_else(|| panic!("{m} is not a report field"));
            assert_eq!(m.get(&report), *value, "{m}");
            assert!(!m.label().is_empty(), "{m}");
        }
        // And every number of the report has its metric.
        // (the pairs of axes that shared a link included), reading it.
        for (path, value) in &fields {
            let m = Metric::from_name(path).unwrap_or_else(|| panic!("{path} has no Metric"));
            assert_eq!(m.get(&report), *value, "{path}");
        }
        assert!(
            fields.iter().any(|(p, _)| p.contains(".shared_by.")),
            "moe-didactic's links no longer name a pair of axes"
        );
    }

    #[test]
    fn names_read_back() {
        for m in Metric::all() {
            assert_eq!(Metric::from_name(&m.name()), Some(m));
        }
        assert_eq!(
            Metric::Axis(Axis::Dp, AxisFigure::Exposed).name(),
            "axes.dp.exposed_ms"
        );
        assert_eq!(
            Metric::Axis(Axis::Dp, AxisFigure::Exposed).label(),
            "DP exposed"
        );
    }
}
