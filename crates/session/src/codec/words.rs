//! The buffers an encoded timeline travels in: two word arrays, read and
//! written a run of words at a time, so that the page's JavaScript typed
//! arrays and the tests' vectors serve alike.

/// The timeline as words, ready to become two typed arrays.
#[derive(Debug, Default, PartialEq)]
pub struct Encoded {
    pub f64s: Vec<f64>,
    pub u32s: Vec<u32>,
}

/// Reads words from wherever the encoded buffers live (Rust vectors in
/// tests, JavaScript typed arrays on the page), a run at a time.
pub trait Words {
    fn len_f64(&self) -> usize;
    fn len_u32(&self) -> usize;
    /// Copies `out.len()` words starting at `at` into `out`.
    fn read_f64(&self, at: usize, out: &mut [f64]);
    fn read_u32(&self, at: usize, out: &mut [u32]);
}

impl Words for Encoded {
    fn len_f64(&self) -> usize {
        self.f64s.len()
    }
    fn len_u32(&self) -> usize {
        self.u32s.len()
    }
    fn read_f64(&self, at: usize, out: &mut [f64]) {
        out.copy_from_slice(&self.f64s[at..at + out.len()]);
    }
    fn read_u32(&self, at: usize, out: &mut [u32]) {
        out.copy_from_slice(&self.u32s[at..at + out.len()]);
    }
}

/// Takes encoded words at given offsets: a vector in tests, the typed
/// arrays a worker posts.
pub trait WordSink {
    /// Writes `words` from `at` on.
    fn put_f64(&mut self, at: usize, words: &[f64]);
    fn put_u32(&mut self, at: usize, words: &[u32]);
}

impl WordSink for Encoded {
    fn put_f64(&mut self, at: usize, words: &[f64]) {
        self.f64s[at..at + words.len()].copy_from_slice(words);
    }
    fn put_u32(&mut self, at: usize, words: &[u32]) {
        self.u32s[at..at + words.len()].copy_from_slice(words);
    }
}
