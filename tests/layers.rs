//! The app's folders import only downwards:
//!
//! dom <- state <- timeline <- web <- worker <- ui <- the entry points
//!
//! `dom.rs` is the browser's primitives (document, clock, the body's data
//! marks); `state/` the signals the page shows; `timeline/` the canvas,
//! its animation loop and theme; `web/` the address bar, downloads and the
//! widget's host; `worker/` the simulation worker and the page's runner
//! (which reaches components only through context); `ui/` the components.
//! `lib.rs`, `main.rs` and `widget.rs` mount it all. A component that a
//! lower folder imported would tie the runner or the canvas to the page's
//! layout again; this test reads every source file's `crate::` paths and
//! fails on any import that goes up.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// A layer and its rank; a module may import from ranks below its own, and
/// from its own layer.
fn rank(layer: &str) -> Option<u8> {
    Some(match layer {
        "dom" => 0,
        "state" => 1,
        "timeline" => 2,
        "web" => 3,
        "worker" => 4,
        "ui" => 5,
        "top" => 6,
        _ => return None,
    })
}

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

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The first path segment after each `crate::` in the file's code, outside
/// `#[cfg(test)]` modules (tests may reach anywhere) and comments; a group
/// (`crate::{a, b::c}`) gives each of its first segments.
fn imported_layers(text: &str) -> BTreeSet<String> {
    let code = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut found = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                found.extend(inner.split(',').map(ident).filter(|s| !s.is_empty()));
            } else {
                found.insert(ident(rest));
            }
        }
    }
    found
}

#[test]
fn every_import_goes_down_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(
        files.len() > 30,
        "the app's sources were not found under {src:?}"
    );
    let mut violations = Vec::new();
    for file in &files {
        let from = layer_of(&src, file);
        let from_rank =
            rank(&from).unwrap_or_else(|| panic!("{file:?} is outside the layers ({from})"));
        let text = fs::read_to_string(file).unwrap();
        for to in imported_layers(&text) {
            let Some(to_rank) = rank(&to) else {
                violations.push(format!("{file:?} imports `crate::{to}`: name its layer"));
                continue;
            };
            if to_rank > from_rank {
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
fn the_reader_sees_paths_groups_and_skips_comments_and_tests() {
    let text = "use crate::state::AppState;\n\
                // crate::ui::nothing\n\
                let x = crate::dom::now_ms();\n\
                use crate::{timeline::frame, web};\n\
                #[cfg(test)]\n\
                mod tests { use crate::ui::embed; }\n";
    let found: Vec<String> = imported_layers(text).into_iter().collect();
    assert_eq!(found, ["dom", "state", "timeline", "web"]);
    // An import upwards is found: the test can fail.
    let src = Path::new("/x/src");
    assert_eq!(
        layer_of(src, Path::new("/x/src/timeline/panel.rs")),
        "timeline"
    );
    assert_eq!(layer_of(src, Path::new("/x/src/dom.rs")), "dom");
    assert_eq!(layer_of(src, Path::new("/x/src/widget.rs")), "top");
    assert!(rank("ui") > rank("timeline"));
}
