//! The timeline's way across the worker boundary, timed natively on 1T
//! (the preset, and with TP overlap on, as the page benchmark switches it):
//! the core's run with its timeline as the worker makes it (one short run
//! and how its steady period repeats, `Simulator::simulate_repeating`),
//! then the worker's sort and encode, and the page's decode, which draws
//! the whole step from the short run. Figures are printed, never asserted;
//! WebAssembly runs them about 1.5 to 2 times slower.
//!
//!   cargo bench -p overlap-session --bench codec

use std::time::Instant;

use overlap_core::{periods, presets, Simulator};
use overlap_session::codec::{self, Decoder};

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let preset = presets::scenario("megatron-1t").expect("1T preset");
    let mut tp_on = preset.clone();
    tp_on.overlap.tp = true;
    for (name, scenario) in [
        ("megatron-1t", preset),
        ("megatron-1t, TP overlap on", tp_on),
    ] {
        let t = Instant::now();
        // One thread, as in the worker.
        let sim = Simulator::default()
            .with_threads(1)
            .simulate_repeating(&scenario);
        let sim_ms = ms(t);
        let mut timeline = sim.timeline;
        let sent_bars = timeline.interval_count();
        let t = Instant::now();
        codec::sort_lanes(&mut timeline);
        let sort_ms = ms(t);
        let t = Instant::now();
        let encoded = codec::encode(&timeline, sim.repeat);
        let encode_ms = ms(t);
        let mb = (encoded.f64s.len() * 8 + encoded.u32s.len() * 4) as f64 / 1e6;
        let t = Instant::now();
        let mut d = Decoder::new(&encoded).expect("header");
        while !d.step(&encoded, 100_000).expect("decodes") {}
        let decoded = d.finish();
        let decode_ms = ms(t);
        let bars = decoded.interval_count();
        let timeline = match sim.repeat {
            Some(repeat) => periods::whole(timeline, repeat).expect("ids fit"),
            None => timeline,
        };
        // Bit for bit (Debug writes -0.0 and every f64 exactly), lane by
        // lane: what the page draws is what the core computed.
        let same = decoded.gpus.iter().zip(&timeline.gpus).all(|(a, b)| {
            format!("{:?}", (&a.compute, &a.comm)) == format!("{:?}", (&b.compute, &b.comm))
        }) && decoded
            .links
            .iter()
            .zip(&timeline.links)
            .all(|(a, b)| format!("{a:?}") == format!("{b:?}"))
            && decoded.gpus.len() == timeline.gpus.len()
            && decoded.links.len() == timeline.links.len()
            && decoded.step_time_s.to_bits() == timeline.step_time_s.to_bits();
        assert!(same, "a timeline decodes to the core's, bit for bit");
        drop(decoded);
        println!(
            "{name:>28}: {bars} bars ({sent_bars} sent); simulate with timeline {sim_ms:.0} ms; \
             sort {sort_ms:.1} ms; encode {encode_ms:.1} ms ({mb:.1} MB); \
             decode and draw whole {decode_ms:.1} ms"
        );
    }
}
