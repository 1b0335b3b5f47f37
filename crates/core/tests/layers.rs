//! The core's layers import only downwards: model <- collective <-
//! workload <- sim <- output, and input over model and workload. A cycle would let a change in
//! the model's bottom reach back into itself through the parser or the
//! report; this test reads every source file's `crate::` paths and fails on
//! any import that goes up or sideways. Inside the workload, its three
//! sub-layers (cost <- graph <- build) are held to the same rule, file by
//! file, from the imports the tidy crate resolves.

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

/// The workload's sub-layer of a file (its path under `src`), bottom up:
/// its formulas, the task graph, the builders; `workload/mod.rs` stands
/// over all three. `None` outside the workload.
fn workload_rank(rel: &Path) -> Option<u8> {
    let mut parts = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string());
    if parts.next()? != "workload" {
        return None;
    }
    Some(match parts.next()?.as_str() {
        "cost" => 0,
        "graph" => 1,
        "build" => 2,
        "mod.rs" => 3,
        other => {
            panic!("workload/{other} is outside the workload's sub-layers (cost, graph, build)")
        }
    })
}

/// Each import, resolved to its file, from a workload sub-layer to one
/// above it.
fn upward_workload_imports(src: &Path, graph: &overlap_tidy::ImportGraph) -> Vec<String> {
    let mut out = Vec::new();
    for (from, edges) in graph {
        let Some(from_rank) = workload_rank(from.strip_prefix(src).unwrap()) else {
            continue;
        };
        for (to, path) in edges {
            let to_rank = workload_rank(to.strip_prefix(src).unwrap());
            if to_rank.is_some_and(|r| r > from_rank) {
                out.push(format!("{from:?} imports {path}"));
            }
        }
    }
    out
}

#[test]
fn the_workload_imports_down_its_sub_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = overlap_tidy::sources(&src);
    let graph = overlap_tidy::import_graph(&src, &files);
    let in_workload = files
        .iter()
        .filter(|f| workload_rank(f.strip_prefix(&src).unwrap()).is_some())
        .count();
    assert!(in_workload > 30, "{in_workload} workload files found");
    let up = upward_workload_imports(&src, &graph);
    assert!(
        up.is_empty(),
        "imports against the workload's sub-layers (cost <- graph <- build):\n{}",
        up.join("\n")
    );
}

#[test]
fn the_sub_layer_checker_sees_an_upward_import() {
    let src = Path::new("/src");
    let edge = |from: &str, to: &str| {
        let mut edges = std::collections::BTreeMap::new();
        edges.insert(src.join(to), to.to_string());
        (src.join(from), edges)
    };
    let graph: overlap_tidy::ImportGraph = [
        edge("workload/cost/moe.rs", "workload/build/schedule/mod.rs"),
        edge("workload/build/sharding.rs", "workload/cost/params.rs"),
        edge("output/memory.rs", "workload/build/mod.rs"),
    ]
    .into_iter()
    .collect();
    let up = upward_workload_imports(src, &graph);
    assert_eq!(up.len(), 1, "{up:?}");
    assert!(up[0].contains("cost/moe.rs"), "{up:?}");
}
