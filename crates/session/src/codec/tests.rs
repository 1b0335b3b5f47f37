//! The codec's round trips, bit for bit, and its refusals.

use overlap_core::timeline::{Algorithm, Axis, Kernel, OpKind, Phase, Protocol};
use overlap_core::Timeline;

use super::decode::kernel_of;
use super::encode::{is_short, lanes};
use super::layout::kernel_code;
use super::*;

fn decode_in_slices(e: &Encoded, slice: usize) -> Timeline {
    let mut d = Decoder::new(e).expect("header");
    while !d.step(e, slice).expect("step") {}
    d.finish()
}

fn sample_timeline() -> Timeline {
    let scenario = overlap_core::presets::find("contention")
        .expect("contention preset")
        .input()
        .resolve()
        .expect("valid preset");
    let mut t = overlap_core::simulate(&scenario).timeline;
    sort_lanes(&mut t);
    t
}

/// Bit for bit: JSON writes every f64 exactly, -0.0 as such.
fn same_bits(a: &Timeline, b: &Timeline) -> bool {
    serde_json::to_string(a).unwrap() == serde_json::to_string(b).unwrap()
}

#[test]
fn a_simulated_timeline_survives_encoding_bit_for_bit() {
    let t = sample_timeline();
    assert!(t.interval_count() > 100 && !t.links.is_empty());
    let e = encode(&t, None);
    assert_eq!(e.f64s.len(), encoded_len(&t).0);
    assert_eq!(e.u32s.len(), encoded_len(&t).1);
    assert!(same_bits(&decode_in_slices(&e, usize::MAX), &t));
}

#[test]
fn every_axis_and_kernel_of_the_presets_survives_encoding() {
    // EP and CP lanes, queues, DualPipeV, inference: what each preset
    // puts in its bars and samples.
    for id in [
        "didactic",
        "coconet",
        "moe-didactic",
        "long-context-ring",
        "distributed-optimizer",
        "coconet-inference",
    ] {
        let scenario = overlap_core::presets::scenario(id).expect("preset");
        let mut t = overlap_core::simulate(&scenario).timeline;
        sort_lanes(&mut t);
        let e = encode(&t, None);
        assert!(same_bits(&decode_in_slices(&e, 1000), &t), "{id}");
    }
}

#[test]
fn a_bar_unlike_a_compute_op_keeps_its_whole_record() {
    let mut t = sample_timeline();
    let short = |t: &Timeline| lanes(t).flatten().filter(|iv| is_short(iv)).count();
    let before = short(&t);
    assert!(before > 0);
    // Each of these breaks exactly one condition of a short record.
    let bars = &mut t.gpus[0].compute;
    bars[0].bytes = -0.0;
    bars[1].exposed_from_s = bars[1].start_s;
    bars[2].window = Some((0.0, 0.0));
    bars[3].contention_s = f64::MIN_POSITIVE;
    bars[4].kernel = Some(Kernel {
        algorithm: Algorithm::ALL[0],
        protocol: Protocol::ALL[0],
    });
    assert_eq!(short(&t), before - 5);
    // A rate of an axis no other sample has is sent too.
    let link = t.links.iter_mut().find(|l| !l.samples.is_empty()).unwrap();
    link.samples[0].gbps[Axis::COUNT - 1] = -0.0;
    let e = encode(&t, None);
    assert!(same_bits(&decode_in_slices(&e, 3), &t));
}

/// A short run's timeline and its repeat, decoded in slices, draw the
/// whole step the core draws from them (1T's shape: 145.6B, whose
/// timeline is made of one short run).
#[test]
fn a_repeating_timeline_decodes_to_the_whole_step() {
    let mut s = overlap_core::presets::scenario("megatron-145.6b").expect("preset");
    s.overlap.tp = true;
    s.overlap.pp = true;
    let mut run = overlap_core::Simulator::default().simulate_repeating(&s);
    let repeat = run.repeat.expect("145.6B repeats its steady period");
    sort_lanes(&mut run.timeline);
    let whole = overlap_core::periods::whole(run.timeline.clone(), repeat).unwrap();
    assert!(whole.interval_count() > 3 * run.timeline.interval_count());
    let e = encode(&run.timeline, Some(repeat));
    assert_eq!(
        (e.f64s.len(), e.u32s.len()),
        encoded_len(&run.timeline),
        "the short run's words alone"
    );
    assert!(same_bits(&decode_in_slices(&e, 5000), &whole));
    let expected_ms = run.report.step_time_ms;
    assert!((whole.step_time_s * 1e3 - expected_ms).abs() < 1e-9 * expected_ms);
    // A repeat with no unit is a foreign buffer.
    let mut e = e;
    e.u32s[7] = 0;
    assert!(Decoder::new(&e).is_err());
}

#[test]
fn decoding_in_small_slices_gives_the_same_timeline() {
    let t = sample_timeline();
    let e = encode(&t, None);
    assert_eq!(decode_in_slices(&e, 7), t);
    assert_eq!(decode_in_slices(&e, 1), t);
}

#[test]
fn every_op_kind_and_phase_round_trips_through_its_code() {
    for (i, op) in OpKind::ALL.iter().enumerate() {
        assert_eq!(op.index(), i);
    }
    for (i, p) in Phase::ALL.iter().enumerate() {
        assert_eq!(p.index(), i);
    }
    let mut codes = vec![kernel_code(None)];
    assert_eq!(kernel_of(0), Ok(None));
    for algorithm in Algorithm::ALL {
        for protocol in Protocol::ALL {
            let k = Some(Kernel {
                algorithm,
                protocol,
            });
            codes.push(kernel_code(k));
            assert_eq!(kernel_of(kernel_code(k)), Ok(k));
        }
    }
    assert_eq!(codes, (0..10).collect::<Vec<u32>>(), "dense codes from 0");
    assert!(kernel_of(10).is_err());
}

#[test]
fn a_cut_or_foreign_buffer_is_refused_not_misread() {
    let t = sample_timeline();
    // A word short or over: refused by the header or once the records
    // are read, never misread.
    let decodes = |e: &Encoded| -> Result<Timeline, DecodeError> {
        let mut d = Decoder::new(e)?;
        while !d.step(e, 1000)? {}
        Ok(d.finish())
    };
    let mut e = encode(&t, None);
    e.f64s.pop();
    assert!(decodes(&e).is_err());
    let mut e = encode(&t, None);
    e.f64s.push(0.0);
    assert!(decodes(&e).is_err());
    let mut e = encode(&t, None);
    e.u32s.pop();
    assert!(Decoder::new(&e).is_err());
    let mut e = encode(&t, None);
    e.u32s[0] = 7;
    assert!(Decoder::new(&e).is_err());
    assert!(Decoder::new(&Encoded::default()).is_err());
}
