//! Every chapter of the guided tour states only what its own scenario's
//! figures show. Each chapter's scenario is built as the page builds it
//! (preset, setup, then the action) and simulated before and after; every
//! placeholder must fill, the answer must be a choice, and each claim the
//! text makes in words is asserted here on those figures.

use overlap_core::timeline::{Axis, Phase};
use overlap_core::{simulate, Report, ScenarioInput, Simulation};
use overlap_view::tour::{template, Chapter, Focus, Outcome, CHAPTERS};

fn run(input: &ScenarioInput) -> Simulation {
    simulate(&input.resolve().expect("a chapter's scenario resolves"))
}

struct Runs {
    before: Simulation,
    after: Simulation,
}

impl Runs {
    fn outcome(&self) -> Outcome<'_> {
        Outcome {
            before: &self.before.report,
            after: &self.after.report,
        }
    }
}

fn runs(title_start: &str) -> (&'static Chapter, Runs) {
    let c = CHAPTERS
        .iter()
        .find(|c| c.title.starts_with(title_start))
        .unwrap_or_else(|| panic!("no chapter titled {title_start}…"));
    let before = run(&c.before_input().expect("the chapter's preset exists"));
    let after = run(&c.after_input().expect("the chapter's preset exists"));
    (c, Runs { before, after })
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-9)
}

/// End of the last backward compute op on a GPU, seconds.
fn last_backward_end_s(sim: &Simulation, gpu: usize) -> f64 {
    sim.timeline.gpus[gpu]
        .compute
        .iter()
        .filter(|i| i.phase == Phase::Backward)
        .map(|i| i.end_s)
        .fold(f64::NEG_INFINITY, f64::max)
}

#[test]
fn every_chapter_fills_its_text_and_answers_with_a_choice() {
    for c in CHAPTERS {
        let (c, r) = runs(c.title);
        let o = r.outcome();
        let errors = template::check(c.intro, o.before, Some(o.before));
        assert!(errors.is_empty(), "{}: intro {errors:?}", c.title);
        for (what, text) in [("explain", c.explain), ("verdict", c.verdict)] {
            let errors = template::check(text, o.after, Some(o.before));
            assert!(errors.is_empty(), "{}: {what} {errors:?}", c.title);
        }
        let answer = (c.answer.expect("every chapter gives a verdict"))(&o);
        assert!(answer < c.choices.len(), "{}", c.title);
        // No choice gives its answer away with a reason.
        for choice in c.choices {
            assert!(
                !choice.contains(':') && !choice.contains("because"),
                "{}: {choice}",
                c.title
            );
        }
        let right = c
            .verdict_text(Some(answer), &o)
            .expect("a verdict for an answer");
        assert!(right.starts_with("Right: "), "{right}");
        let wrong = c
            .verdict_text(Some((answer + 1) % 3), &o)
            .expect("a verdict for a wrong answer");
        assert!(wrong.contains(c.choices[answer]), "{wrong}");
        assert!(!c.intro_text(o.before).contains('{'));
        assert!(!c.explain_text(&o).contains('{'));
        // The region the chapter zooms to exists on its timeline.
        if c.focus != Focus::Whole {
            let (t0, t1) = c
                .focus
                .span_s(&r.after.timeline)
                .unwrap_or_else(|| panic!("{}: no region for {:?}", c.title, c.focus));
            assert!(0.0 <= t0 && t0 < t1 && t1 <= r.after.timeline.step_time_s);
        }
    }
}

/// Exposed equals the traffic: every op of the axis waits in full.
fn all_exposed(r: &Report, a: Axis) -> bool {
    let x = r.axes.get(a);
    x.comm_ms > 0.0 && close(x.exposed_ms, x.comm_ms, 1e-6)
}

#[test]
fn dp_chapter_blames_the_last_bucket_not_the_window() {
    let (c, r) = runs("DP hides");
    let (b, a) = (&r.before.report, &r.after.report);
    // Intro: with overlap off all of DP's traffic is exposed.
    assert!(all_exposed(b, Axis::Dp));
    // Answer: some of the wait is gone, at most half: the tied embedding's
    // all-reduce between the two stages (across InfiniBand, after the whole
    // backward) stays exposed and is most of DP's traffic here.
    assert_eq!((c.answer.unwrap())(&r.outcome()), 1);
    // Explain: the window is larger than the traffic.
    assert!(a.axes.dp.window_ms > a.axes.dp.comm_ms, "{:?}", a.axes.dp);
    // Explain: the last reduction starts no earlier than the end of the
    // backward pass, on every GPU, and what runs after that end is what
    // stays exposed.
    for g in 0..r.after.timeline.gpus.len() {
        let end_s = last_backward_end_s(&r.after, g);
        let dp = &r.after.timeline.gpus[g].comm[Axis::Dp.index()];
        let last = dp
            .iter()
            .max_by(|x, y| x.end_s.total_cmp(&y.end_s))
            .expect("a DP reduction");
        assert!(
            last.start_s >= end_s - 1e-9,
            "gpu {g}: {} < {end_s}",
            last.start_s
        );
    }
    let g = 0;
    let end_s = last_backward_end_s(&r.after, g);
    let after_backward_ms: f64 = r.after.timeline.gpus[g].comm[Axis::Dp.index()]
        .iter()
        .map(|i| (i.end_s - i.start_s.max(end_s)).max(0.0) * 1e3)
        .sum();
    assert!(
        close(after_backward_ms, a.axes.dp.exposed_ms, 0.1),
        "after the backward {after_backward_ms} ms, exposed {} ms",
        a.axes.dp.exposed_ms
    );
}

/// Every TP collective not wholly charged to TP overlaps a pipeline send
/// of its GPU that ends after it (the send then takes the shared instants).
fn pp_sends_outlast_tp_while_idle(sim: &Simulation) -> bool {
    let mut found = false;
    for g in &sim.timeline.gpus {
        for t in &g.comm[Axis::Tp.index()] {
            if t.exposed_s >= (t.end_s - t.start_s) * (1.0 - 1e-9) {
                continue;
            }
            found = true;
            let outlasts = g.comm[Axis::Pp.index()]
                .iter()
                .any(|p| p.start_s < t.end_s && p.end_s >= t.end_s);
            if !outlasts {
                return false;
            }
        }
    }
    found
}

#[test]
fn tp_chapter_window_is_larger_and_chunking_costs() {
    let (c, r) = runs("TP hides");
    let (b, a) = (&r.before.report, &r.after.report);
    // Intro: nothing of TP's traffic runs under compute; what is not
    // charged to TP is idle time charged to a pipeline send ending later.
    let tp = &b.axes.tp;
    assert!(tp.comm_ms > 0.0 && tp.under_compute_ms == 0.0, "{tp:?}");
    assert!(close(tp.exposed_ms + tp.under_idle_ms, tp.comm_ms, 1e-6));
    assert!(tp.under_idle_ms > 0.0 && tp.under_idle_ms <= b.axes.pp.exposed_ms);
    assert!(
        pp_sends_outlast_tp_while_idle(&r.before),
        "TP's idle time not charged to TP goes to pipeline sends"
    );
    assert_eq!((c.answer.unwrap())(&r.outcome()), 0, "more than half hides");
    assert!(a.axes.tp.window_ms > a.axes.tp.comm_ms);
    assert!(
        a.axes.tp.comm_ms > b.axes.tp.comm_ms,
        "chunked calls take longer"
    );
    assert!(
        a.compute_ms > b.compute_ms,
        "smaller GEMMs and SM sharing slow compute"
    );
}

#[test]
fn pp_chapter_hides_some_and_leaves_the_bubble() {
    let (c, r) = runs("PP sends");
    let (b, a) = (&r.before.report, &r.after.report);
    assert!(all_exposed(b, Axis::Pp));
    assert_eq!((c.answer.unwrap())(&r.outcome()), 1, "some, at most half");
    assert!(a.axes.pp.exposed_ms > 0.0);
    assert!(
        a.axes.pp.window_ms > 5.0 * a.axes.pp.comm_ms,
        "many times the traffic"
    );
    assert!(
        (a.bubble_fraction - b.bubble_fraction).abs() < 0.01,
        "overlap does not fill the bubble: {} -> {}",
        b.bubble_fraction,
        a.bubble_fraction
    );
}

#[test]
fn contention_chapter_shows_two_axes_on_one_nic() {
    let (c, r) = runs("All three");
    let (b, a) = (&r.before.report, &r.after.report);
    // Intro: DP runs after the last backward op, alone.
    assert_eq!(b.axes.dp.contention_ms, 0.0);
    for (g, gpu) in r.before.timeline.gpus.iter().enumerate() {
        let end_s = last_backward_end_s(&r.before, g);
        for i in &gpu.comm[Axis::Dp.index()] {
            assert!(
                i.start_s >= end_s - 1e-9,
                "gpu {g}: DP starts before the backward ends"
            );
        }
    }
    assert_eq!((c.answer.unwrap())(&r.outcome()), 1, "DP's comm grows");
    assert!(a.axes.dp.contention_ms > 0.0);
    assert!(a.axes.pp.contention_ms > b.axes.pp.contention_ms);
    assert!(a.step_time_ms < b.step_time_ms, "the step is still shorter");
    // The network lanes carry PP and DP at the same time.
    let both = r.after.timeline.links.iter().any(|l| {
        l.class == overlap_core::timeline::LinkClass::Network
            && l.samples
                .iter()
                .any(|s| s.gbps[Axis::Pp.index()] > 0.0 && s.gbps[Axis::Dp.index()] > 0.0)
    });
    assert!(both, "no network link carries PP and DP at once");
}

#[test]
fn chunking_chapter_makes_the_step_longer() {
    let (c, r) = runs("Where overlap");
    let (b, a) = (&r.before.report, &r.after.report);
    assert_eq!((c.answer.unwrap())(&r.outcome()), 1, "the step grows");
    assert!(a.axes.tp.comm_ms > b.axes.tp.comm_ms);
    assert!(a.compute_ms > b.compute_ms);
    assert!(
        a.axes.tp.exposed_ms > b.axes.tp.exposed_ms,
        "{:?}",
        a.axes.tp
    );
}

#[test]
fn queue_chapter_leaves_over_a_third_exposed() {
    let (c, r) = runs("Overlap switched on");
    // Intro: "on a 6.7B GPT (the issue's model has 8B): 64 H100, data
    // parallel only".
    let s = c.before_input().unwrap().resolve().unwrap();
    let overlap_core::scenario::Workload::Transformer(t) = &s.workload else {
        panic!("a transformer");
    };
    let params_b = overlap_core::workload::layer_cost::model_params(t) / 1e9;
    assert!((6.65..6.75).contains(&params_b), "{params_b}B");
    assert_eq!(t.mlp, overlap_core::scenario::Mlp::Gelu, "a GPT");
    assert_eq!(s.hardware.gpus(), 64);
    assert_eq!(s.hardware_preset.name(), "dgx-h100");
    assert_eq!((s.parallel.tp, s.parallel.pp, s.parallel.dp), (1, 1, 64));
    // "the distributed optimizer with its gradient reduce-scatters and
    // parameter gathers overlapped".
    assert_eq!(
        s.parallel.dp_sharding,
        overlap_core::scenario::DpSharding::Optimizer
    );
    assert!(s.overlap.dp && s.overlap.param_gather);
    let (b, a) = (&r.before.report, &r.after.report);
    assert!(b.axes.dp.hidden > 0.9, "{}", b.axes.dp.hidden);
    // The gathers (46 of DP's 122 ms) hide no more; the fp32
    // reduce-scatters still do. Measured 0.622.
    assert!(
        (0.55..0.67).contains(&a.axes.dp.hidden),
        "{}",
        a.axes.dp.hidden
    );
    assert_eq!((c.answer.unwrap())(&r.outcome()), 0, "more than half of it");
    assert!(a.step_time_ms > b.step_time_ms);
}

/// Prints every chapter's texts as the page shows them (`--nocapture`), for
/// a reader to check the wording against the figures.
#[test]
fn print_chapters() {
    for c in CHAPTERS {
        let (c, r) = runs(c.title);
        let o = r.outcome();
        println!("## {}\n{}\n{}", c.title, c.intro_text(o.before), c.question);
        println!("{}", c.verdict_text(None, &o).unwrap_or_default());
        println!("{}\n", c.explain_text(&o));
    }
}

/// docs/course-authors.md tells authors which `chapter=` values a link may
/// carry: the range it gives must be the tour's own.
#[test]
fn the_course_authors_guide_gives_the_tours_chapter_range() {
    let guide = include_str!("../../../docs/course-authors.md");
    let row = guide
        .lines()
        .find(|l| l.trim_start().starts_with("| `chapter` |"))
        .expect("the guide's table has a `chapter` row");
    let range = format!("(1 to {})", overlap_view::tour::chapter_count());
    assert!(
        row.contains(&range),
        "the guide says {row:?}, the tour has {range}"
    );
}

/// Every chapter zooms to a part of its step, and the part is small enough
/// for its effect to show: chapter 3's blocking send and chapter 7's sliced
/// boundary are a few ms of a step of tens to hundreds.
#[test]
fn every_chapter_zooms_into_its_step() {
    for c in CHAPTERS {
        assert_ne!(c.focus, Focus::Whole, "{} shows the whole step", c.title);
        let sim = run(&c.before_input().expect("the chapter's preset exists"));
        let step = sim.timeline.step_time_s;
        let (t0, t1) = c
            .focus
            .span_s(&sim.timeline)
            .unwrap_or_else(|| panic!("{}: no region", c.title));
        eprintln!("{}: {:.4}..{:.4} of {:.4} s", c.title, t0, t1, step);
        // The last backward of a one-micro-batch step is most of it (the
        // one-queue chapter: 54%); a pipeline boundary is a few percent.
        let most = if c.focus == Focus::FirstSend {
            0.1
        } else {
            0.6
        };
        assert!(t1 - t0 < most * step, "{}: {t0}..{t1} of {step}", c.title);
    }
}
