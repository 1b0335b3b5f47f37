//! How the workspace's source files import one another, read from their
//! text: every module path a file names (`crate::`, `super::`, `self::`
//! and the modules it declares) resolved to the file that defines it, and
//! the loops of that graph. The crates' layer tests and the workspace's
//! tidy test read it; nothing in the product does.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A file's imports of other files of its crate, each with the path that
/// names it.
pub type ImportGraph = BTreeMap<PathBuf, BTreeMap<PathBuf, String>>;

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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
pub fn module_of(src: &Path, file: &Path) -> Vec<String> {
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
pub fn code_of(text: &str) -> Vec<&str> {
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
pub fn declared_modules(code: &[&str]) -> BTreeSet<String> {
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
pub fn tails(rest: &str) -> Vec<Vec<String>> {
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
pub fn named_paths(code: &[&str], module: &[String]) -> Vec<Vec<String>> {
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
pub fn file_of(src: &Path, path: &[String]) -> Option<PathBuf> {
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
pub fn import_graph(src: &Path, files: &[PathBuf]) -> ImportGraph {
    let mut graph = BTreeMap::new();
    for file in files {
        // A `main.rs` beside a `lib.rs` is a crate of its own: it reaches
        // the library by its name, never `crate::`.
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
pub fn loops(graph: &ImportGraph) -> Vec<Vec<PathBuf>> {
    struct Walk<'a> {
        graph: &'a ImportGraph,
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

/// Every `.rs` file under `dir`, sorted.
pub fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    files.sort();
    files
}

/// The loops of a graph as a reader sees them: each file of a loop with
/// the paths by which it imports the others.
pub fn shown_loops(src: &Path, graph: &ImportGraph) -> Vec<String> {
    loops(graph)
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
                        f.strip_prefix(src).unwrap_or(f),
                        to.join(", ")
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}
