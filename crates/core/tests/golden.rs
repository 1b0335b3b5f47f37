//! Byte for byte: every preset's report, Chrome trace and share link, as
//! set and with every overlap on, and those of a fixed draw of the small
//! random scenarios, hashed and held to the hashes committed in
//! `tests/golden/hashes.txt`. A change that moves no figure leaves every
//! hash as it is; a change that moves figures rewrites the file in the same
//! commit (`OVERLAP_LAB_BLESS=1 cargo test -p overlap-core --test golden`)
//! and says why.

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;

use common::small_scenario;
use overlap_core::{presets, share_link, simulate_report, Scenario, ScenarioInput, Simulator};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

const HASHES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/hashes.txt");

/// The random scenarios drawn, from a seed of their own: the draw does not
/// follow `PROPTEST_RNG_SEED`, so the committed hashes stay those of the
/// same scenarios.
const RANDOM_CASES: usize = 60;
const RANDOM_SEED: [u8; 32] = *b"overlap-lab golden hashes, draw1";

/// FNV-1a, 64 bits: a hash whose value is fixed by its definition, not by
/// a library's version, fed as the bytes are written so that a large trace
/// is never held whole.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn of(bytes: &[u8]) -> u64 {
        let mut h = Fnv::new();
        h.write_all(bytes).expect("hashing cannot fail");
        h.0
    }
}

impl Write for Fnv {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A hash, or the hash of the refusal (marked so) where there is none.
fn hashed<T>(result: Result<T, String>, hash: impl FnOnce(T) -> u64) -> String {
    match result {
        Ok(v) => format!("{:016x}", hash(v)),
        Err(message) => format!("refused:{:016x}", Fnv::of(message.as_bytes())),
    }
}

fn report_hash(s: &Scenario) -> String {
    hashed(simulate_report(s).map_err(|e| e.to_string()), |f| {
        Fnv::of(
            serde_json::to_string(&f.report)
                .expect("reports serialise")
                .as_bytes(),
        )
    })
}

fn trace_hash(s: &Scenario) -> String {
    let sim = Simulator::default()
        .try_simulate(s)
        .map_err(|e| e.to_string());
    hashed(sim, |sim| {
        let mut h = Fnv::new();
        overlap_core::trace::write_chrome_trace(&sim.timeline, &mut h).expect("hashing");
        h.0
    })
}

fn every_overlap_on(s: &Scenario) -> Scenario {
    let mut on = s.clone();
    on.overlap.tp = true;
    on.overlap.pp = true;
    on.overlap.dp = true;
    on.overlap.ep = (s.parallel.ep > 1).into();
    on.overlap.cp = s.parallel.cp > 1;
    on
}

/// Every case's hashes: `case kind` to hash.
fn current() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut put = |case: &str, kind: &str, hash: String| {
        out.insert(format!("{case} {kind}"), hash);
    };
    for p in presets::PRESETS {
        let input = p.input();
        put(
            p.id,
            "link",
            format!(
                "{:016x}",
                Fnv::of(share_link::encode_shortest(&input).as_bytes())
            ),
        );
        put(
            p.id,
            "link-to-preset",
            format!(
                "{:016x}",
                Fnv::of(share_link::encode(&input, Some(p.id)).as_bytes())
            ),
        );
        let s = input.resolve().expect("presets resolve");
        put(p.id, "report", report_hash(&s));
        put(p.id, "trace", trace_hash(&s));
        let on = every_overlap_on(&s);
        let case = format!("{}+all-on", p.id);
        put(&case, "report", report_hash(&on));
        put(&case, "trace", trace_hash(&on));
    }
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &RANDOM_SEED),
    );
    let strategy = small_scenario::small(small_scenario::ALL_SCHEDULES, 4, 6);
    for i in 0..RANDOM_CASES {
        let small = strategy
            .new_tree(&mut runner)
            .expect("the strategy draws")
            .current();
        let json = small.json("", "");
        let case = format!("random-{i:02}");
        let input = match ScenarioInput::from_json(&json) {
            Ok(input) => input,
            Err(e) => {
                put(&case, "input", hashed::<()>(Err(e.to_string()), |_| 0));
                continue;
            }
        };
        put(
            &case,
            "link",
            format!(
                "{:016x}",
                Fnv::of(share_link::encode_shortest(&input).as_bytes())
            ),
        );
        match input.resolve() {
            Ok(s) => {
                put(&case, "report", report_hash(&s));
                put(&case, "trace", trace_hash(&s));
            }
            Err(e) => put(&case, "resolve", hashed::<()>(Err(e.to_string()), |_| 0)),
        }
    }
    out
}

fn render(hashes: &BTreeMap<String, String>) -> String {
    let mut text = String::from(
        "# Byte-for-byte hashes (FNV-1a 64) of every preset's and the fixed random draw's\n\
         # report, Chrome trace and share link: tests/golden.rs. Rewritten only by a change\n\
         # that moves figures, which says why in its commit.\n",
    );
    for (key, hash) in hashes {
        let _ = writeln!(text, "{key} {hash}");
    }
    text
}

fn committed() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(HASHES).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let (key, hash) = l.rsplit_once(' ')?;
            Some((key.to_string(), hash.to_string()))
        })
        .collect()
}

#[test]
fn reports_traces_and_links_are_the_committed_bytes() {
    let now = current();
    if std::env::var_os("OVERLAP_LAB_BLESS").is_some() {
        std::fs::create_dir_all(std::path::Path::new(HASHES).parent().unwrap()).unwrap();
        std::fs::write(HASHES, render(&now)).unwrap();
        return;
    }
    let then = committed();
    let mut moved = Vec::new();
    for (key, hash) in &now {
        match then.get(key) {
            Some(old) if old == hash => {}
            Some(old) => moved.push(format!("{key}: {old} -> {hash}")),
            None => moved.push(format!("{key}: new ({hash})")),
        }
    }
    for key in then.keys().filter(|k| !now.contains_key(*k)) {
        moved.push(format!("{key}: gone"));
    }
    assert!(
        moved.is_empty(),
        "{} of {} hashes differ from tests/golden/hashes.txt; a change that moves figures \
         rewrites it with OVERLAP_LAB_BLESS=1 and says why:\n{}",
        moved.len(),
        now.len(),
        moved.join("\n")
    );
}
