//! The house rules every product crate keeps, checked over the workspace
//! (after rust-analyzer's own tidy test): no product file over
//! `MAX_LINES` but the ones named below with their reason, no two files
//! that import each other (directly or around a loop), and every module
//! named in `docs/architecture.md`.

use std::fs;
use std::path::{Path, PathBuf};

use overlap_tidy::{import_graph, shown_loops, sources};

/// The most lines a product file holds: past it a file holds more than one
/// concept, or one concept a reader cannot take in at once.
const MAX_LINES: usize = 700;

/// Files over `MAX_LINES`, each with its reason. A data table may stay
/// long; any other file here is a known gap, pinned: the test fails when
/// one of them drops under the limit, so that its line goes too.
const LONG_FILES: &[(&str, &str)] = &[(
    "crates/core/src/input/table.rs",
    "data: the field table, one declaration per scenario field",
)];

/// The workspace's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Each product crate's source folder, from the workspace's root.
const PRODUCT_SOURCES: &[&str] = &[
    "crates/core/src",
    "crates/trace/src",
    "crates/view/src",
    "crates/session/src",
    "crates/cli/src",
    "crates/tidy/src",
    "src",
];

fn product_files() -> Vec<(PathBuf, String)> {
    let root = root();
    PRODUCT_SOURCES
        .iter()
        .flat_map(|dir| sources(&root.join(dir)))
        .map(|f| {
            let rel = f
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (f, rel)
        })
        .collect()
}

#[test]
fn product_files_stay_under_the_line_budget() {
    let mut over = Vec::new();
    let mut listed_but_short = Vec::new();
    for (file, rel) in product_files() {
        let lines = fs::read_to_string(&file).unwrap().lines().count();
        let listed = LONG_FILES.iter().any(|(f, _)| *f == rel);
        if lines > MAX_LINES && !listed {
            over.push(format!("{rel}: {lines} lines"));
        }
        if lines <= MAX_LINES && listed {
            listed_but_short.push(format!("{rel}: {lines} lines, take it off LONG_FILES"));
        }
    }
    for (f, _) in LONG_FILES {
        assert!(
            root().join(f).is_file(),
            "{f} is listed in LONG_FILES but gone"
        );
    }
    assert!(
        over.is_empty() && listed_but_short.is_empty(),
        "split these by concept, or name the reason in LONG_FILES:\n{}\n{}",
        over.join("\n"),
        listed_but_short.join("\n")
    );
}

/// Import loops between files not yet taken apart, each the set of its
/// files as the test prints it. Pinned: a loop that changes or goes fails
/// the test, so that this list only shrinks.
const KNOWN_LOOPS: &[&[&str]] = &[];

#[test]
fn no_file_imports_its_way_back_to_itself() {
    let root = root();
    let mut found: Vec<Vec<String>> = Vec::new();
    let mut shown = Vec::new();
    for dir in PRODUCT_SOURCES {
        let src = root.join(dir);
        let files = sources(&src);
        let graph = import_graph(&src, &files);
        for set in overlap_tidy::loops(&graph) {
            found.push(
                set.iter()
                    .map(|f| {
                        f.strip_prefix(&root)
                            .unwrap()
                            .to_string_lossy()
                            .replace('\\', "/")
                    })
                    .collect(),
            );
        }
        shown.extend(shown_loops(&src, &graph));
    }
    let known: Vec<Vec<String>> = KNOWN_LOOPS
        .iter()
        .map(|set| set.iter().map(|f| f.to_string()).collect())
        .collect();
    assert!(
        found == known,
        "import loops between files (break them, or pin a known one in KNOWN_LOOPS):\n{:#?}\n{}",
        found,
        shown.join("\n--\n")
    );
}

/// The name a module goes by in `docs/architecture.md`: its file's name,
/// or its folder's for a `mod.rs`.
fn module_name(rel: &str) -> String {
    let path = Path::new(rel);
    match path.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs") => {
            let folder = path.parent().and_then(|p| p.file_name()).unwrap();
            format!("{}/", folder.to_string_lossy())
        }
        Some(name) => name.to_string(),
        None => rel.to_string(),
    }
}

#[test]
fn the_architecture_names_every_module() {
    let doc = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let missing: Vec<String> = product_files()
        .into_iter()
        .map(|(_, rel)| rel)
        .filter(|rel| {
            let name = module_name(rel);
            // An entry point is named by its crate.
            !matches!(name.as_str(), "lib.rs" | "main.rs") && !doc.contains(&name)
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md names none of these modules:\n{}",
        missing.join("\n")
    );
}
