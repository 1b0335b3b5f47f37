//! How numbers from the core's report and timeline are written on the page.
//! Formatting only: every value shown comes from the core, unchanged.

/// A duration given in milliseconds, with a unit that keeps 3-4 significant digits.
pub fn ms(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let a = v.abs();
    if a >= 10_000.0 {
        format!("{:.2} s", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.1} ms")
    } else if a >= 1.0 {
        format!("{v:.2} ms")
    } else if a >= 0.001 {
        format!("{:.1} µs", v * 1e3)
    } else if a == 0.0 {
        "0 ms".to_string()
    } else {
        format!("{:.2} µs", v * 1e3)
    }
}

/// A duration given in milliseconds, in the unit and with the decimals
/// that `ms` gives `reference_ms`: the figures of one sentence share the
/// unit of its largest ("3460.8 ms of 18510.0 ms", not "3460.8 ms of
/// 18.51 s").
pub fn ms_like(v: f64, reference_ms: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let r = reference_ms.abs();
    if r >= 10_000.0 {
        format!("{:.2} s", v / 1e3)
    } else if r >= 100.0 {
        format!("{v:.1} ms")
    } else if r >= 1.0 {
        format!("{v:.2} ms")
    } else {
        format!("{:.1} µs", v * 1e3)
    }
}

/// A duration given in seconds (timeline units).
pub fn secs(v: f64) -> String {
    ms(v * 1e3)
}

/// A fraction 0..1 as a percentage.
pub fn pct(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    format!("{:.1}%", v * 100.0)
}

/// A ratio such as a speed-up, with three decimals.
pub fn ratio(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    format!("{v:.3}×")
}

/// TFLOP/s with one decimal (the unit is written beside it).
pub fn tflops(v: f64) -> String {
    format!("{v:.1}")
}

/// Gigabytes, one decimal: memory per GPU.
pub fn gb(v: f64) -> String {
    format!("{v:.1} GB")
}

/// A whole count with its thousands grouped by thin spaces (SI style, as the
/// page writes large numbers: "1 636 548"), so that a reader takes in its
/// size at a glance. U+202F does not break, so the number stays on one line.
pub fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 * 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('\u{202f}');
        }
        out.push(d);
    }
    out
}

/// A byte count in B, kB, MB or GB.
pub fn bytes(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.2} GB", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2} MB", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.1} kB", v / 1e3)
    } else {
        format!("{v:.0} B")
    }
}

/// A bandwidth in GB/s.
pub fn gbps(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0} GB/s")
    } else {
        format!("{v:.1} GB/s")
    }
}

/// The exact value for `data-value`: Rust's shortest round-trip form, so that
/// `parseFloat` in a test gives back the core's f64 bit for bit.
pub fn raw(v: f64) -> String {
    format!("{v}")
}

/// A tick label for the time axis, `step_s` being the tick spacing.
pub fn tick(t_s: f64, step_s: f64) -> String {
    if step_s >= 1.0 {
        format!("{t_s:.0} s")
    } else if step_s >= 0.1 {
        format!("{t_s:.1} s")
    } else if step_s >= 1e-3 {
        let decimals = if step_s >= 0.01 { 0 } else { 1 };
        format!("{:.*} ms", decimals, t_s * 1e3)
    } else if t_s.abs() >= 0.01 {
        // Deep in a long step: milliseconds with the decimals the step needs,
        // not an eight-digit count of microseconds.
        let decimals = (-(step_s * 1e3).log10()).ceil().clamp(1.0, 6.0) as usize;
        format!("{:.*} ms", decimals, t_s * 1e3)
    } else {
        format!("{:.0} µs", t_s * 1e6)
    }
}

/// A "nice" tick spacing (1, 2 or 5 times a power of ten) near `span / target`.
pub fn nice_step(span: f64, target: f64) -> f64 {
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / target.max(1.0);
    let pow = 10f64.powf(raw.log10().floor());
    let m = raw / pow;
    let nice = if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    };
    nice * pow
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_group_thousands_with_thin_spaces() {
        let n = "\u{202f}";
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), format!("1{n}000"));
        assert_eq!(count(1_636_548), format!("1{n}636{n}548"));
        assert_eq!(count(123_456_789), format!("123{n}456{n}789"));
    }

    #[test]
    fn raw_values_round_trip_exactly() {
        for v in [100.49183769020148, 1e-7, 0.1 + 0.2, 123456789.123] {
            assert_eq!(raw(v).parse::<f64>().unwrap().to_bits(), v.to_bits());
        }
    }

    #[test]
    fn tick_steps_are_one_two_or_five_times_a_power_of_ten() {
        for span in [0.0013, 0.1, 0.7, 18.0, 106.0] {
            let step = nice_step(span, 8.0);
            let m = step / 10f64.powf(step.log10().floor());
            assert!(
                [1.0, 2.0, 5.0, 10.0].iter().any(|n| (m - n).abs() < 1e-9),
                "{span}: {step}"
            );
            assert!(span / step >= 3.0 && span / step <= 20.0, "{span}: {step}");
        }
        assert_eq!(nice_step(0.0, 8.0), 1.0);
        assert_eq!(nice_step(f64::NAN, 8.0), 1.0);
    }

    #[test]
    fn deep_ticks_in_a_long_step_stay_in_milliseconds() {
        assert_eq!(tick(48.929_1, 1e-4), "48929.1 ms");
        assert_eq!(tick(48.929_12, 2e-5), "48929.12 ms");
        assert_eq!(tick(0.000_25, 5e-5), "250 µs");
    }

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(ms(106769.7), "106.77 s");
        assert_eq!(ms(100.49), "100.5 ms");
        assert_eq!(ms(0.2271), "227.1 µs");
    }
}
