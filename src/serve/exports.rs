//! The exports that need the whole step: `Trace` (the Chrome trace's
//! UTF-8 bytes, exactly what `overlap-lab trace` writes) and `Kineto` (the
//! zip of the Kineto traces, the files `overlap-lab trace --kineto`
//! writes). The page starts a worker of its own for each, so that the
//! simulation worker stays free for the controls.

use overlap_core::{Scenario, ScenarioInput, Simulator};
use overlap_session::WorkerReply;

use super::kineto_zip;
use super::scope::{post, refused, resolve};

/// Posts bytes of an export as `reply`'s array, transferred.
fn post_bytes(reply: &WorkerReply, bytes: &[u8]) {
    let bytes = js_sys::Uint8Array::from(bytes);
    post(reply, &[&bytes], &[bytes.buffer()]);
}

/// Answers `Trace`.
pub fn trace(gen: u64, input: &ScenarioInput) {
    let Some(scenario) = resolve(gen, input) else {
        return;
    };
    // Simulated afresh, as the CLI does, so that the file is byte for byte
    // what `overlap-lab trace` writes; refused as the CLI refuses it.
    let Some(sim) = whole_step(gen, &scenario) else {
        return;
    };
    let mut text = overlap_core::trace::chrome_trace(&sim.timeline);
    drop(sim);
    text.push('\n');
    post_bytes(&WorkerReply::Trace { gen }, text.as_bytes());
}

/// Answers `Kineto`.
pub fn kineto(gen: u64, input: &ScenarioInput, folder: &str) {
    let Some(scenario) = resolve(gen, input) else {
        return;
    };
    let Some(sim) = whole_step(gen, &scenario) else {
        return;
    };
    let traces = overlap_core::kineto::rank_traces(&scenario, &sim.timeline);
    drop(sim);
    match kineto_zip::zip_traces(folder, &traces) {
        Ok(zip) => {
            drop(traces);
            post_bytes(&WorkerReply::Kineto { gen }, &zip);
        }
        Err(e) => refused(gen, format!("the zip could not be written: {e}"), None),
    }
}

/// The step with its timeline for an export, or a refusal naming the field
/// when its timeline is over the core's limit.
fn whole_step(gen: u64, scenario: &Scenario) -> Option<overlap_core::Simulation> {
    match Simulator::default().try_simulate(scenario) {
        Ok(sim) => Some(sim),
        Err(e) => {
            refused(gen, e.message, Some(e.field));
            None
        }
    }
}
