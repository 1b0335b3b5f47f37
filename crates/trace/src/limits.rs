//! What one import may read: bytes per file, GPU events over the import,
//! and files. Each is refused with the figure in one line.

/// A file's JSON, after gzip, is read up to 1 GiB: a 100 MB trace is a
/// long profile of a large job (profile a step or two: a 1 GiB file is
/// hundreds of steps), and the kernels kept from a full 1 GiB stay within
/// [`MAX_KERNELS`]' memory.
pub const MAX_TRACE_BYTES: u64 = 1 << 30;
/// GPU events kept over an import, about 100 bytes each with their share of
/// launches: 5 million is about 500 MB at most (Kineto writes about 4
/// events, some 1 KB, per kernel, so a 1 GiB file holds about a million).
pub const MAX_KERNELS: usize = 5_000_000;
/// Files read in one import: more ranks than the largest jobs profile.
pub const MAX_FILES: usize = 4096;
