//! The SVG backend of the display list: every shape as one SVG element, in
//! the palette's colours. Platform-free, so a native test reads the export.

use std::fmt::Write;

use crate::display_list::{Align, DisplayList, Rect, Shape, FONT_FAMILY, FONT_PX, HATCH_STEP_PX};
use crate::palette::Palette;

/// Escapes text for XML content and attribute values.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

fn anchor(align: Align) -> &'static str {
    match align {
        Align::Start => "start",
        Align::Middle => "middle",
        Align::End => "end",
    }
}

/// The display list as a standalone SVG document titled `title`.
pub fn write(list: &DisplayList, pal: &Palette, title: &str) -> String {
    let (width, height) = (list.width, list.height);
    let mut out = String::with_capacity(64 * 1024 + list.shapes.len() * 80);
    let _ = writeln!(
        out,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.2} {height:.2}" font-family="{FONT_FAMILY}" font-size="{FONT_PX}">
<title>{}</title>
<defs><pattern id="exposed" width="{HATCH_STEP_PX}" height="{HATCH_STEP_PX}" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="{HATCH_STEP_PX}" height="{HATCH_STEP_PX}" fill="{}"/><line x1="0" y1="0" x2="0" y2="{HATCH_STEP_PX}" stroke="{}" stroke-width="1"/></pattern><pattern id="wait" width="{HATCH_STEP_PX}" height="{HATCH_STEP_PX}" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><line x1="0" y1="0" x2="0" y2="{HATCH_STEP_PX}" stroke="{}" stroke-width="1"/></pattern></defs>"#,
        xml_escape(title),
        pal.background,
        pal.exposed_stripe,
        pal.exposed_stripe
    );
    for shape in &list.shapes {
        shape_element(&mut out, shape, pal);
    }
    out.push_str("</svg>\n");
    out
}

fn rect_attrs(r: &Rect) -> String {
    format!(
        r#"x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}""#,
        r.x,
        r.y,
        r.w.max(0.0),
        r.h.max(0.0)
    )
}

fn shape_element(out: &mut String, shape: &Shape, pal: &Palette) {
    let _ = match shape {
        Shape::Rect { rect, fill } => {
            writeln!(
                out,
                r#"<rect {} fill="{}"/>"#,
                rect_attrs(rect),
                pal.colour(*fill)
            )
        }
        Shape::Veil { rect, fill, alpha } => writeln!(
            out,
            r#"<rect {} fill="{}" fill-opacity="{alpha}"/>"#,
            rect_attrs(rect),
            pal.colour(*fill)
        ),
        Shape::Hatch { rect } => {
            // The canvas strokes the outline half a pixel inside the span.
            let inner = Rect {
                x: rect.x + 0.5,
                y: rect.y + 0.5,
                w: (rect.w - 1.0).max(0.5),
                h: (rect.h - 1.0).max(0.5),
            };
            writeln!(
                out,
                r#"<rect {} fill="url(#exposed)" stroke="{}"/>"#,
                rect_attrs(&inner),
                pal.exposed_stripe
            )
        }
        Shape::Wait { rect } => writeln!(out, r#"<rect {} fill="url(#wait)"/>"#, rect_attrs(rect)),
        Shape::Brackets {
            y,
            h,
            spans,
            stroke,
        } => {
            let mut d = String::new();
            for (x0, x1) in spans {
                let _ = write!(
                    d,
                    "M{:.2} {:.2}V{:.2}H{:.2}V{:.2}",
                    x0 + 0.5,
                    y + h,
                    y,
                    x1 - 0.5,
                    y + h
                );
            }
            writeln!(
                out,
                r#"<path d="{d}" fill="none" stroke="{}" stroke-width="1"/>"#,
                pal.colour(*stroke)
            )
        }
        Shape::Text {
            x,
            y,
            text,
            fill,
            align,
            clip,
        } => {
            let element = |x: f64, y: f64| {
                format!(
                    r#"<text x="{x:.2}" y="{y:.2}" fill="{}" text-anchor="{}" dominant-baseline="middle">{}</text>"#,
                    pal.colour(*fill),
                    anchor(*align),
                    xml_escape(text)
                )
            };
            match clip {
                // A nested viewport clips its content, as the canvas clips the label.
                Some(c) => writeln!(
                    out,
                    r#"<svg {} overflow="hidden">{}</svg>"#,
                    rect_attrs(c),
                    element(x - c.x, y - c.y)
                ),
                None => writeln!(out, "{}", element(*x, *y)),
            }
        }
        Shape::Line {
            from,
            to,
            stroke,
            dashed,
        } => writeln!(
            out,
            r#"<line x1="{:.2}" y1="{:.2}" x2="{:.2}" y2="{:.2}" stroke="{}"{}/>"#,
            from.0,
            from.1,
            to.0,
            to.1,
            pal.colour(*stroke),
            if *dashed {
                r#" stroke-dasharray="3 3""#
            } else {
                ""
            }
        ),
        Shape::Outline {
            rect,
            stroke,
            width,
        } => writeln!(
            out,
            r#"<rect {} fill="none" stroke="{}" stroke-width="{width}"/>"#,
            rect_attrs(rect),
            pal.colour(*stroke)
        ),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::palette::{Role, LIGHT};
    use overlap_core::timeline::Axis;

    #[test]
    fn text_is_escaped_for_xml() {
        assert_eq!(xml_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
    }

    #[test]
    fn every_shape_becomes_an_element() {
        let r = Rect {
            x: 1.0,
            y: 2.0,
            w: 30.0,
            h: 10.0,
        };
        let mut list = DisplayList::new(100.0, 50.0);
        list.rect(Role::Axis(Axis::Pp), 1.0, 2.0, 3.0, 4.0);
        list.shapes.push(Shape::Veil {
            rect: r,
            fill: Role::Axis(Axis::Dp),
            alpha: 0.3,
        });
        list.shapes.push(Shape::Hatch { rect: r });
        list.shapes.push(Shape::Brackets {
            y: 1.0,
            h: 3.0,
            spans: vec![(10.0, 20.0), (30.0, 40.0)],
            stroke: Role::Axis(Axis::Tp),
        });
        list.text(Role::Text, 4.0, 5.0, Align::End, "a<b");
        list.shapes.push(Shape::Text {
            x: 5.0,
            y: 7.0,
            text: "qkv".into(),
            fill: Role::OnComm,
            align: Align::Start,
            clip: Some(r),
        });
        list.shapes.push(Shape::Line {
            from: (0.0, 1.0),
            to: (9.0, 1.0),
            stroke: Role::Muted,
            dashed: true,
        });
        list.shapes.push(Shape::Outline {
            rect: r,
            stroke: Role::Text,
            width: 2.0,
        });
        let svg = write(&list, &LIGHT, "t & t");
        assert!(svg.contains("<title>t &amp; t</title>"));
        assert!(svg.contains(&format!(r#"fill="{}""#, LIGHT.axis[1])));
        assert!(svg.contains(r#"fill-opacity="0.3""#));
        assert!(svg.contains(r#"fill="url(#exposed)""#));
        assert!(svg.contains("M10.50 4.00V1.00H19.50V4.00M30.50"));
        assert!(svg.contains(r#"text-anchor="end" dominant-baseline="middle">a&lt;b</text>"#));
        assert!(svg.contains(r#"<svg x="1.00" y="2.00" width="30.00" height="10.00" overflow="hidden"><text x="4.00" y="5.00""#));
        assert!(svg.contains(r#"stroke-dasharray="3 3""#));
        assert!(svg.contains(r##"fill="none" stroke="#1f2328" stroke-width="2""##));
        // One element per shape, besides the header's.
        let body = svg.split("</defs>").nth(1).unwrap();
        assert_eq!(body.matches("\n<").count(), list.shapes.len() + 1);
        assert_eq!(svg.matches('<').count(), svg.matches('>').count());
    }
}
