//! The core's layers import only downwards: model <- collective <-
//! workload <- sim <- output, and input over model and workload. A cycle would let a change in
//! the model's bottom reach back into itself through the parser or the
//! report; this test reads every source file's `crate::` paths and fails on
//! any import that goes up or sideways.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// A layer and its rank; a module may import from ranks below its own, and
/// from its own layer.
fn rank(layer: &str) -> Option<u8> {
    Some(match layer {
        "model" => 0,
        // Collective libraries: their calls' cost, what they hold, their
        // kernels' names; on the model, under the graph that uses them.
        "collective" => 1,
        "workload" => 2,
        "sim" => 3,
        "input" => 4,
        "output" => 5,
        // A step's run, from its scenario to its figures and timeline.
        "run" => 6,
        // The crate root, its facade and the published-figures check sit on
        // top, and the layout search beside them: it runs whole simulations.
        "top" | "search" => 7,
        _ => return None,
    })
}

/// Layers at the same height that must not import each other. Input and
/// sim both stand on workload, and neither needs the other.
fn sideways(from: &str, to: &str) -> bool {
    matches!((from, to), ("input", "sim") | ("sim", "input"))
}

fn layer_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy()
        .to_string();
    if rel.components().count() == 1 {
        // lib.rs and the published-figure checks, which run whole simulations.
        "top".to_string()
    } else {
        first
    }
}

/// The first path segment after each `crate::` in the file's code, outside
/// `#[cfg(test)]` modules (tests may reach anywhere) and comments.
fn imported_layers(text: &str) -> BTreeSet<String> {
    let code = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut found = BTreeSet::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let segment: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '{')
                .collect();
            let segment = segment.trim_start_matches('{').to_string();
            found.insert(segment);
        }
    }
    found
}

#[test]
fn every_import_goes_down_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = overlap_tidy::sources(&src);
    assert!(
        files.len() > 20,
        "the core's sources were not found under {src:?}"
    );
    let mut violations = Vec::new();
    for file in &files {
        let from = layer_of(&src, file);
        let from_rank = rank(&from).unwrap_or_else(|| {
            panic!(
                "{file:?} is outside the layers (model, collective, workload, sim, input, output, run)"
            )
        });
        let text = fs::read_to_string(file).unwrap();
        for to in imported_layers(&text) {
            let Some(to_rank) = rank(&to) else {
                // The facade's flat paths hide the layer: below the top they are refused.
                if rank(&from) != rank("top") {
                    violations.push(format!("{file:?} imports `crate::{to}`: name its layer"));
                }
                continue;
            };
            if to_rank > from_rank || sideways(&from, &to) {
                violations.push(format!("{file:?} ({from}) imports from {to}"));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports against the layers:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_checker_sees_an_upward_import() {
    let found =
        imported_layers("use crate::output::timeline::Timeline;\n// crate::sim in a comment\n");
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        vec!["output".to_string()]
    );
    assert!(rank("output") > rank("model"));
    assert!(sideways("input", "sim"));
}
