//! The rank file's JSON layout: what HTA's rank pattern needs, and a line
//! per top-level key and per trace event.

use std::io;

/// Compact JSON with a space after every colon (HTA's rank pattern needs
/// it), each top-level key and each trace event on a line of its own.
#[derive(Default)]
pub(super) struct TraceFormatter {
    depth: usize,
}

impl serde_json::ser::Formatter for TraceFormatter {
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth += 1;
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth -= 1;
        w.write_all(if self.depth == 0 { b"\n}" } else { b"}" })
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        if self.depth == 1 {
            w.write_all(b"\n")?;
        }
        Ok(())
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })
    }
}
