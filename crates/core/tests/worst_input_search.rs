//! A small, seeded search for the worst accepted input (issue 45): random
//! shapes, snapped to the largest value a refusal names, then a few
//! hill-climbing steps on the predicted cost. Every input is refused with a
//! field, or accepted with a predicted cost within the limits; every value a
//! refusal suggests is itself accepted. No timed assertion: bounds on
//! predicted cost. `OVERLAP_SEARCH_CASES=N` runs a larger search.

use overlap_core::input::validate::{MAX_PLANNED_EVENTS, MAX_RERATE_WORK};
use overlap_core::workload::build::run_cost::budget_within;
use overlap_core::{ScenarioInput, MAX_SIMULATED_OPS, MAX_TIMELINE_OPS};

/// A deterministic generator (xorshift64*), so that CI runs the same search.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

fn shape(r: &mut Rng) -> String {
    let tp = r.pick(&[1u32, 2, 4, 8]);
    let pp = r.pick(&[1u32, 2, 4, 8, 16, 32, 64, 128]);
    let dp = r.pick(&[1u32, 2, 8, 64]);
    let gpus_per_node = 8;
    let nodes = (tp * pp * dp).div_ceil(gpus_per_node).max(1);
    let dp = nodes * gpus_per_node / (tp * pp);
    let schedule = r.pick(&[
        "1f1b",
        "gpipe",
        "interleaved",
        "zb-1p",
        "zb-2p",
        "zb-v",
        "dualpipe-v",
    ]);
    let vs = match schedule {
        "interleaved" => r.pick(&[2u32, 4]),
        "zb-v" | "dualpipe-v" => 2,
        _ => 1,
    };
    let layers = pp * vs * r.pick(&[1u32, 2, 8, 32]);
    let mode = r.pick(&["train", "train", "inference"]);
    let m = pp * vs * r.pick(&[1u32, 4, 64, 1024]);
    format!(
        r#"{{"hardware":{{"nodes":{nodes},"nic_gbps":{nic},"oversubscription":{os}}},"workload":{{"mode":"{mode}","layers":{layers},"hidden":1024,"heads":8,"seq":2048,"micro_batch":1,"global_batch":{gb}}},"parallel":{{"tp":{tp},"pp":{pp},"dp":{dp},"schedule":"{schedule}","virtual_stages":{vs}}},"overlap":{{"tp_chunks":{chunks},"bucket_mb":{bucket}}}}}"#,
        nic = r.pick(&[25, 200]),
        os = r.pick(&[1, 4, 64]),
        gb = m * dp,
        chunks = r.pick(&[1, 4, 64]),
        bucket = r.pick(&[0.1, 25.0]),
    )
}

/// The input with `field` (a dotted path) set to `value`.
fn with(input: &ScenarioInput, field: &str, value: u64) -> ScenarioInput {
    let mut v = serde_json::to_value(input).unwrap();
    let (section, name) = field.split_once('.').unwrap();
    v[section][name] = serde_json::json!(value);
    serde_json::from_value(v).unwrap()
}

/// The last whole number of a message: the value it suggests.
fn suggested(message: &str) -> Option<u64> {
    let tail = message.rsplit("here is ").next()?;
    tail.split(|c: char| !c.is_ascii_digit())
        .find(|w| !w.is_empty())?
        .parse()
        .ok()
}

/// Accepted within the limits (returns its predicted planned events), or
/// refused naming a field, whose suggested value (when it gives one) is
/// itself accepted.
fn check(input: &ScenarioInput) -> Option<u64> {
    match input.resolve() {
        Ok(s) => {
            let b = budget_within(&s, MAX_TIMELINE_OPS).expect("an accepted step is predicted");
            assert!(b.step.ops <= MAX_SIMULATED_OPS, "{b:?}");
            assert!(b.figures.ops <= MAX_TIMELINE_OPS, "{b:?}");
            assert!(b.figures.planned_events <= MAX_PLANNED_EVENTS, "{b:?}");
            assert!(b.figures.rerate_work <= MAX_RERATE_WORK, "{b:?}");
            Some(b.figures.planned_events)
        }
        Err(e) => {
            let first = &e.errors[0];
            assert!(!first.field.is_empty() && !first.message.is_empty());
            if let (Some(value), true) = (
                suggested(&first.message),
                first.message.contains("largest valid"),
            ) {
                let snapped = with(input, &first.field, value);
                assert!(
                    snapped.resolve().is_ok(),
                    "{}: suggested {value} refused: {:?}",
                    first.field,
                    snapped.resolve().err()
                );
            }
            None
        }
    }
}

#[test]
fn a_seeded_search_finds_every_input_refused_or_within_bounds() {
    let cases: u64 = std::env::var("OVERLAP_SEARCH_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let mut r = Rng(0x45_45_45_45);
    let mut worst = (0u64, String::new());
    for _ in 0..cases {
        let text = shape(&mut r);
        let mut input = ScenarioInput::from_json(&text).unwrap();
        let Some(mut cost) = check(&input) else {
            continue;
        };
        // Hill-climb: double a size while the step stays accepted and costs more.
        for _ in 0..3 {
            let field = r.pick(&[
                "workload.global_batch",
                "workload.layers",
                "overlap.tp_chunks",
            ]);
            let now = serde_json::to_value(&input).unwrap()[field.split_once('.').unwrap().0]
                [field.split_once('.').unwrap().1]
                .as_u64()
                .unwrap_or(1);
            let next = with(&input, field, now * 2);
            match check(&next) {
                Some(c) if c > cost => (input, cost) = (next, c),
                _ => {}
            }
        }
        if cost > worst.0 {
            worst = (cost, input.to_json_pretty());
        }
    }
    println!("worst predicted planned events {}: {}", worst.0, worst.1);
}
