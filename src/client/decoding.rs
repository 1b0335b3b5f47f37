//! A result's timeline on its way to the screen: decoded from its two typed
//! arrays, then measured for drawing (`Preparing`), each a slice at a time,
//! so that no single task holds the main thread for long.

use overlap_view::prepared::{Prepared, Preparing};

use super::show::Shown;
use crate::dom;
use overlap_session::codec::{Decoder, Words};

/// The decoder aims at slices of about this long on the main thread (half
/// a 60 Hz frame: a slice and the frame's own work fit in one).
const SLICE_TARGET_MS: f64 = 8.0;
/// The first slice of each stage, in records: its rate sizes the next.
const FIRST_SLICE_RECORDS: usize = 20_000;

/// The typed arrays of one result.
pub struct JsWords {
    f64s: js_sys::Float64Array,
    u32s: js_sys::Uint32Array,
}

impl JsWords {
    /// The two arrays that follow a `Result` reply, in its order.
    pub fn from_arrays(arrays: &js_sys::Array) -> Option<Self> {
        use wasm_bindgen::JsCast;
        Some(Self {
            f64s: arrays.get(0).dyn_into().ok()?,
            u32s: arrays.get(1).dyn_into().ok()?,
        })
    }
}

impl Words for JsWords {
    fn len_f64(&self) -> usize {
        self.f64s.length() as usize
    }
    fn len_u32(&self) -> usize {
        self.u32s.length() as usize
    }
    fn read_f64(&self, at: usize, out: &mut [f64]) {
        self.f64s
            .subarray(at as u32, (at + out.len()) as u32)
            .copy_to(out);
    }
    fn read_u32(&self, at: usize, out: &mut [u32]) {
        self.u32s
            .subarray(at as u32, (at + out.len()) as u32)
            .copy_to(out);
    }
}

enum Stage {
    Decode(Decoder),
    Prepare(Preparing),
    /// Decoded and measured: shown in a task of its own, so that showing
    /// the run (and the figures' updates it sets off) never adds up with
    /// the last slice into one long task.
    Ready(Box<Prepared>),
}

/// The newest result, a slice at a time.
pub struct Decoding {
    pub gen: u64,
    /// What is shown with the timeline.
    pub run: Shown,
    /// `None` only while a slice moves it to its next stage.
    stage: Option<Stage>,
    words: JsWords,
    records_per_slice: usize,
}

impl Decoding {
    /// Reads the timeline's header.
    pub fn new(gen: u64, run: Shown, words: JsWords) -> Result<Self, String> {
        let decoder = Decoder::new(&words)
            .map_err(|e| format!("The simulation's timeline could not be read: {}.", e.0))?;
        Ok(Self {
            gen,
            run,
            stage: Some(Stage::Decode(decoder)),
            words,
            records_per_slice: FIRST_SLICE_RECORDS,
        })
    }

    /// Does one slice; true once the timeline is ready to show.
    pub fn slice(&mut self) -> Result<bool, String> {
        let t0 = dom::now_ms();
        let done = match self.stage.as_mut() {
            Some(Stage::Decode(decoder)) => {
                let drawing = decoder.drawing();
                let done = decoder
                    .step(&self.words, self.records_per_slice)
                    .map_err(|e| {
                        format!("The simulation's timeline could not be read: {}.", e.0)
                    })?;
                if decoder.drawing() != drawing {
                    // The short run is decoded: drawing the whole step from
                    // it is sized afresh, as measuring is below.
                    self.count_slice(t0, dom::now_ms() - t0);
                    self.records_per_slice = FIRST_SLICE_RECORDS;
                    return Ok(false);
                }
                done
            }
            Some(Stage::Prepare(preparing)) => preparing.step(self.records_per_slice),
            Some(Stage::Ready(_)) => return Ok(true),
            None => return Ok(false),
        };
        let took = dom::now_ms() - t0;
        self.count_slice(t0, took);
        // Aim the next slice at SLICE_TARGET_MS from this one's rate,
        // growing at most twofold: one slice that ran quickly never
        // licenses one many times longer.
        let per_ms = self.records_per_slice as f64 / took.max(0.05);
        let aim = (per_ms * SLICE_TARGET_MS) as usize;
        self.records_per_slice = aim.clamp(1000, (self.records_per_slice * 2).min(1 << 20));
        if done {
            self.stage = match self.stage.take() {
                // Decoded: measure it for drawing in slices of its own,
                // sized afresh (a bar costs more to measure than to decode).
                Some(Stage::Decode(decoder)) => {
                    self.records_per_slice = FIRST_SLICE_RECORDS;
                    Some(Stage::Prepare(Preparing::new(decoder.finish())))
                }
                Some(Stage::Prepare(preparing)) => {
                    self.run.path.wall_ms = dom::now_ms() - self.run.received_ms;
                    Some(Stage::Ready(Box::new(preparing.finish())))
                }
                other => other,
            };
        }
        Ok(false)
    }

    /// Counts a slice that began at `t0` and took `took_ms` in the
    /// timeline's path, under its stage (decoding includes drawing the
    /// whole step from a short run).
    fn count_slice(&mut self, t0: f64, took_ms: f64) {
        let path = &mut self.run.path;
        if path.slices == 0 {
            path.wait_ms = t0 - self.run.received_ms;
        }
        path.slices += 1;
        match self.stage {
            Some(Stage::Decode(_)) => path.decode_ms += took_ms,
            _ => path.prepare_ms += took_ms,
        }
    }

    /// The timeline, measured for drawing, once `slice` said it is ready.
    pub fn into_ready(self) -> Option<(Shown, Prepared)> {
        match self.stage {
            Some(Stage::Ready(prepared)) => Some((self.run, *prepared)),
            _ => None,
        }
    }
}
