//! Which traces the page builds itself: a trace's size is estimated from
//! the bars on screen, and one too large for a browser tab is refused with
//! the command line that writes it.

/// The page builds a trace up to this size; a larger one would hold
/// hundreds of megabytes several times over (simulation, text, download)
/// in a browser tab.
pub const MAX_TRACE_BYTES: f64 = 256.0 * 1024.0 * 1024.0;

/// The two trace files the page builds, each in a worker of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// One Chrome trace-event file, what `overlap-lab trace` writes.
    Chrome,
    /// One PyTorch-profiler (Kineto) trace per simulated GPU, zipped: what
    /// `overlap-lab trace --kineto DIR` writes, for HolisticTraceAnalysis.
    Kineto,
}

impl TraceKind {
    /// The worker message that asks for it and carries it back.
    pub fn message(self) -> &'static str {
        match self {
            Self::Chrome => "trace",
            Self::Kineto => "kineto",
        }
    }

    /// What one bar costs at most in the (uncompressed) trace with its share
    /// of the counters, flow arrows or launch events, measured on the
    /// presets (`trace_size_estimates_hold_on_the_presets` prints them):
    /// Chrome 165 to 340 bytes, Kineto about 630. Erring high only refuses
    /// a little early.
    fn bytes_per_bar(self) -> f64 {
        match self {
            Self::Chrome => 340.0,
            Self::Kineto => 650.0,
        }
    }

    /// The file name for a download of `stem`, and its MIME type.
    pub fn file_name(self, stem: &str) -> (String, &'static str) {
        match self {
            Self::Chrome => (format!("{stem}.trace.json"), "application/json"),
            Self::Kineto => (format!("{stem}-kineto.zip"), "application/zip"),
        }
    }

    /// The command that writes it outside the browser.
    pub fn command(self, scenario: &str) -> String {
        match self {
            Self::Chrome => format!("overlap-lab trace {scenario} > trace.json"),
            Self::Kineto => format!("overlap-lab trace --kineto traces {scenario}"),
        }
    }
}

/// The trace's size, estimated from the number of bars on screen.
pub fn estimated_trace_bytes(kind: TraceKind, bars: usize) -> f64 {
    bars as f64 * kind.bytes_per_bar()
}

/// Why the page does not build this trace, with the command that does; `None`
/// when the page builds it.
pub fn trace_refusal(
    kind: TraceKind,
    bars: usize,
    preset_id: &str,
    is_preset: bool,
) -> Option<String> {
    let bytes = estimated_trace_bytes(kind, bars);
    if bytes <= MAX_TRACE_BYTES {
        return None;
    }
    let command = if is_preset {
        kind.command(&format!("preset:{preset_id}"))
    } else {
        kind.command("scenario.json") + ", with the scenario JSON below saved as scenario.json"
    };
    Some(format!(
        "This trace would be about {:.0} MB ({} bars), more than the {:.0} MB a browser tab can build \
         safely, so the page does not make it. The command line writes it: {command}",
        bytes / 1e6,
        crate::format::count(bars),
        MAX_TRACE_BYTES / 1e6,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::presets;

    #[test]
    fn a_trace_too_large_for_the_page_is_refused_with_the_cli_command() {
        let chrome = TraceKind::Chrome;
        assert_eq!(
            trace_refusal(chrome, 200_000, "megatron-145.6b", true),
            None
        );
        let why = trace_refusal(chrome, 1_636_546, "megatron-1t", true).expect("refused");
        assert!(why.contains("556 MB"), "{why}");
        assert!(why.contains("(1\u{202f}636\u{202f}546 bars)"), "{why}");
        assert!(
            why.contains("overlap-lab trace preset:megatron-1t"),
            "{why}"
        );
        let edited = trace_refusal(chrome, 1_636_546, "megatron-1t", false).expect("refused");
        assert!(edited.contains("scenario.json"), "{edited}");
        let kineto =
            trace_refusal(TraceKind::Kineto, 1_636_546, "megatron-1t", true).expect("refused");
        assert!(
            kineto.contains("overlap-lab trace --kineto traces preset:megatron-1t"),
            "{kineto}"
        );
    }

    /// The size guard estimates from the bars on screen: the estimate must
    /// cover what the trace really weighs, without refusing far too early.
    #[test]
    fn trace_size_estimates_hold_on_the_presets() {
        for preset in [
            "didactic",
            "contention",
            "megatron-1.7b",
            "korthikanti-22b-full",
        ] {
            let scenario = presets::scenario(preset).expect("presets resolve");
            let sim = overlap_core::simulate(&scenario);
            let bars = sim.timeline.interval_count();
            let chrome = overlap_core::trace::chrome_trace(&sim.timeline).len() as f64;
            let kineto: f64 = overlap_core::kineto::rank_traces(&scenario, &sim.timeline)
                .iter()
                .map(|t| t.json.len() as f64)
                .sum();
            for (kind, actual) in [(TraceKind::Chrome, chrome), (TraceKind::Kineto, kineto)] {
                let estimate = estimated_trace_bytes(kind, bars);
                println!("{preset} {kind:?}: {bars} bars, {actual} bytes, estimate {estimate}");
                assert!(
                    estimate >= 0.9 * actual && estimate <= 2.5 * actual,
                    "{preset} {kind:?}: estimate {estimate} for {actual} bytes"
                );
            }
        }
    }
}
