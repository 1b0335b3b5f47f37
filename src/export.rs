//! Downloads of what the page shows: the Chrome trace of the current
//! scenario (the core's `chrome_trace`, byte for byte what `overlap-lab trace`
//! writes), the timeline as SVG (built from the same plain data and colours
//! as the canvas) and as PNG (the canvas itself), and the figures as CSV.

use std::fmt::Write;

use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use overlap_core::timeline::{Direction, Interval, LinkClass, LinkLane};
use overlap_core::{Report, ScenarioInput};
use wasm_bindgen::{JsCast, JsValue};

use crate::dom;
use crate::format;
use crate::lod::{self, Piece};
use crate::palette::{self, Palette};
use crate::scene::{LaneKind, Prepared, Scene};
use crate::state::AppState;

const AXES: [&str; 3] = ["TP", "PP", "DP"];

/// Saves `url` under `name` through a temporary `<a download>`.
pub(crate) fn save_url(name: &str, url: &str) -> Option<()> {
    let doc = dom::document()?;
    let a = doc
        .create_element("a")
        .ok()?
        .dyn_into::<web_sys::HtmlAnchorElement>()
        .ok()?;
    a.set_href(url);
    a.set_download(name);
    a.set_hidden(true);
    doc.body()?.append_child(&a).ok()?;
    a.click();
    a.remove();
    Some(())
}

/// Saves a Blob under `name` through an object URL.
fn save_blob(name: &str, blob: &web_sys::Blob) -> Option<()> {
    let url = web_sys::Url::create_object_url_with_blob(blob).ok()?;
    save_url(name, &url);
    // The download has started by then; the URL only holds memory.
    Timeout::new(30_000, move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    })
    .forget();
    Some(())
}

/// Saves `text` as a file through a Blob and an object URL; never an empty file.
pub fn download_text(name: &str, mime: &str, text: &str) -> Option<()> {
    if text.is_empty() {
        return None;
    }
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag).ok()?;
    save_blob(name, &blob)
}

/// Saves bytes (built in a worker) as a file; never an empty one.
fn download_bytes(name: &str, mime: &str, bytes: &js_sys::Uint8Array) -> Option<()> {
    if bytes.length() == 0 {
        return None;
    }
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type(mime);
    let blob =
        web_sys::Blob::new_with_u8_array_sequence_and_options(&js_sys::Array::of1(bytes), &bag)
            .ok()?;
    save_blob(name, &blob)
}

/// The page builds a trace up to this size; a larger one would hold
/// hundreds of megabytes several times over (simulation, text, download)
/// in a browser tab.
pub const MAX_TRACE_BYTES: f64 = 256.0 * 1024.0 * 1024.0;
/// A trace that takes longer than this to build is abandoned.
const TRACE_BUDGET_MS: u32 = 60_000;

/// The two trace files the page builds, each in a worker of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// One Chrome trace-event file, what `overlap-lab trace` writes.
    Chrome,
    /// One PyTorch-profiler (Kineto) trace per simulated GPU, zipped: what
    /// `overlap-lab trace --kineto DIR` writes, for HolisticTraceAnalysis.
    Kineto,
}

impl TraceKind {
    /// The worker message that asks for it and carries it back.
    pub fn message(self) -> &'static str {
        match self {
            Self::Chrome => "trace",
            Self::Kineto => "kineto",
        }
    }

    /// What one bar costs at most in the (uncompressed) trace with its share
    /// of the counters, flow arrows or launch events, measured on the
    /// presets (`trace_size_estimates_hold_on_the_presets` prints them):
    /// Chrome 165 to 340 bytes, Kineto about 630. Erring high only refuses
    /// a little early.
    fn bytes_per_bar(self) -> f64 {
        match self {
            Self::Chrome => 340.0,
            Self::Kineto => 650.0,
        }
    }

    fn file_name(self, stem: &str) -> (String, &'static str) {
        match self {
            Self::Chrome => (format!("{stem}.trace.json"), "application/json"),
            Self::Kineto => (format!("{stem}-kineto.zip"), "application/zip"),
        }
    }

    /// The command that writes it outside the browser.
    fn command(self, scenario: &str) -> String {
        match self {
            Self::Chrome => format!("overlap-lab trace {scenario} > trace.json"),
            Self::Kineto => format!("overlap-lab trace --kineto traces {scenario}"),
        }
    }
}

/// The trace's size, estimated from the number of bars on screen.
pub fn estimated_trace_bytes(kind: TraceKind, bars: usize) -> f64 {
    bars as f64 * kind.bytes_per_bar()
}

/// Why the page does not build this trace, with the command that does; `None`
/// when the page builds it.
pub fn trace_refusal(
    kind: TraceKind,
    bars: usize,
    preset_id: &str,
    is_preset: bool,
) -> Option<String> {
    let bytes = estimated_trace_bytes(kind, bars);
    if bytes <= MAX_TRACE_BYTES {
        return None;
    }
    let command = if is_preset {
        kind.command(&format!("preset:{preset_id}"))
    } else {
        kind.command("scenario.json") + ", with the scenario JSON below saved as scenario.json"
    };
    Some(format!(
        "This trace would be about {:.0} MB ({bars} bars), more than the {:.0} MB a browser tab can build \
         safely, so the page does not make it. The command line writes it: {command}",
        bytes / 1e6,
        MAX_TRACE_BYTES / 1e6,
    ))
}

/// The leaves of a JSON value under their dotted names (`axes.tp.comm_ms`,
/// array items as `hta_overlap_per_gpu.0`), in document order: the names the
/// CSV rows and the page's field marks use, as `simulate --json` spells them.
pub fn json_leaves(v: &serde_json::Value) -> Vec<(String, &serde_json::Value)> {
    fn walk<'v>(
        prefix: &str,
        v: &'v serde_json::Value,
        out: &mut Vec<(String, &'v serde_json::Value)>,
    ) {
        let name = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        match v {
            serde_json::Value::Object(map) => {
                for (k, x) in map {
                    walk(&name(k), x, out);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    walk(&name(&i.to_string()), x, out);
                }
            }
            leaf => out.push((prefix.to_string(), leaf)),
        }
    }
    let mut out = Vec::new();
    walk("", v, &mut out);
    out
}

/// The report as `name,value` rows, names as in `simulate --json` (dotted).
pub fn figures_csv(report: &Report) -> String {
    let mut out = String::from("name,value\n");
    let Ok(v) = serde_json::to_value(report) else {
        return out;
    };
    for (name, leaf) in json_leaves(&v) {
        match leaf {
            serde_json::Value::Number(n) => {
                let text = n.as_f64().map(format::raw).unwrap_or_else(|| n.to_string());
                let _ = writeln!(out, "{name},{text}");
            }
            other => {
                let text = other.to_string().replace('"', "\"\"");
                let _ = writeln!(out, "{name},\"{text}\"");
            }
        }
    }
    out
}

fn xml_escape(s: &str) -> String {
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

struct Svg {
    out: String,
}

impl Svg {
    fn rect(&mut self, fill: &str, x: f64, y: f64, w: f64, h: f64) {
        let _ = writeln!(
            self.out,
            r#"<rect x="{x:.2}" y="{y:.2}" width="{:.2}" height="{:.2}" fill="{}"/>"#,
            w.max(0.0),
            h.max(0.0),
            xml_escape(fill)
        );
    }
    fn text(&mut self, fill: &str, x: f64, y: f64, anchor: &str, text: &str) {
        let _ = writeln!(
            self.out,
            r#"<text x="{x:.2}" y="{y:.2}" fill="{}" text-anchor="{anchor}" dominant-baseline="middle">{}</text>"#,
            xml_escape(fill),
            xml_escape(text)
        );
    }
}

/// The timeline as the canvas shows it now (same window, lanes, colours),
/// as SVG text: one rect per bar or per merged run of narrow bars.
pub fn timeline_svg(scene: &Scene, pal: &Palette) -> Option<String> {
    let p = scene.current.as_ref()?;
    let l = &scene.layout;
    if l.lanes.is_empty() {
        return None;
    }
    let (width, height) = (l.right + 8.0, l.height);
    let win = scene.window(1.0);
    let mut svg = Svg {
        out: String::with_capacity(64 * 1024),
    };
    let _ = writeln!(
        svg.out,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.2} {height:.2}" font-family="system-ui, sans-serif" font-size="11">
<title>Overlap Lab: timeline of one step</title>
<defs><pattern id="exposed" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="4" height="4" fill="{bg}"/><line x1="0" y1="0" x2="0" y2="4" stroke="{stripe}" stroke-width="1"/></pattern></defs>"#,
        bg = pal.background,
        stripe = pal.exposed_stripe
    );
    svg.rect(pal.background, 0.0, 0.0, width, height);

    // Time axis and grid.
    let step = format::nice_step(win.1 - win.0, ((l.right - l.left) / 90.0).max(2.0));
    let first = (win.0 / step).ceil() as i64;
    let last = (win.1 / step).floor() as i64;
    for k in first..=last.min(first + 200) {
        let t = k as f64 * step;
        let x = scene.x_of(t, win).round() + 0.5;
        svg.rect(
            pal.grid,
            x,
            l.axis_h - 4.0,
            1.0,
            l.link_area.1 - l.axis_h + 4.0,
        );
        let anchor = if x > l.right - 24.0 { "end" } else { "middle" };
        svg.text(
            pal.muted,
            x.min(l.right),
            l.axis_h / 2.0 - 1.0,
            anchor,
            &format::tick(t, step),
        );
    }

    // GPU labels.
    let every = (l.bands.len() / 16).max(1);
    for band in &l.bands {
        let g = &p.timeline.gpus[band.gpu];
        if l.label_lanes || band.gpu % every == 0 {
            // As on the canvas: a phone's narrow gutter fits only the short form.
            let label = if l.label_lanes && l.left >= 80.0 {
                format!("GPU {} · st {}", g.rank, g.stage)
            } else if l.label_lanes {
                format!("GPU {}", g.rank)
            } else {
                format!("st {}", g.stage)
            };
            svg.text(
                pal.text,
                4.0,
                band.y0 + band.bracket_h + 8.0,
                "start",
                &label,
            );
            if g.represents > 1 && l.label_lanes {
                svg.text(
                    pal.muted,
                    4.0,
                    band.y0 + band.bracket_h + 21.0,
                    "start",
                    &format!("×{} GPUs", g.represents),
                );
            }
        }
    }

    for lane in &l.lanes {
        match lane.kind {
            LaneKind::Gpu { gpu, slot } => {
                gpu_lane(&mut svg, scene, p, pal, win, gpu, slot, lane.y, lane.h)
            }
            LaneKind::Link { link } => {
                if let Some(lk) = p.timeline.links.get(link) {
                    link_lane(&mut svg, scene, p, pal, win, lk, lane.y, lane.h);
                }
            }
        }
    }
    if let Some(g) = p
        .timeline
        .gpus
        .get(scene.link_gpu.min(p.timeline.gpus.len().saturating_sub(1)))
    {
        svg.text(
            pal.text,
            4.0,
            l.links_y,
            "start",
            &if l.left < 80.0 {
                format!("Links of GPU {}, by axis", g.rank)
            } else {
                format!(
                    "Links of GPU {} (stage {}): bandwidth by axis, dashed = usable capacity",
                    g.rank, g.stage
                )
            },
        );
    }
    svg.out.push_str("</svg>\n");
    Some(svg.out)
}

#[allow(clippy::too_many_arguments)]
fn gpu_lane(
    svg: &mut Svg,
    scene: &Scene,
    p: &Prepared,
    pal: &Palette,
    win: (f64, f64),
    gpu: usize,
    slot: usize,
    y: f64,
    lane_h: f64,
) {
    let l = &scene.layout;
    svg.rect(pal.lane, l.left, y, l.right - l.left, lane_h.max(1.0) - 0.5);
    if slot > 0 && l.label_lanes {
        svg.text(
            pal.axis[slot - 1],
            l.left - 24.0,
            y + lane_h / 2.0,
            "start",
            AXES[slot - 1],
        );
    }
    let bars = p.lane(gpu, slot);
    let range = lod::visible_range(bars, win.0, win.1, p.max_dur[gpu][slot]);
    let h = (lane_h - 1.0).max(1.0);
    let colour = |iv: &Interval| {
        if slot == 0 {
            pal.phase(iv.phase)
        } else {
            pal.axis[slot - 1]
        }
    };
    let mut wide = Vec::new();
    let mut pieces = Vec::new();
    lod::pieces(
        bars,
        range,
        (l.left, l.right),
        1.5,
        |i| {
            (
                scene.x_of(bars[i].start_s, win),
                scene.x_of(bars[i].end_s, win),
            )
        },
        |piece| pieces.push(piece),
    );
    for piece in pieces {
        match piece {
            Piece::Bar { index, x0, x1 } => {
                svg.rect(colour(&bars[index]), x0, y, (x1 - x0).max(1.0), h);
                if x1 - x0 > 3.0 {
                    wide.push((index, x0, x1));
                }
            }
            Piece::Merged {
                first,
                x0,
                x1,
                exposed,
                ..
            } => {
                svg.rect(colour(&bars[first]), x0, y, x1 - x0, h);
                if exposed && slot > 0 {
                    svg.rect(pal.exposed_stripe, x0, y + h - 2.0, x1 - x0, 2.0);
                }
            }
        }
    }
    for (index, x0, x1) in wide {
        let iv = &bars[index];
        if slot > 0 && iv.exposed_s > 0.0 {
            // As on the canvas: compute waited from `exposed_from_s` to the
            // end of the bar.
            let ex0 = scene.x_of(iv.exposed_from_s, win).clamp(x0, x1);
            let _ = writeln!(
                svg.out,
                r#"<rect x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="url(#exposed)" stroke="{}"/>"#,
                ex0 + 0.5,
                y + 0.5,
                (x1 - ex0 - 1.0).max(0.5),
                (h - 1.0).max(0.5),
                pal.exposed_stripe
            );
        }
        let label = iv.op.label();
        // The canvas clips labels to their bar; here a label shows when it fits.
        if l.label_lanes
            && x1 - x0 > 46.0
            && h >= 10.0
            && (label.len() as f64) * 6.2 < x1 - x0 - 4.0
        {
            let fill = if slot == 0 { pal.background } else { "#ffffff" };
            svg.text(fill, x0 + 3.0, y + h / 2.0, "start", label);
        }
    }
    if slot > 0 {
        brackets(svg, scene, pal, win, gpu, slot, bars);
    }
}

#[allow(clippy::too_many_arguments)]
fn brackets(
    svg: &mut Svg,
    scene: &Scene,
    pal: &Palette,
    win: (f64, f64),
    gpu: usize,
    slot: usize,
    bars: &[Interval],
) {
    let l = &scene.layout;
    let Some(band) = l.bands.iter().find(|b| b.gpu == gpu) else {
        return;
    };
    if band.bracket_h < 3.0 {
        return;
    }
    let row_h = band.bracket_h / 3.0;
    let y = band.bracket_y + row_h * (slot - 1) as f64 + 0.5;
    let mut d = String::new();
    let (mut last_x0, mut last_x1) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    let mut drawn = 0;
    for iv in bars {
        let Some((w0, w1)) = iv.window else { continue };
        if w1 < win.0 || w0 > win.1 || w1 <= w0 {
            continue;
        }
        let x0 = scene.x_of(w0, win).max(l.left);
        let x1 = scene.x_of(w1, win).min(l.right);
        if (x0 - last_x0).abs() < 1.0 && (x1 - last_x1).abs() < 1.0 {
            continue;
        }
        (last_x0, last_x1) = (x0, x1);
        let _ = write!(
            d,
            "M{:.2} {:.2}V{:.2}H{:.2}V{:.2}",
            x0 + 0.5,
            y + row_h,
            y,
            x1 - 0.5,
            y + row_h
        );
        drawn += 1;
        if drawn > 4000 {
            break;
        }
    }
    if !d.is_empty() {
        let _ = writeln!(
            svg.out,
            r#"<path d="{d}" fill="none" stroke="{}" stroke-width="1"/>"#,
            pal.axis[slot - 1]
        );
    }
}

fn link_name(link: &LinkLane) -> &'static str {
    match (link.gpu, link.class, link.direction) {
        (None, _, _) => "net core",
        (_, LinkClass::Nvlink, Direction::Out) => "NVLink out",
        (_, LinkClass::Nvlink, Direction::In) => "NVLink in",
        (_, LinkClass::Network, Direction::Out) => "NIC out",
        (_, LinkClass::Network, Direction::In) => "NIC in",
    }
}

/// Bandwidth per axis, stacked and scaled to the usable capacity; samples
/// narrower than a pixel averaged over it, as on the canvas.
#[allow(clippy::too_many_arguments)]
fn link_lane(
    svg: &mut Svg,
    scene: &Scene,
    p: &Prepared,
    pal: &Palette,
    win: (f64, f64),
    lk: &LinkLane,
    y: f64,
    h: f64,
) {
    let l = &scene.layout;
    svg.rect(pal.lane, l.left, y, l.right - l.left, h);
    svg.text(pal.muted, 4.0, y + h / 2.0, "start", link_name(lk));
    let cap = lk.capacity_gbps.max(1e-9);
    let s = &lk.samples;
    let stack = |svg: &mut Svg, x0: f64, w: f64, gbps: [f64; 3]| {
        let mut top = y + h;
        for (a, v) in gbps.iter().enumerate() {
            if *v <= 0.0 {
                continue;
            }
            let bh = (v / cap * h).min(top - y);
            top -= bh;
            svg.rect(pal.axis[a], x0, top, w, bh);
        }
    };
    crate::lod::link_columns(
        s,
        win,
        p.step_s(),
        (l.left, l.right),
        |t| scene.x_of(t, win),
        |x, w, gbps| stack(svg, x, w, gbps),
    );
    let _ = writeln!(
        svg.out,
        r#"<line x1="{:.2}" y1="{:.2}" x2="{:.2}" y2="{:.2}" stroke="{}" stroke-dasharray="3 3"/>"#,
        l.left,
        y + 0.5,
        l.right,
        y + 0.5,
        pal.muted
    );
}

pub(crate) fn file_stem(state: AppState) -> String {
    // Preset ids are the core's own (letters, digits, dashes).
    let id = state.preset_id.get_untracked();
    let safe: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    format!("overlap-lab-{safe}")
}

fn timeline_canvas() -> Option<web_sys::HtmlCanvasElement> {
    dom::document()?
        .query_selector(".timeline canvas")
        .ok()??
        .dyn_into()
        .ok()
}

/// A trace being built in a worker of its own (the simulation worker stays
/// free for the controls); dropping it stops the build.
struct TraceJob {
    _worker: crate::worker::spawn::WorkerHandle,
    _budget: Timeout,
}

/// Builds the trace of `input` in a new worker; `done` gets the bytes or why not.
fn build_trace(
    kind: TraceKind,
    input: &ScenarioInput,
    folder: String,
    done: impl Fn(Result<js_sys::Uint8Array, String>) + Clone + 'static,
) -> Result<TraceJob, String> {
    let input_json = serde_json::to_string(input).map_err(|e| e.to_string())?;
    let worker_slot = std::rc::Rc::new(std::cell::RefCell::new(None::<web_sys::Worker>));
    let on_message = {
        let done = done.clone();
        let worker_slot = worker_slot.clone();
        move |data: JsValue| {
            let get =
                |k: &str| js_sys::Reflect::get(&data, &k.into()).unwrap_or(JsValue::UNDEFINED);
            match get("type").as_string().as_deref() {
                Some("ready") => {
                    let msg = js_sys::Object::new();
                    let _ = js_sys::Reflect::set(&msg, &"type".into(), &kind.message().into());
                    let _ = js_sys::Reflect::set(&msg, &"folder".into(), &folder.clone().into());
                    let _ = js_sys::Reflect::set(&msg, &"input".into(), &input_json.clone().into());
                    if let Some(w) = worker_slot.borrow().as_ref() {
                        let _ = w.post_message(&msg);
                    }
                }
                Some(t) if t == kind.message() => {
                    match get("bytes").dyn_into::<js_sys::Uint8Array>() {
                        Ok(bytes) => done(Ok(bytes)),
                        Err(_) => done(Err("the worker sent no trace".to_string())),
                    }
                }
                Some("refused" | "panic" | "crashed") => done(Err(get("message")
                    .as_string()
                    .unwrap_or_else(|| "the worker stopped".to_string()))),
                _ => {}
            }
        }
    };
    let on_error = {
        let done = done.clone();
        move |text: String| done(Err(text))
    };
    let worker = crate::worker::spawn::spawn(on_message, on_error)?;
    *worker_slot.borrow_mut() = Some(worker.worker().clone());
    let budget = Timeout::new(TRACE_BUDGET_MS, move || {
        done(Err(format!(
            "building it took longer than {} s",
            TRACE_BUDGET_MS / 1000
        )))
    });
    Ok(TraceJob {
        _worker: worker,
        _budget: budget,
    })
}

/// The export buttons. Each says what it saves; a failure is said next to them.
#[component]
pub fn ExportButtons() -> impl IntoView {
    let state = expect_context::<AppState>();
    let problem = RwSignal::new(None::<String>);
    let tracing = RwSignal::new(false);
    let job = StoredValue::new_local(None::<TraceJob>);
    let report = move |ok: Option<()>, what: &'static str| {
        problem.set(ok.is_none().then(|| what.to_string()))
    };
    let trace = move |kind: TraceKind| {
        if state.resolved.with_untracked(Option::is_none) {
            report(
                None,
                "The trace could not be made: no valid scenario has been simulated yet.",
            );
            return;
        }
        let bars = state
            .scene()
            .borrow()
            .current
            .as_ref()
            .map_or(0, |p| p.bars);
        let preset_id = state.preset_id.get_untracked();
        let input = state.input.get_untracked();
        let is_preset = overlap_core::presets::find(&preset_id).is_some_and(|p| p.input() == input);
        if let Some(why) = trace_refusal(kind, bars, &preset_id, is_preset) {
            problem.set(Some(why));
            return;
        }
        problem.set(None);
        tracing.set(true);
        let stem = file_stem(state);
        let (name, mime) = kind.file_name(&stem);
        let done = move |result: Result<js_sys::Uint8Array, String>| {
            if !tracing.get_untracked() {
                return;
            }
            tracing.set(false);
            match result {
                Ok(bytes) => {
                    if download_bytes(&name, mime, &bytes).is_none() {
                        problem.set(Some(
                            "The trace could not be saved: it came out empty or the browser refused the download."
                                .to_string(),
                        ));
                    }
                }
                Err(why) => problem.set(Some(format!("The trace could not be made: {why}."))),
            }
            // Ends the worker, once this callback has returned.
            Timeout::new(0, move || job.set_value(None)).forget();
        };
        match build_trace(kind, &input, format!("{stem}-kineto"), done) {
            Ok(j) => job.set_value(Some(j)),
            Err(e) => {
                tracing.set(false);
                problem.set(Some(format!("The trace could not be made: {e}.")));
            }
        }
    };
    let svg = move |_| {
        let text = {
            let scene = state.scene();
            let s = scene.borrow();
            timeline_svg(&s, palette::current())
        };
        let ok = text
            .and_then(|t| download_text(&format!("{}.svg", file_stem(state)), "image/svg+xml", &t));
        report(
            ok,
            "The SVG could not be made: the timeline has not been drawn yet.",
        );
    };
    let png = move |_| {
        let ok = timeline_canvas()
            .and_then(|c| c.to_data_url_with_type("image/png").ok())
            .and_then(|url| save_url(&format!("{}.png", file_stem(state)), &url));
        report(
            ok,
            "The PNG could not be made: the timeline has not been drawn yet.",
        );
    };
    let csv = move |_| {
        let ok = state.report.get_untracked().and_then(|r| {
            download_text(
                &format!("{}.figures.csv", file_stem(state)),
                "text/csv",
                &figures_csv(&r),
            )
        });
        report(
            ok,
            "The figures could not be saved: no valid scenario has been simulated yet.",
        );
    };
    view! {
        <div class="export-buttons" role="group" aria-label="Export">
            <button type="button" on:click=move |_| trace(TraceKind::Chrome) disabled=move || tracing.get() title="Chrome trace-event JSON: open it in Perfetto or chrome://tracing">"Download trace (JSON)"</button>
            <button type="button" on:click=move |_| trace(TraceKind::Kineto) disabled=move || tracing.get() title="PyTorch-profiler (Kineto) traces, one per simulated GPU: unzip and open the folder with HolisticTraceAnalysis">"Download traces for HTA (zip)"</button>
            <button type="button" on:click=svg title="The timeline as on screen, as a vector image">"Download SVG"</button>
            <button type="button" on:click=png title="The timeline as on screen, as a picture">"Download PNG"</button>
            <button type="button" on:click=csv title="Every figure of the report, one per row">"Download figures (CSV)"</button>
            {move || tracing.get().then(|| view! { <p class="note" role="status">"Building the trace in the background…"</p> })}
            {move || problem.get().map(|p| view! { <p class="field-error trace-problem" role="status">{p}</p> })}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::presets;

    fn scene_of(preset: &str) -> Scene {
        let scenario = presets::scenario(preset).expect("presets resolve");
        let sim = overlap_core::simulate(&scenario);
        let mut scene = Scene::new();
        scene.set_timeline(sim.timeline, false, 0.0);
        scene.layout = crate::scene::Layout::compute(scene.current.as_ref().unwrap(), 900.0, 0);
        scene
    }

    #[test]
    fn csv_has_every_report_figure_by_its_json_name() {
        let scenario = presets::scenario(presets::DEFAULT_ID).unwrap();
        let report = overlap_core::simulate(&scenario).report;
        let csv = figures_csv(&report);
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some("name,value"));
        let rows: Vec<(&str, f64)> = lines
            .map(|l| {
                let (k, v) = l.split_once(',').unwrap();
                (k, v.parse().unwrap())
            })
            .collect();
        let get = |k: &str| rows.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        assert_eq!(get("step_time_ms"), Some(report.step_time_ms));
        assert_eq!(get("axes.dp.exposed_ms"), Some(report.axes.dp.exposed_ms));
        assert_eq!(
            get("links.network.shared"),
            Some(report.links.network.shared)
        );
    }

    #[test]
    fn svg_draws_every_lane_in_the_canvas_colours() {
        for id in [presets::DEFAULT_ID, "contention"] {
            let scene = scene_of(id);
            let svg = timeline_svg(&scene, &palette::LIGHT).unwrap();
            assert!(svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"));
            assert!(svg.matches("<rect").count() > 100, "{id}: too few rects");
            for colour in palette::LIGHT.axis {
                assert!(svg.contains(colour), "{id}: no {colour}");
            }
            // Every element is closed: no stray markup from the data.
            assert_eq!(svg.matches('<').count(), svg.matches('>').count());
        }
    }

    #[test]
    fn a_trace_too_large_for_the_page_is_refused_with_the_cli_command() {
        let chrome = TraceKind::Chrome;
        assert_eq!(
            trace_refusal(chrome, 200_000, "megatron-145.6b", true),
            None
        );
        let why = trace_refusal(chrome, 1_636_546, "megatron-1t", true).expect("refused");
        assert!(why.contains("556 MB"), "{why}");
        assert!(
            why.contains("overlap-lab trace preset:megatron-1t"),
            "{why}"
        );
        let edited = trace_refusal(chrome, 1_636_546, "megatron-1t", false).expect("refused");
        assert!(edited.contains("scenario.json"), "{edited}");
        let kineto =
            trace_refusal(TraceKind::Kineto, 1_636_546, "megatron-1t", true).expect("refused");
        assert!(
            kineto.contains("overlap-lab trace --kineto traces preset:megatron-1t"),
            "{kineto}"
        );
    }

    /// The size guard estimates from the bars on screen: the estimate must
    /// cover what the trace really weighs, without refusing far too early.
    #[test]
    fn trace_size_estimates_hold_on_the_presets() {
        for preset in [
            "didactic",
            "contention",
            "megatron-1.7b",
            "korthikanti-22b-full",
        ] {
            let scenario = presets::scenario(preset).expect("presets resolve");
            let sim = overlap_core::simulate(&scenario);
            let bars = scene_of(preset).current.as_ref().unwrap().bars;
            let chrome = overlap_core::trace::chrome_trace(&sim.timeline).len() as f64;
            let kineto: f64 = overlap_core::kineto::rank_traces(&scenario, &sim.timeline)
                .iter()
                .map(|t| t.json.len() as f64)
                .sum();
            for (kind, actual) in [(TraceKind::Chrome, chrome), (TraceKind::Kineto, kineto)] {
                let estimate = estimated_trace_bytes(kind, bars);
                println!("{preset} {kind:?}: {bars} bars, {actual} bytes, estimate {estimate}");
                assert!(
                    estimate >= 0.9 * actual && estimate <= 2.5 * actual,
                    "{preset} {kind:?}: estimate {estimate} for {actual} bytes"
                );
            }
        }
    }

    #[test]
    fn text_is_escaped_for_xml() {
        assert_eq!(xml_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
    }
}
