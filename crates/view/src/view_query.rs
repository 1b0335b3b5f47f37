//! The view part of a share link (interface.md, "Share links"): zoom,
//! playhead, link lanes, tour chapter and embedding, read and written as
//! query pairs. The scenario part is the core's `share_link`.

use overlap_core::search::Objective;
use overlap_core::FieldError;

use crate::classify_link::classify_rules;
use crate::palette::Theme;
use crate::panes::{self, Pane, PaneId, DEFAULT_SWEEP_FIELD};
use crate::shown_gpus::ShownGpus;

/// View keys the page understands besides the scenario's. Interface: course
/// material uses them; add keys freely, never rename one.
pub const VIEW_KEYS: &[&str] = &[
    "zoom",
    "playhead",
    "link_gpu",
    "gpus",
    "chapter",
    "embed",
    "controls",
    "figures",
    "theme",
    "view",
    "sweep",
    "values",
    "search_gpus",
    "objective",
    "classify",
];

/// Names that stand for several controls: `controls=overlap` is the three
/// overlap switches.
pub const CONTROL_GROUPS: &[(&str, &[&str])] = &[("overlap", &["tp", "pp", "dp"])];

/// Controls an embedded page can show (`controls=tp,pp,dp`).
pub const CONTROL_NAMES: &[&str] = &[
    "tp",
    "pp",
    "dp",
    "ep",
    "cp",
    "tp_chunks",
    "bucket_mb",
    "sm_tax",
    "preset",
    "playback",
];

/// Shown in an embedded page when the link names no `controls`.
pub const DEFAULT_CONTROLS: &[&str] = &["tp", "pp", "dp", "playback"];

/// The view part of a link.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewParams {
    /// Visible part of the step, as fractions of it; `None` shows it all.
    pub zoom: Option<(f64, f64)>,
    /// Playhead as a fraction of the step; `None` is the end (all shown).
    pub playhead: Option<f64>,
    /// Which simulated GPU the link lanes show.
    pub link_gpu: usize,
    /// Which simulated GPUs the lanes are drawn for.
    pub shown_gpus: ShownGpus,
    /// The guided tour's open chapter, 1-based as the page counts them
    /// (a link writes its `tour::link_number`).
    pub chapter: Option<usize>,
    /// The sweep or bus-bandwidth picture, if one is open.
    pub pane: Pane,
    /// The measured view's classification rules (`classify=`), one a line
    /// as `overlap-lab import --classify-file` reads them, checked.
    pub classify: Option<String>,
}

/// How the page was opened: fixed for the life of the page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mode {
    /// The compact page for course material.
    pub embed: bool,
    /// The embedded page's controls, in link order.
    pub controls: Vec<&'static str>,
    /// Whether the link named `controls` (kept in rewritten links).
    pub controls_given: bool,
    /// Whether the embed shows the per-axis cards (`figures=axes`): window,
    /// exposed, contention and the card's reading, beside the headline.
    pub figures_axes: bool,
    /// The theme the link fixes (`theme=light|dark`) for the page, its
    /// embeds and its exports; `None` follows the reader's system.
    pub theme: Option<Theme>,
}

/// Records one unusable view key, clipped as the core clips a link's own
/// errors, and at most as many as it lists.
pub fn fail(errors: &mut Vec<FieldError>, field: &str, message: String) {
    if errors.len() < overlap_core::share_link::MAX_LINK_ERRORS {
        errors.push(FieldError::new(field, &message));
    }
}

fn fraction(raw: &str) -> Option<f64> {
    raw.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && (0.0..=1.0).contains(x))
}

/// Reads the view keys (`chapters`: how many chapters the tour has),
/// reporting each unusable value with what is valid.
pub fn parse_view(
    pairs: &[(String, String)],
    chapters: usize,
    errors: &mut Vec<FieldError>,
) -> (ViewParams, Mode) {
    let mut view = ViewParams::default();
    let mut mode = Mode::default();
    let (mut pane, mut field, mut values) = (None::<PaneId>, None::<String>, None::<String>);
    let (mut search_gpus, mut objective) = (None::<u64>, Objective::default());
    for (key, raw) in pairs {
        match key.as_str() {
            "view" => match panes::find(raw) {
                Some(row) => pane = Some(row.id),
                None => fail(
                    errors,
                    "view",
                    format!("\"{raw}\" is not valid: {}", panes::keys_text()),
                ),
            },
            "sweep" => match overlap_core::input::fields::find(raw) {
                Some(f) => field = Some(f.path.to_string()),
                None => fail(
                    errors,
                    "sweep",
                    format!(
                        "\"{raw}\" is not a scenario field: valid is a field's path such as {DEFAULT_SWEEP_FIELD}"
                    ),
                ),
            },
            "values" => values = Some(raw.clone()).filter(|v| !v.trim().is_empty()),
            "classify" => match classify_rules(raw) {
                Ok(rules) => view.classify = rules,
                Err(message) => fail(errors, "classify", message),
            },
            "search_gpus" => match raw.parse::<u64>() {
                Ok(n) if (1..=overlap_core::input::validate::MAX_GPUS).contains(&n) => {
                    search_gpus = Some(n);
                }
                _ => fail(
                    errors,
                    "search_gpus",
                    format!(
                        "\"{raw}\" is not valid: a number of GPUs from 1 to {}, whole nodes",
                        overlap_core::input::validate::MAX_GPUS
                    ),
                ),
            },
            "objective" => match Objective::from_name(raw) {
                Some(o) => objective = o,
                None => fail(
                    errors,
                    "objective",
                    format!("\"{raw}\" is not valid: step, memory or both"),
                ),
            },
            "zoom" => {
                let parsed = raw
                    .split_once('-')
                    .and_then(|(a, b)| Some((fraction(a)?, fraction(b)?)))
                    .filter(|(a, b)| a < b);
                match parsed {
                    Some((a, b)) if a <= 0.0 && b >= 1.0 => view.zoom = None,
                    Some(z) => view.zoom = Some(z),
                    None => fail(
                        errors,
                        "zoom",
                        format!(
                            "\"{raw}\" is not a part of the step: valid is from-to as fractions, \
                             0 ≤ from < to ≤ 1 (for example 0.25-0.5)"
                        ),
                    ),
                }
            }
            "playhead" => match fraction(raw) {
                Some(p) if p >= 1.0 => view.playhead = None,
                Some(p) => view.playhead = Some(p),
                None => fail(
                    errors,
                    "playhead",
                    format!("\"{raw}\" is not valid: a fraction of the step from 0 to 1"),
                ),
            },
            "link_gpu" => match raw.parse::<usize>() {
                Ok(g) if g < 100_000 => view.link_gpu = g,
                _ => fail(
                    errors,
                    "link_gpu",
                    format!("\"{raw}\" is not valid: the index of a simulated GPU, 0 or more"),
                ),
            },
            "gpus" => match ShownGpus::parse(raw) {
                Ok(shown) => view.shown_gpus = shown,
                Err(message) => fail(errors, "gpus", message),
            },
            // A retired number (a merged chapter) opens the chapter it is
            // part of now.
            "chapter" => match raw
                .parse::<usize>()
                .ok()
                .and_then(crate::tour::chapter_of_link)
                .filter(|c| *c <= chapters)
            {
                Some(c) => view.chapter = Some(c),
                None => fail(
                    errors,
                    "chapter",
                    format!(
                        "\"{raw}\" is not a chapter of the guided tour: valid are 1 to {}",
                        crate::tour::link_number(chapters)
                    ),
                ),
            },
            "embed" => match raw.as_str() {
                "1" | "true" => mode.embed = true,
                "0" | "false" => mode.embed = false,
                _ => fail(errors, "embed", format!("\"{raw}\" is not valid: 1 or 0")),
            },
            "figures" => match raw.as_str() {
                "axes" => mode.figures_axes = true,
                "" | "none" => mode.figures_axes = false,
                _ => fail(
                    errors,
                    "figures",
                    format!("\"{raw}\" is not valid: axes (the per-axis cards) or none"),
                ),
            },
            "theme" => match Theme::from_name(raw) {
                Some(t) => mode.theme = Some(t),
                None => fail(
                    errors,
                    "theme",
                    format!("\"{raw}\" is not valid: light or dark"),
                ),
            },
            "controls" => {
                mode.controls_given = true;
                for name in raw.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    let group = CONTROL_GROUPS.iter().find(|(g, _)| *g == name);
                    let members: &[&'static str] = match group {
                        Some((_, members)) => members,
                        None => CONTROL_NAMES
                            .iter()
                            .position(|c| *c == name)
                            .map_or(&[], |i| &CONTROL_NAMES[i..=i]),
                    };
                    for c in members {
                        if !mode.controls.contains(c) {
                            mode.controls.push(c);
                        }
                    }
                    if members.is_empty() && name != "none" {
                        fail(
                            errors,
                            "controls",
                            format!(
                                "unknown control \"{name}\": valid are {}, overlap (tp,pp,dp) or none",
                                CONTROL_NAMES.join(", ")
                            ),
                        );
                    }
                }
            }
            _ => {}
        }
    }
    if !mode.controls_given {
        mode.controls = DEFAULT_CONTROLS.to_vec();
    }
    view.pane = match (pane, field) {
        (Some(PaneId::BusBandwidth), _) => Pane::BusBandwidth,
        (Some(PaneId::Search), _) => Pane::Search {
            gpus: search_gpus,
            objective,
        },
        (Some(PaneId::Timeline), _) | (None, None) => Pane::Timeline,
        // `sweep=` alone opens the sweep too.
        (Some(PaneId::Sweep) | None, field) => Pane::Sweep {
            field: field.unwrap_or_else(|| DEFAULT_SWEEP_FIELD.to_string()),
            values,
        },
    };
    (view, mode)
}

/// Keeps what a query value may hold as it is readable: letters, digits,
/// `-_.~` and the comma of control lists.
pub fn escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~,".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A fraction with at most `digits` decimals and no trailing zeros.
pub fn frac_text(x: f64, digits: usize) -> String {
    let s = format!("{x:.digits$}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// The view's keys for a link, leaving out what equals the default.
pub fn view_pairs(view: &ViewParams) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some((a, b)) = view.zoom {
        // Enough decimals that the window is the same to a pixel however deep
        // the zoom (the scene allows a millionth of the step).
        let span = (b - a).max(1e-9);
        let digits = ((-span.log10()).ceil().max(0.0) as usize + 4).clamp(5, 12);
        out.push((
            "zoom",
            format!("{}-{}", frac_text(a, digits), frac_text(b, digits)),
        ));
    }
    if let Some(p) = view.playhead {
        out.push(("playhead", frac_text(p, 4)));
    }
    if view.link_gpu > 0 {
        out.push(("link_gpu", view.link_gpu.to_string()));
    }
    if view.shown_gpus != ShownGpus::All {
        out.push(("gpus", view.shown_gpus.key()));
    }
    if let Some(c) = view.chapter {
        out.push(("chapter", crate::tour::link_number(c).to_string()));
    }
    if view.pane != Pane::Timeline {
        out.push(("view", view.pane.row().key.to_string()));
    }
    if let Pane::Search { gpus, objective } = &view.pane {
        if let Some(n) = gpus {
            out.push(("search_gpus", n.to_string()));
        }
        if *objective != Objective::default() {
            out.push(("objective", objective.name().to_string()));
        }
    }
    if let Pane::Sweep { field, values } = &view.pane {
        out.push(("sweep", field.clone()));
        if let Some(v) = values {
            out.push(("values", v.clone()));
        }
    }
    if let Some(rules) = &view.classify {
        out.push(("classify", rules.clone()));
    }
    out
}

/// The embedding keys for a link (only an embedded page has any) and the
/// theme, when one is fixed.
pub fn mode_pairs(mode: &Mode) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if mode.embed {
        out.push(("embed", "1".to_string()));
        if mode.controls_given {
            let list = if mode.controls.is_empty() {
                "none".to_string()
            } else {
                mode.controls.join(",")
            };
            out.push(("controls", list));
        }
        if mode.figures_axes {
            out.push(("figures", "axes".to_string()));
        }
    }
    if let Some(t) = mode.theme {
        out.push(("theme", t.name().to_string()));
    }
    out
}

/// Appends `key=value` pairs (values escaped) to a query.
pub fn join(base: String, pairs: &[(&str, String)]) -> String {
    let mut q = base;
    for (k, v) in pairs {
        q.push('&');
        q.push_str(k);
        q.push('=');
        q.push_str(&escape(v));
    }
    q
}

/// The query of a scenario given as `?v=1&...`, `v=1&...` or a whole link.
pub fn query_part(text: &str) -> &str {
    let text = text.trim();
    let query = text.split_once('?').map_or(text, |(_, q)| q);
    query.split('#').next().unwrap_or_default()
}

/// Escapes text for an HTML attribute value in double quotes.
pub fn attr_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::{presets, share_link};

    /// As many chapters as a tour might have; the bound is the caller's.
    const CHAPTERS: usize = 6;

    fn pairs(q: &str) -> Vec<(String, String)> {
        share_link::decode(q, VIEW_KEYS).view
    }

    #[test]
    fn view_key_errors_are_clipped_and_counted_like_the_links_own() {
        let long = "9".repeat(10_000);
        let mut errors = Vec::new();
        parse_view(&[("zoom".to_string(), long)], CHAPTERS, &mut errors);
        assert_eq!(errors.len(), 1);
        let shown = errors[0].to_string();
        assert!(
            shown.chars().count() < 800,
            "{} characters",
            shown.chars().count()
        );
        let many: Vec<(String, String)> = (0..100)
            .map(|i| ("playhead".to_string(), format!("bad{i}")))
            .collect();
        let mut errors = Vec::new();
        parse_view(&many, CHAPTERS, &mut errors);
        assert_eq!(errors.len(), share_link::MAX_LINK_ERRORS);
    }

    #[test]
    fn view_keys_round_trip_through_their_text() {
        let view = ViewParams {
            zoom: Some((0.25, 0.5)),
            playhead: Some(0.3),
            link_gpu: 3,
            shown_gpus: ShownGpus::Range { first: 8, last: 15 },
            chapter: Some(2),
            pane: Pane::Timeline,
            classify: None,
        };
        let q = join(
            share_link::encode(&presets::default_preset().input(), None),
            &view_pairs(&view),
        );
        assert_eq!(
            q,
            "v=1&zoom=0.25-0.5&playhead=0.3&link_gpu=3&gpus=8-15&chapter=2"
        );
        let mut errors = Vec::new();
        let (back, mode) = parse_view(&pairs(&q), CHAPTERS, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(back, view);
        assert!(!mode.embed);
    }

    #[test]
    fn defaults_are_left_out_of_links() {
        assert!(view_pairs(&ViewParams::default()).is_empty());
        let mut errors = Vec::new();
        let (view, _) = parse_view(
            &pairs("zoom=0-1&playhead=1&gpus=all"),
            CHAPTERS,
            &mut errors,
        );
        assert_eq!(view, ViewParams::default());
        assert!(errors.is_empty());
    }

    #[test]
    fn bad_view_values_are_named_with_what_is_valid() {
        let mut errors = Vec::new();
        parse_view(
            &pairs("zoom=0.5-0.2&playhead=2&link_gpu=-1&gpus=15-8&chapter=0&embed=yes&controls=tp,nope&theme=sepia"),
            CHAPTERS,
            &mut errors,
        );
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["zoom", "playhead", "link_gpu", "gpus", "chapter", "embed", "controls", "theme"]
        );
        assert!(
            errors.iter().all(|e| e.message.contains("valid")),
            "{errors:?}"
        );
    }

    #[test]
    fn controls_keep_link_order_and_default_without_the_key() {
        let mut errors = Vec::new();
        let (_, mode) = parse_view(&pairs("embed=1&controls=dp,tp,dp"), CHAPTERS, &mut errors);
        assert_eq!(mode.controls, ["dp", "tp"]);
        assert_eq!(
            mode_pairs(&mode),
            [
                ("embed", "1".to_string()),
                ("controls", "dp,tp".to_string())
            ]
        );
        let (_, mode) = parse_view(&pairs("embed=1"), CHAPTERS, &mut errors);
        assert_eq!(mode.controls, DEFAULT_CONTROLS);
        let (_, mode) = parse_view(&pairs("embed=1&controls="), CHAPTERS, &mut errors);
        assert!(mode.controls.is_empty());
        assert_eq!(mode_pairs(&mode)[1].1, "none");
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn an_embed_shows_the_axis_cards_with_figures_axes() {
        let mut errors = Vec::new();
        let (_, mode) = parse_view(
            &pairs("embed=1&controls=ep&figures=axes"),
            CHAPTERS,
            &mut errors,
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert!(mode.figures_axes);
        assert_eq!(
            mode_pairs(&mode),
            [
                ("embed", "1".to_string()),
                ("controls", "ep".to_string()),
                ("figures", "axes".to_string())
            ]
        );
        let (_, mode) = parse_view(&pairs("embed=1"), CHAPTERS, &mut errors);
        assert!(!mode.figures_axes);
        assert_eq!(mode_pairs(&mode), [("embed", "1".to_string())]);
        parse_view(&pairs("embed=1&figures=cards"), CHAPTERS, &mut errors);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].message.contains("axes"), "{errors:?}");
    }

    #[test]
    fn a_theme_is_read_and_kept_embedded_or_not() {
        let mut errors = Vec::new();
        let (_, mode) = parse_view(&pairs("theme=dark"), CHAPTERS, &mut errors);
        assert_eq!(mode.theme, Some(Theme::Dark));
        assert_eq!(mode_pairs(&mode), [("theme", "dark".to_string())]);
        let (_, mode) = parse_view(&pairs("embed=1&theme=light"), CHAPTERS, &mut errors);
        assert_eq!(
            mode_pairs(&mode),
            [("embed", "1".to_string()), ("theme", "light".to_string())]
        );
        let (_, mode) = parse_view(&pairs("embed=1"), CHAPTERS, &mut errors);
        assert_eq!(mode.theme, None);
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn overlap_names_the_three_switches() {
        let mut errors = Vec::new();
        let (_, mode) = parse_view(&pairs("controls=overlap,preset,tp"), CHAPTERS, &mut errors);
        assert_eq!(mode.controls, ["tp", "pp", "dp", "preset"]);
        parse_view(&pairs("controls=overlaps"), CHAPTERS, &mut errors);
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].message.contains("overlap (tp,pp,dp)"),
            "{errors:?}"
        );
    }

    #[test]
    fn a_scenario_is_read_from_a_query_or_a_whole_link() {
        assert_eq!(
            query_part(" ?v=1&preset=contention "),
            "v=1&preset=contention"
        );
        assert_eq!(query_part("v=1&tp_overlap=0"), "v=1&tp_overlap=0");
        assert_eq!(
            query_part("https://example.org/lab/?v=1&preset=contention#top"),
            "v=1&preset=contention"
        );
        assert_eq!(query_part(""), "");
    }

    #[test]
    fn embed_code_escapes_its_attribute() {
        assert_eq!(
            attr_escape("a?b=1&c=\"<x>\""),
            "a?b=1&amp;c=&quot;&lt;x&gt;&quot;"
        );
        assert_eq!(escape("a b,c<"), "a%20b,c%3C");
        assert_eq!(frac_text(0.300_04, 4), "0.3");
        assert_eq!(frac_text(1.0, 5), "1");
    }

    #[test]
    fn deep_zoom_keeps_enough_digits() {
        let view = ViewParams {
            zoom: Some((0.123_456_789, 0.123_457_789)),
            ..ViewParams::default()
        };
        let text = &view_pairs(&view)[0].1;
        let mut errors = Vec::new();
        let (back, _) = parse_view(&[("zoom".to_string(), text.clone())], CHAPTERS, &mut errors);
        let (a, b) = back.zoom.unwrap();
        assert!(
            (a - 0.123_456_789).abs() < 1e-9 && (b - 0.123_457_789).abs() < 1e-9,
            "{text}"
        );
        assert_eq!(
            view_pairs(&ViewParams {
                zoom: Some((0.25, 0.5)),
                ..ViewParams::default()
            })[0]
                .1,
            "0.25-0.5"
        );
    }

    #[test]
    fn a_sweep_and_the_bus_view_round_trip_through_a_link() {
        for pane in [
            Pane::Sweep {
                field: "overlap.tp_chunks".into(),
                values: Some("1,2,4,8".into()),
            },
            Pane::Sweep {
                field: "parallel.schedule".into(),
                values: None,
            },
            Pane::BusBandwidth,
            Pane::Search {
                gpus: None,
                objective: Objective::Step,
            },
            Pane::Search {
                gpus: Some(64),
                objective: Objective::Both,
            },
        ] {
            let view = ViewParams {
                pane: pane.clone(),
                ..ViewParams::default()
            };
            let q = join(
                share_link::encode(&presets::default_preset().input(), None),
                &view_pairs(&view),
            );
            let mut errors = Vec::new();
            let (back, _) = parse_view(&pairs(&q), CHAPTERS, &mut errors);
            assert!(errors.is_empty(), "{errors:?}");
            assert_eq!(back.pane, pane, "{q}");
        }
        let q = "v=1&view=sweep&sweep=overlap.tp_chunks&values=1,2,4";
        assert!(q.ends_with("values=1,2,4"));
        let mut errors = Vec::new();
        parse_view(&pairs("v=1&view=plot&sweep=nope"), CHAPTERS, &mut errors);
        assert_eq!(errors.len(), 2);
        assert!(errors[0].to_string().contains("sweep, busbw or search"));
        assert!(errors[1].to_string().contains("overlap.tp_chunks"));
        let mut errors = Vec::new();
        parse_view(
            &pairs("v=1&view=search&search_gpus=0&objective=fast"),
            CHAPTERS,
            &mut errors,
        );
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].to_string().contains("search_gpus")
                && errors[0].to_string().contains("65536")
        );
        assert!(errors[1].to_string().contains("step, memory or both"));
    }
}
