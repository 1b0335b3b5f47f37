//! The scenario on screen as PyTorch-profiler (Kineto) traces, one per
//! simulated GPU, in one zip: unzipped, its folder is a trace directory that
//! HolisticTraceAnalysis reads (`TraceAnalysis(trace_dir=...)`), holding the
//! same files `overlap-lab trace --kineto DIR` writes.

use std::io::{Cursor, Write};

use leptos::prelude::*;
use overlap_core::kineto::RankTrace;
use wasm_bindgen::JsValue;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use crate::export::{file_stem, save_url};
use crate::state::AppState;

/// The traces deflated into one archive, each as `folder/rank<N>.json`.
/// Entries carry no timestamps, so equal traces give equal bytes.
pub fn zip_traces(folder: &str, traces: &[RankTrace]) -> zip::result::ZipResult<Vec<u8>> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    zip.add_directory(format!("{folder}/"), options)?;
    for t in traces {
        zip.start_file(format!("{folder}/{}", t.file_name), options)?;
        zip.write_all(t.json.as_bytes())?;
    }
    Ok(zip.finish()?.into_inner())
}

/// The zip of the scenario on screen, simulated again from the resolved
/// scenario exactly as the CLI does; `None` before any scenario resolved.
fn scenario_zip(state: AppState, folder: &str) -> Option<Vec<u8>> {
    let scenario = state.resolved.get_untracked()?;
    let sim = overlap_core::simulate(&scenario);
    let traces = overlap_core::kineto::rank_traces(&scenario, &sim.timeline);
    zip_traces(folder, &traces).ok()
}

/// Saves bytes as a file through a Blob and an object URL.
fn download_bytes(name: &str, mime: &str, bytes: &[u8]) -> Option<()> {
    let parts = js_sys::Array::of1(&JsValue::from(js_sys::Uint8Array::from(bytes)));
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &bag).ok()?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).ok()?;
    save_url(name, &url);
    // The download has started by then; the URL only holds memory.
    set_timeout(
        move || {
            let _ = web_sys::Url::revoke_object_url(&url);
        },
        std::time::Duration::from_secs(30),
    );
    Some(())
}

/// The button that saves the traces for HolisticTraceAnalysis, with its own
/// message when they cannot be made.
#[component]
pub fn KinetoZipButton() -> impl IntoView {
    let state = expect_context::<AppState>();
    let failed = RwSignal::new(false);
    let save = move |_| {
        let folder = format!("{}-kineto", file_stem(state));
        let ok = scenario_zip(state, &folder)
            .and_then(|bytes| download_bytes(&format!("{folder}.zip"), "application/zip", &bytes));
        failed.set(ok.is_none());
    };
    view! {
        <button type="button" on:click=save title="PyTorch-profiler (Kineto) traces, one per simulated GPU: unzip and open the folder with HolisticTraceAnalysis">"Download traces for HTA (zip)"</button>
        {move || failed.get().then(|| view! {
            <p class="field-error" role="status">"The traces could not be made: no valid scenario has been simulated yet."</p>
        })}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::presets;
    use std::io::Read;

    #[test]
    fn the_zip_holds_every_rank_file_byte_for_byte() {
        let scenario = presets::scenario(presets::DEFAULT_ID).unwrap();
        let sim = overlap_core::simulate(&scenario);
        let traces = overlap_core::kineto::rank_traces(&scenario, &sim.timeline);
        let bytes = zip_traces("traces", &traces).unwrap();
        let raw: usize = traces.iter().map(|t| t.json.len()).sum();
        println!(
            "default scenario: {} rank files, {raw} bytes of JSON, zip {} bytes",
            traces.len(),
            bytes.len()
        );
        assert!(bytes.len() < raw / 4, "the zip is not deflated");
        let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
        for t in &traces {
            let mut text = String::new();
            archive
                .by_name(&format!("traces/{}", t.file_name))
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            assert_eq!(text, t.json);
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["distributedInfo"]["rank"], t.rank);
        }
        assert_eq!(
            archive.len(),
            traces.len() + 1,
            "a folder and the rank files"
        );
    }

    #[test]
    fn equal_traces_give_equal_zips() {
        let scenario = presets::scenario("contention").unwrap();
        let sim = overlap_core::simulate(&scenario);
        let traces = overlap_core::kineto::rank_traces(&scenario, &sim.timeline);
        assert_eq!(
            zip_traces("t", &traces).unwrap(),
            zip_traces("t", &traces).unwrap()
        );
    }
}
