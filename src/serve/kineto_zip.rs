//! The scenario on screen as PyTorch-profiler (Kineto) traces, one per
//! simulated GPU, in one zip: unzipped, its folder is a trace directory that
//! HolisticTraceAnalysis reads (`TraceAnalysis(trace_dir=...)`), holding the
//! same files `overlap-lab trace --kineto DIR` writes. The simulation worker
//! builds it (`exports::kineto`), so that a large step never holds the page.

use std::io::{Cursor, Write};

use overlap_core::kineto::RankTrace;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

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
