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

use std::collections::{BTreeMap, BTreeSet};
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
            &["trace_reader", "helper", "curves", "exports"],
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

/// The module path a file defines: `src/ui/mod.rs` is `ui`,
/// `src/ui/embed.rs` `ui::embed`, `src/lib.rs` the crate itself.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The code of a file that imports count in: before its `#[cfg(test)]`
/// module (tests may reach anywhere), without comment lines.
fn code_of(text: &str) -> Vec<&str> {
    let code = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    code.lines()
        .map(str::trim_start)
        .filter(|l| !l.starts_with("//"))
        .collect()
}

/// The modules a file declares (`mod a;`, `pub mod b;`): their names
/// stand for paths below the file's own.
fn declared_modules(code: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in code {
        let rest = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        if let Some(name) = rest.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            out.insert(name.trim().to_string());
        }
    }
    out
}

fn ident(s: &str) -> String {
    s.trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The identifiers of a path after its head: `a::b::{c, d::e}` gives
/// `[a, b, c]` and `[a, b, d, e]`; a group's members are each a path.
fn tails(rest: &str) -> Vec<Vec<String>> {
    let mut path = Vec::new();
    let mut rest = rest;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            let members: Vec<Vec<String>> = inner
                .split(',')
                .flat_map(|m| tails(m.trim_start()))
                .filter(|t| !t.is_empty())
                .map(|t| path.iter().cloned().chain(t).collect())
                .collect();
            return if members.is_empty() {
                vec![path]
            } else {
                members
            };
        }
        let id = ident(rest);
        if id.is_empty() {
            return vec![path];
        }
        rest = &rest.trim_start()[id.len()..];
        path.push(id);
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => return vec![path],
        }
    }
}

/// Every module path the code names, made absolute (from the crate's
/// root): `crate::a::b`, `super::c` (from the file's parent module),
/// `self::d`, and `m::e` for a module `m` the file declares.
fn named_paths(code: &[&str], module: &[String]) -> Vec<Vec<String>> {
    let declared = declared_modules(code);
    let mut out = Vec::new();
    for line in code {
        if line.starts_with("mod ") || line.starts_with("pub mod ") {
            continue;
        }
        let bytes = line.as_bytes();
        let mut at = 0;
        while at < line.len() {
            let rest = &line[at..];
            // A path starts a word: not the tail of another path or name.
            let starts_word = at == 0 || {
                let b = bytes[at - 1];
                !(b.is_ascii_alphanumeric() || b == b'_' || b == b':')
            };
            if !starts_word || !rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                at += rest.chars().next().map_or(1, char::len_utf8);
                continue;
            }
            let head = ident(rest);
            at += head.len();
            let Some(mut after) = rest[head.len()..].strip_prefix("::") else {
                continue;
            };
            let base: Vec<String> = match head.as_str() {
                "crate" => Vec::new(),
                "self" => module.to_vec(),
                "super" => {
                    let mut levels = 1;
                    while let Some(more) = after.strip_prefix("super::") {
                        levels += 1;
                        after = more;
                    }
                    module[..module.len().saturating_sub(levels)].to_vec()
                }
                name if declared.contains(name) => {
                    module.iter().cloned().chain([name.to_string()]).collect()
                }
                _ => continue,
            };
            for t in tails(after) {
                out.push(base.iter().cloned().chain(t).collect());
            }
        }
    }
    out
}

/// The file that defines the longest prefix of `path`, if any.
fn file_of(src: &Path, path: &[String]) -> Option<PathBuf> {
    for len in (1..=path.len()).rev() {
        let dir: PathBuf = path[..len].iter().collect();
        for candidate in [
            src.join(&dir).with_extension("rs"),
            src.join(&dir).join("mod.rs"),
        ] {
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    Some(src.join("lib.rs"))
}

/// Every file's imports of other files in `src/`, each with the path
/// that names it.
fn import_graph(src: &Path, files: &[PathBuf]) -> BTreeMap<PathBuf, BTreeMap<PathBuf, String>> {
    let mut graph = BTreeMap::new();
    for file in files {
        // `main.rs` is a crate of its own: it reaches the app through
        // `overlap_lab_app::`, never `crate::`.
        if file.file_name().is_some_and(|n| n == "main.rs") {
            graph.insert(file.clone(), BTreeMap::new());
            continue;
        }
        let text = fs::read_to_string(file).unwrap();
        let code = code_of(&text);
        let module = module_of(src, file);
        let mut edges = BTreeMap::new();
        for path in named_paths(&code, &module) {
            if path.is_empty() {
                continue;
            }
            if let Some(to) = file_of(src, &path) {
                if &to != file {
                    edges.entry(to).or_insert_with(|| path.join("::"));
                }
            }
        }
        graph.insert(file.clone(), edges);
    }
    graph
}

/// The loops of the graph: each strongly connected set of two files or
/// more, in file order (Tarjan's algorithm).
fn loops(graph: &BTreeMap<PathBuf, BTreeMap<PathBuf, String>>) -> Vec<Vec<PathBuf>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<PathBuf, BTreeMap<PathBuf, String>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a PathBuf) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph[v].keys() {
                if !self.graph.contains_key(w) {
                    continue;
                }
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut set = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    set.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.found.push(set);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found.sort();
    walk.found
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
    let found = loops(&graph);
    let shown: Vec<String> = found
        .iter()
        .map(|set| {
            set.iter()
                .map(|f| {
                    let to: Vec<String> = graph[f]
                        .iter()
                        .filter(|(t, _)| set.contains(t))
                        .map(|(_, p)| p.clone())
                        .collect();
                    format!(
                        "  {:?} imports {}",
                        f.strip_prefix(&src).unwrap(),
                        to.join(", ")
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    assert!(
        found.is_empty(),
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
