//! Chapter text with its figures filled in from the runs, so that a number in
//! the text is always the number on the page.
//!
//! A placeholder is `{METRIC}` or `{before:METRIC}`, where METRIC is a
//! metric's report name (`step_time_ms`, `axes.dp.exposed_ms`), written in
//! the metric's own unit and format. `{delta:METRIC}` is after minus before
//! with its sign; `{diff:METRIC}` is its size without the sign (for a text
//! that says "longer" or "shorter" itself, its test asserting which);
//! `{gone:METRIC}` is the share of the before value that is
//! gone after (a percentage; negative when it grew).

use overlap_core::output::metric::{AxisFigure, Metric, Unit};
use overlap_core::Report;

use crate::format;

/// A metric's value as the page writes it, in the metric's unit.
pub fn shown(metric: Metric, value: f64) -> String {
    match metric.unit() {
        Unit::Ms => format::ms(value),
        Unit::S => format::secs(value),
        Unit::Fraction => format::pct(value),
        Unit::Ratio => format::ratio(value),
        Unit::Tflops => format::tflops(value),
        Unit::Gb => format::gb(value),
        Unit::Gpu => format!("GPU {value:.0}"),
    }
}

/// A metric of `report` as the page's figures write it: [`shown`], but an
/// axis with no communication shows a dash for its hidden share. The report
/// counts that share as 1 (nothing exposed), which would read as an axis
/// overlapped perfectly rather than one with nothing to overlap.
pub fn shown_of(metric: Metric, report: &Report) -> String {
    match metric {
        Metric::Axis(axis, figure @ (AxisFigure::Hidden | AxisFigure::NotExposed)) => {
            let a = report.axes.get(axis);
            a.hidden_share().map_or_else(
                || "–".to_string(),
                |_| {
                    shown(
                        metric,
                        if figure == AxisFigure::Hidden {
                            a.hidden
                        } else {
                            a.not_exposed
                        },
                    )
                },
            )
        }
        _ => shown(metric, metric.get(report)),
    }
}

/// Why a placeholder cannot be filled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TemplateError {
    /// A `{` without its `}`.
    Unclosed,
    /// A name that is no metric.
    UnknownMetric(String),
    /// A prefix other than `before:`, `delta:`, `diff:` and `gone:`.
    UnknownPrefix(String),
    /// A placeholder that needs the `before` run where there is none.
    NeedsBefore(String),
}

/// Fills every placeholder; an unusable one is left as written, so a text
/// with a mistake still reads (`check` finds the mistake in tests).
pub fn fill(text: &str, after: &Report, before: Option<&Report>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let tail = &rest[open..];
        let Some(close) = tail.find('}') else {
            out.push_str(tail);
            return out;
        };
        let key = &tail[1..close];
        match value(key, after, before) {
            Ok(v) => out.push_str(&v),
            Err(_) => out.push_str(&tail[..=close]),
        }
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Every placeholder's problem (empty when the text fills completely).
pub fn check(text: &str, after: &Report, before: Option<&Report>) -> Vec<TemplateError> {
    let mut errors = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let tail = &rest[open..];
        let Some(close) = tail.find('}') else {
            errors.push(TemplateError::Unclosed);
            break;
        };
        if let Err(e) = value(&tail[1..close], after, before) {
            errors.push(e);
        }
        rest = &tail[close + 1..];
    }
    errors
}

fn value(key: &str, after: &Report, before: Option<&Report>) -> Result<String, TemplateError> {
    let (prefix, name) = key.split_once(':').unwrap_or(("", key));
    let metric =
        Metric::from_name(name).ok_or_else(|| TemplateError::UnknownMetric(name.to_string()))?;
    let before_value = || {
        before
            .map(|b| metric.get(b))
            .ok_or_else(|| TemplateError::NeedsBefore(key.to_string()))
    };
    let now = metric.get(after);
    // Times in one unit throughout a chapter's text (issue 58: "277.2 µs of
    // CP's 65.36 ms"): the unit and decimals of the longer step of the two.
    let step = before.map_or(after.step_time_ms, |b| {
        b.step_time_ms.max(after.step_time_ms)
    });
    let show = |v: f64| match metric.unit() {
        Unit::Ms if step >= 10_000.0 => format!("{:.2} s", v / 1e3),
        Unit::Ms if step >= 1_000.0 => format!("{v:.1} ms"),
        Unit::Ms => format!("{v:.2} ms"),
        _ => shown(metric, v),
    };
    Ok(match prefix {
        "" => show(now),
        "before" => show(before_value()?),
        "delta" => {
            let d = now - before_value()?;
            let body = show(d.abs());
            // A change that rounds to nothing has no sign: no "−0.0 ms".
            let zero = body.chars().filter(char::is_ascii_digit).all(|c| c == '0');
            let sign = if zero {
                ""
            } else if d >= 0.0 {
                "+"
            } else {
                "−"
            };
            format!("{sign}{body}")
        }
        "diff" => show((now - before_value()?).abs()),
        "gone" => {
            let b = before_value()?;
            format::pct(if b.abs() > 0.0 { (b - now) / b } else { 0.0 })
        }
        other => return Err(TemplateError::UnknownPrefix(other.to_string())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_axis_without_communication_shows_no_hidden_share() {
        // The one-queue preset is data parallel only: TP and PP move nothing.
        let s = overlap_core::presets::scenario("one-queue").expect("a preset");
        let r = overlap_core::simulate(&s).report;
        let hidden = |a| Metric::Axis(a, AxisFigure::Hidden);
        for axis in [overlap_core::Axis::Tp, overlap_core::Axis::Pp] {
            assert_eq!(r.axes.get(axis).comm_ms, 0.0);
            assert_eq!(shown_of(hidden(axis), &r), "–");
        }
        let dp = overlap_core::Axis::Dp;
        assert!(r.axes.get(dp).comm_ms > 0.0);
        assert_eq!(shown_of(hidden(dp), &r), format::pct(r.axes.get(dp).hidden));
        assert_eq!(shown_of(Metric::StepTime, &r), format::ms(r.step_time_ms));
    }

    fn report(step_ms: f64) -> Report {
        let scenario = overlap_core::presets::default_preset()
            .input()
            .resolve()
            .expect("the default preset resolves");
        let mut r = overlap_core::simulate(&scenario).report;
        r.step_time_ms = step_ms;
        r
    }

    #[test]
    fn fills_current_before_delta_and_gone() {
        let (b, a) = (report(100.0), report(75.0));
        let text = "{step_time_ms} was {before:step_time_ms} ({delta:step_time_ms}, {diff:step_time_ms} less, {gone:step_time_ms} gone)";
        assert_eq!(
            fill(text, &a, Some(&b)),
            "75.00 ms was 100.00 ms (−25.00 ms, 25.00 ms less, 25.0% gone)"
        );
        assert!(check(text, &a, Some(&b)).is_empty());
    }

    #[test]
    fn reports_each_unusable_placeholder() {
        let a = report(1.0);
        let errors = check("{nope} {before:step_time_ms} {x:mfu} {mfu", &a, None);
        assert_eq!(
            errors,
            vec![
                TemplateError::UnknownMetric("nope".into()),
                TemplateError::NeedsBefore("before:step_time_ms".into()),
                TemplateError::UnknownPrefix("x".into()),
                TemplateError::Unclosed,
            ]
        );
        assert_eq!(fill("a {nope} b", &a, None), "a {nope} b");
    }
}
