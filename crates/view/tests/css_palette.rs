//! The style sheet's colours are the palette's: `www/style.css` holds a
//! block of `light-dark(light, dark)` variables written from
//! `overlap_view::palette` (each axis by its name, the compute kinds and
//! the page's ground), so that a colour, a new axis's among them, is
//! declared once, in the palette. The page's legend, figures, switches and
//! cards colour with these variables; the canvas and the SVG paint with the
//! palette itself.
//!
//! This test writes the block again and fails when the style sheet holds
//! another. To rewrite it after a change of the palette:
//!
//! ```sh
//! OVERLAP_LAB_BLESS=1 cargo test -p overlap-view --test css_palette
//! ```

use std::fs;
use std::path::PathBuf;

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

#[test]
fn the_style_sheet_variables_are_written_from_the_palette() {
    let path = style_sheet();
    let css = fs::read_to_string(&path).unwrap();
    let (before, found, after) = split(&css);
    let want = block();
    if std::env::var_os("OVERLAP_LAB_BLESS").is_some() && found != want {
        fs::write(&path, format!("{before}{want}{after}")).unwrap();
        return;
    }
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
    let css = fs::read_to_string(style_sheet()).unwrap();
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
