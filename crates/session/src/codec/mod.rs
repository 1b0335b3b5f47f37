//! The timeline as two flat word arrays (`f64` and `u32`), so that the
//! simulation worker can hand it to the page as two transferable buffers
//! instead of a serialised text. Every `f64` travels as its exact bits: the
//! page draws the same numbers the core computed.
//!
//! Layout. The `u32` words start with a header: `MAGIC`, `VERSION`, the GPU
//! count, `reduced`, the link count, the mask of axes any link sample
//! carries (bit `Axis::index`), and the periods and unit of its `Repeat` (0
//! and 0 for a whole step's timeline); then per GPU its rank, node, stage,
//! dp_rank, tp_rank, represents and the lengths of its lanes (compute, then
//! one per axis); then per link its GPU (`NO_GPU` for the network core),
//! class, direction and sample count. The `f64` words start with the step
//! time, the `Repeat`'s three marks (zeros without one) and each link's
//! capacity. Then, lane after lane in that order, each interval takes
//! `U32_PER_INTERVAL` words and either `F64_PER_SHORT` (a bar with no
//! traffic: a compute op, `encode`'s `is_short`) or `F64_PER_INTERVAL`
//! words, as its flag word says; then each link's samples take one word for
//! their time and one per axis in the mask.
//!
//! Version 6 carries a short run's timeline and the `Repeat` that draws
//! the whole step from it (`overlap_core::periods`): on 1T a seventh of the
//! bars cross from the worker, and the decoder draws the rest, a GPU at a
//! time, as the last of its slices.
//!
//! Version 5 took about half of version 4's words on 1T (a compute bar,
//! two in three of its bars, carried seven `f64`s that are always zero or
//! its end; a sample, five rates of which two are ever non-zero there):
//! every word is written by the worker, copied to the page and read by the
//! decoder, so the timeline reaches the screen in about half the time.
//!
//! The encoder writes into any [`WordSink`] a bounded chunk at a time, so
//! that the worker fills the transferable typed arrays directly rather than
//! first growing its memory by the whole encoded timeline. The decoder is
//! resumable: the page decodes a large timeline a slice at a time, so that
//! no single task holds the main thread for long.
//!
//! The format is declared in `layout`, the buffers it travels in in
//! `words`; `encode` writes a timeline into them and `decode` reads it back.

mod decode;
mod encode;
mod layout;
mod words;

pub use decode::{DecodeError, Decoder};
pub use encode::{encode, encode_into, encoded_len, sort_lanes};
pub use layout::{F64_PER_INTERVAL, F64_PER_SHORT, U32_PER_INTERVAL};
pub use words::{Encoded, WordSink, Words};

#[cfg(test)]
mod tests;
