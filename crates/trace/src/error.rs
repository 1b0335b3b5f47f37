//! Why a trace could not be imported: one line, cut short whatever the
//! file echoes into it.

use std::fmt;

/// A message is cut here: what a file holds is echoed at most this long.
const MAX_MESSAGE_CHARS: usize = 300;

/// Why a trace could not be imported: one line naming the file and the cause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportError {
    message: String,
}

impl ImportError {
    pub(crate) fn new(message: String) -> Self {
        // One line, and short whatever the file echoes into it.
        let mut message = message.replace(['\n', '\r'], " ");
        if message.chars().count() > MAX_MESSAGE_CHARS {
            message = message.chars().take(MAX_MESSAGE_CHARS).collect::<String>() + "…";
        }
        Self { message }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ImportError {}
