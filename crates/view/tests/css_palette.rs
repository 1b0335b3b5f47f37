//! The style sheet's colours are the palette's: `www/style.css` holds a
//! block of `light-dark(light, dark)` variables written from
//! `overlap_view::palette` (each axis by its name, the compute kinds and
//! the page's ground), so that a colour, a new axis's among them, is
//! declared once, in the palette. The page's legend, figures, switches and
//! cards colour with these variables; the canvas and the SVG paint with the
//! palette itself.
//!
//! The rules that colour a thing by its axis (`.axis-card.tp`, ...) are
//! written from `Axis::ALL` too, each where it stands in the style sheet
//! (`PER_AXIS`), so that a new axis adds no hand-written line.
//!
//! This test writes the block and the rules again and fails when the style
//! sheet holds others. To rewrite them after a change of the palette or of
//! the axes:
//!
//! ```sh
//! OVERLAP_LAB_BLESS=1 cargo test -p overlap-view --test css_palette
//! ```

use std::fs;
use std::path::PathBuf;
use std::sync::Once;

use overlap_core::Axis;
use overlap_view::palette::{Palette, DARK, LIGHT};

/// The line that opens the block, which names where it comes from.
const BEGIN: &str = "  /* The palette's (crates/view/src/palette.rs), written from it by
     OVERLAP_LAB_BLESS=1 cargo test -p overlap-view --test css_palette */
";
/// The line after the block: the colours only the page uses follow it.
const END: &str = "  /* The page's own. */\n";

/// Where a palette keeps one of its colours.
type Colour = fn(&Palette) -> &'static str;

/// The style sheet's name for each colour of the palette beside the axes,
/// and where the palette keeps it.
const ROLES: [(&str, Colour); 10] = [
    ("fwd", |p| p.forward),
    ("bwd", |p| p.backward),
    ("wgrad", |p| p.weight_gradient),
    ("rec", |p| p.recompute),
    ("opt", |p| p.step),
    ("bg", |p| p.background),
    ("lane", |p| p.lane),
    ("text", |p| p.text),
    ("muted", |p| p.muted),
    ("stripe", |p| p.exposed_stripe),
];

/// The rules written once per axis, `{a}` standing for the axis's name:
/// each is a run of lines in the style sheet, one per axis in `Axis::ALL`'s
/// order, where the first axis's line stands.
const PER_AXIS: [&str; 6] = [
    ".axis-row.{a} { border-color: var(--{a}); }",
    ".toggle.{a} input { accent-color: var(--{a}); }",
    ".axis-card.{a} { border-top-color: var(--{a}); }",
    ".window-chart.{a} .bar.comm { fill: var(--{a}); }",
    ".sw.{a} { background: var(--{a}); }",
    "  .sticky-figures .sf-seg.{a} { background: var(--{a}); }",
];

/// The rule whose selector lists every axis, `{a}` standing for the
/// axis's name: one line, its selectors joined by ", " before `{ ... }`.
const ALL_AXES: (&str, &str) = (".toggle.{a} > label", " { font-weight: 600; }");

/// The axis's name `line` holds where `rule` holds `{a}`, if it is
/// `rule`'s line for some axis.
fn axis_of<'a>(rule: &str, line: &'a str) -> Option<&'a str> {
    let prefix = &rule[..rule.find("{a}")?];
    let rest = line.strip_prefix(prefix)?;
    let name = &rest[..rest
        .find(|c: char| !c.is_ascii_lowercase())
        .unwrap_or(rest.len())];
    let axis = Axis::ALL.into_iter().any(|a| a.name() == name);
    (axis && rule.replace("{a}", name) == line).then_some(name)
}

/// The style sheet with its per-axis rules written from `Axis::ALL`.
fn with_axis_rules(css: &str) -> String {
    let lines: Vec<&str> = css.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end_matches('\n');
        if let Some(rule) = PER_AXIS.iter().find(|r| axis_of(r, line).is_some()) {
            while i < lines.len() && axis_of(rule, lines[i].trim_end_matches('\n')).is_some() {
                i += 1;
            }
            for a in Axis::ALL {
                out.push_str(&rule.replace("{a}", a.name()));
                out.push('\n');
            }
            continue;
        }
        let (item, tail) = ALL_AXES;
        if line.ends_with(tail) && axis_of(item, line.split(", ").next().unwrap()).is_some() {
            let items: Vec<String> = Axis::ALL
                .iter()
                .map(|a| item.replace("{a}", a.name()))
                .collect();
            out.push_str(&items.join(", "));
            out.push_str(tail);
            out.push('\n');
            i += 1;
            continue;
        }
        out.push_str(lines[i]);
        i += 1;
    }
    out
}

fn style_sheet() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../www/style.css")
}

/// The block's lines: one variable per axis (`--tp`, `--pp`, ...), in
/// `Axis::ALL`'s order, then one per role.
fn block() -> String {
    let axes = Axis::ALL
        .iter()
        .map(|&a| (a.name(), LIGHT.axis[a.index()], DARK.axis[a.index()]));
    let roles = ROLES
        .iter()
        .map(|&(name, colour)| (name, colour(&LIGHT), colour(&DARK)));
    axes.chain(roles)
        .map(|(name, light, dark)| format!("  --{name}: light-dark({light}, {dark});\n"))
        .collect()
}

/// The style sheet's text before the block, the block, and after it.
fn split(css: &str) -> (&str, &str, &str) {
    let start = css
        .find(BEGIN)
        .expect("the style sheet opens the palette's block")
        + BEGIN.len();
    let end = start + css[start..].find(END).expect("the block ends");
    (&css[..start], &css[start..end], &css[end..])
}

/// The style sheet as the palette and the axes write it.
fn written(css: &str) -> String {
    let (before, _, after) = split(css);
    with_axis_rules(&format!("{before}{}{after}", block()))
}

/// The style sheet's text; with `OVERLAP_LAB_BLESS` set, first rewritten
/// from the palette and the axes, once for all the tests (which run side
/// by side and would otherwise write over each other).
fn read_style_sheet() -> String {
    static BLESS: Once = Once::new();
    let path = style_sheet();
    if std::env::var_os("OVERLAP_LAB_BLESS").is_some() {
        BLESS.call_once(|| {
            let css = fs::read_to_string(&path).unwrap();
            let want = written(&css);
            if css != want {
                fs::write(&path, want).unwrap();
            }
        });
    }
    fs::read_to_string(&path).unwrap()
}

#[test]
fn the_per_axis_rules_are_written_from_the_axes() {
    let css = read_style_sheet();
    for rule in PER_AXIS {
        let first = rule.replace("{a}", Axis::ALL[0].name());
        assert!(css.contains(&first), "the style sheet lacks {first}");
    }
    assert!(
        css == with_axis_rules(&css),
        "www/style.css's per-axis rules are not one per axis; rewrite them with\n\
         OVERLAP_LAB_BLESS=1 cargo test -p overlap-view --test css_palette"
    );
}

#[test]
fn the_style_sheet_variables_are_written_from_the_palette() {
    let css = read_style_sheet();
    let (_, found, _) = split(&css);
    let want = block();
    assert!(
        found == want,
        "www/style.css's palette block is not the palette's; rewrite it with\n\
         OVERLAP_LAB_BLESS=1 cargo test -p overlap-view --test css_palette\n\
         found:\n{found}\nwritten from the palette:\n{want}"
    );
}

/// The palette is declared once: no variable of the block is declared
/// again elsewhere, no second palette follows the system's preference,
/// and a link's theme only fixes `color-scheme`.
#[test]
fn the_style_sheet_declares_each_colour_once() {
    let css = read_style_sheet();
    assert!(!css.contains("prefers-color-scheme"), "a second palette");
    for theme in ["light", "dark"] {
        let rule = format!(r#":root[data-theme="{theme}"] {{ color-scheme: {theme}; }}"#);
        assert!(css.contains(&rule), "lacks {rule}");
    }
    for line in block().lines() {
        let name = line.trim_start().split(':').next().unwrap();
        let declared = format!("{name}:");
        assert_eq!(css.matches(&declared).count(), 1, "{name} declared twice");
    }
}
