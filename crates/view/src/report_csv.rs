//! The report as CSV rows, named as `simulate --json` names its fields.

use std::fmt::Write;

use overlap_core::Report;

use crate::format;

/// The leaves of a JSON value under their dotted names (`axes.tp.comm_ms`,
/// array items as `hta_overlap_per_gpu.0`), in document order: the names the
/// CSV rows and the page's field marks use, as `simulate --json` spells them.
pub fn json_leaves(v: &serde_json::Value) -> Vec<(String, &serde_json::Value)> {
    fn walk<'v>(
        prefix: &str,
        v: &'v serde_json::Value,
        out: &mut Vec<(String, &'v serde_json::Value)>,
    ) {
        let name = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        match v {
            serde_json::Value::Object(map) => {
                for (k, x) in map {
                    walk(&name(k), x, out);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    walk(&name(&i.to_string()), x, out);
                }
            }
            leaf => out.push((prefix.to_string(), leaf)),
        }
    }
    let mut out = Vec::new();
    walk("", v, &mut out);
    out
}

/// The report as `name,value` rows, names as in `simulate --json` (dotted).
pub fn figures_csv(report: &Report) -> String {
    let mut out = String::from("name,value\n");
    let Ok(v) = serde_json::to_value(report) else {
        return out;
    };
    for (name, leaf) in json_leaves(&v) {
        match leaf {
            serde_json::Value::Number(n) => {
                let text = n.as_f64().map(format::raw).unwrap_or_else(|| n.to_string());
                let _ = writeln!(out, "{name},{text}");
            }
            serde_json::Value::Bool(b) => {
                let _ = writeln!(out, "{name},{b}");
            }
            // A name (the precision): plain, it holds no comma or quote.
            serde_json::Value::String(s) if !s.contains([',', '"']) => {
                let _ = writeln!(out, "{name},{s}");
            }
            other => {
                let text = other.to_string().replace('"', "\"\"");
                let _ = writeln!(out, "{name},\"{text}\"");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::{presets, Axis};

    #[test]
    fn csv_has_every_report_figure_by_its_json_name() {
        let scenario = presets::scenario(presets::DEFAULT_ID).unwrap();
        let report = overlap_core::simulate(&scenario).report;
        let csv = figures_csv(&report);
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some("name,value"));
        let rows: Vec<(&str, &str)> = lines.map(|l| l.split_once(',').unwrap()).collect();
        // Every value is a number, but for whether the memory fits and
        // the precision's name.
        for (k, v) in &rows {
            if *k == "memory_gb.fits" {
                assert!(*v == "true" || *v == "false", "{k},{v}");
            } else if *k == "precision" {
                assert!(*v == "bf16" || *v == "fp8", "{k},{v}");
            } else {
                assert!(v.parse::<f64>().is_ok(), "{k},{v}");
            }
        }
        let rows: Vec<(&str, f64)> = rows
            .into_iter()
            .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
            .collect();
        let get = |k: &str| rows.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        assert_eq!(get("step_time_ms"), Some(report.step_time_ms));
        assert_eq!(
            get("axes.dp.exposed_ms"),
            Some(report.axes[Axis::Dp].exposed_ms)
        );
        assert_eq!(
            get("links.network.shared"),
            Some(report.links.network.shared)
        );
        assert_eq!(get("memory_gb.total"), Some(report.memory_gb.total));
    }
}
