//! The app's folders import only downwards, and no file imports its way
//! back to itself:
//!
//! dom <- state <- timeline <- web <- client <- serve <- ui <- the entry points
//!
//! `dom.rs` is the browser's primitives (document, clock, the body's data
//! marks); `state/` the signals the page shows; `timeline/` the canvas,
//! its animation loop and theme; `web/` the address bar, downloads and the
//! widget's host; `client/` the page's side of a worker (the envelope,
//! spawning, `WorkerClient`, the jobs that drive a session's machine, the
//! runner and the importer), which reaches components only through
//! context; `serve/` the worker program, which starts a helper worker with
//! the client's `WorkerClient`; `ui/` the components and the panes.
//! `lib.rs`, `main.rs` and `widget.rs` mount it all. A component that a
//! lower folder imported would tie the runner or the canvas to the page's
//! layout again.
//!
//! Inside `client/` and `serve/` the files are sub-layers of their own
//! ([`SUB_LAYERS`]): the plumbing every job shares sits below the jobs,
//! so that none of it can come to depend on one job. Everywhere in `src/`
//! the files' imports form no loop: a loop between two files is one
//! concept cut in two, or two concepts that cannot be read apart.
//!
//! This test reads every source file's module paths (`crate::`,
//! `super::`, `self::` and the modules a file declares), resolves each to
//! the file that defines it, and fails on an import that goes up a layer
//! or a sub-layer, and on any loop.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use overlap_tidy::{code_of, import_graph, loops, named_paths, rust_files, shown_loops};

/// A layer and its rank; a module may import from ranks below its own, and
/// from its own layer.
fn rank(layer: &str) -> Option<u8> {
    Some(match layer {
        "dom" => 0,
        "state" => 1,
        "timeline" => 2,
        "web" => 3,
        "client" => 4,
        "serve" => 5,
        "ui" => 6,
        "top" => 7,
        _ => return None,
    })
}

/// The sub-layers of a folder, lowest first: a file may import files of
/// its own sub-layer and of those below it. Every file of a folder listed
/// here is ranked; its `mod.rs`, which declares them, is above them all.
const SUB_LAYERS: &[(&str, &[&[&str]])] = &[
    (
        "client",
        &[
            // The envelope of every message, both ways.
            &["wire"],
            // Starting a worker; one worker's life: ready, queue, crash.
            &["spawn"],
            &["worker_client"],
            // A session's machine driven over a `WorkerClient`.
            &["job"],
            // What the runner shows.
            &["no_timeline", "show", "decoding"],
            // The jobs.
            &["runner", "importer"],
        ],
    ),
    (
        "serve",
        &[
            // Plain computations, no worker in them.
            &["figures_cache", "figures_first", "kineto_zip"],
            // The worker's scope: its replies, clocks, simulator, counts.
            &["scope"],
            // One request kind each.
            &["trace_reader", "helper", "curves", "exports", "search"],
            // Simulate, which shares a large step's figures with the helper.
            &["simulate"],
        ],
    ),
];

/// The layer of a file: its folder under `src/`, or for a file directly in
/// `src/`, its own name (`dom.rs`), the entry points being "top".
fn layer_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy()
        .to_string();
    match first.as_str() {
        "lib.rs" | "main.rs" | "widget.rs" => "top".to_string(),
        _ => first.trim_end_matches(".rs").to_string(),
    }
}

/// A file's sub-layer within its folder, when the folder is ranked:
/// `Err` names a file the table does not rank.
fn sub_rank(src: &Path, file: &Path) -> Result<Option<usize>, String> {
    let rel = file.strip_prefix(src).unwrap();
    let folder = rel.parent().map(|p| p.to_string_lossy().replace('\\', "/"));
    let Some((_, ranks)) = SUB_LAYERS
        .iter()
        .find(|(f, _)| Some(*f) == folder.as_deref())
    else {
        return Ok(None);
    };
    let stem = rel.file_stem().unwrap().to_string_lossy();
    if stem == "mod" {
        return Ok(Some(ranks.len()));
    }
    ranks
        .iter()
        .position(|names| names.contains(&stem.as_ref()))
        .map(Some)
        .ok_or_else(|| format!("{rel:?} has no sub-layer: rank it in SUB_LAYERS"))
}

fn sources() -> (PathBuf, Vec<PathBuf>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(
        files.len() > 30,
        "the app's sources were not found under {src:?}"
    );
    (src, files)
}

#[test]
fn every_import_goes_down_a_layer() {
    let (src, files) = sources();
    let graph = import_graph(&src, &files);
    let mut violations = Vec::new();
    for (file, edges) in &graph {
        let from = layer_of(&src, file);
        let from_rank =
            rank(&from).unwrap_or_else(|| panic!("{file:?} is outside the layers ({from})"));
        let from_sub = sub_rank(&src, file).unwrap_or_else(|e| panic!("{e}"));
        for (to_file, path) in edges {
            let to = layer_of(&src, to_file);
            let Some(to_rank) = rank(&to) else {
                violations.push(format!("{file:?} imports `{path}`: name its layer"));
                continue;
            };
            if to_rank > from_rank {
                violations.push(format!("{file:?} ({from}) imports `{path}` from {to}"));
            }
            let same_folder = file.parent() == to_file.parent();
            if let (true, Some(a)) = (same_folder, from_sub) {
                let b = sub_rank(&src, to_file)
                    .unwrap_or_else(|e| panic!("{e}"))
                    .unwrap_or(0);
                if b > a {
                    violations.push(format!(
                        "{file:?} imports `{path}` from a higher sub-layer ({to_file:?})"
                    ));
                }
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
fn no_file_imports_its_way_back_to_itself() {
    let (src, files) = sources();
    let graph = import_graph(&src, &files);
    let shown = shown_loops(&src, &graph);
    assert!(
        shown.is_empty(),
        "files that import one another:\n{}",
        shown.join("\n--\n")
    );
}

#[test]
fn the_reader_sees_paths_groups_and_skips_comments_and_tests() {
    let text = "use crate::state::AppState;\n\
                // crate::ui::nothing\n\
                let x = crate::dom::now_ms();\n\
                use crate::{timeline::frame, web};\n\
                use super::spawn::{self, WorkerHandle};\n\
                mod inner;\n\
                let y = inner::go();\n\
                #[cfg(test)]\n\
                mod tests { use crate::ui::embed; }\n";
    let code = code_of(text);
    let module = vec!["client".to_string(), "runner".to_string()];
    let found: Vec<String> = named_paths(&code, &module)
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        found,
        [
            "state::AppState",
            "dom::now_ms",
            "timeline::frame",
            "web",
            "client::spawn::self",
            "client::spawn::WorkerHandle",
            "client::runner::inner::go",
        ]
    );
    // `super` from a folder's root is the folder's parent.
    let found = named_paths(&["super::dom::x();"], &["ui".to_string()]);
    assert_eq!(found, [vec!["dom".to_string(), "x".to_string()]]);
    // An import upwards is found: the test can fail.
    let src = Path::new("/x/src");
    assert_eq!(
        layer_of(src, Path::new("/x/src/timeline/panel.rs")),
        "timeline"
    );
    assert_eq!(layer_of(src, Path::new("/x/src/dom.rs")), "dom");
    assert_eq!(layer_of(src, Path::new("/x/src/widget.rs")), "top");
    assert!(rank("ui") > rank("timeline"));
    assert!(rank("serve") > rank("client"));
}

#[test]
fn a_loop_between_files_is_found() {
    let (a, b, c) = (
        PathBuf::from("a.rs"),
        PathBuf::from("b.rs"),
        PathBuf::from("c.rs"),
    );
    let edge = |to: &PathBuf| BTreeMap::from([(to.clone(), String::new())]);
    let mut graph = BTreeMap::from([
        (a.clone(), edge(&b)),
        (b.clone(), edge(&c)),
        (c.clone(), BTreeMap::new()),
    ]);
    assert!(loops(&graph).is_empty());
    graph.insert(c.clone(), edge(&a));
    assert_eq!(loops(&graph), [vec![a, b, c]]);
}
