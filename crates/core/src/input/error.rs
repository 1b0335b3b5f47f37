//! A refused scenario: each field's error, named by its path (or link key)
//! with what would be valid, and the clipping that keeps a hostile input
//! from being echoed back whole. At the bottom of `input`: every reader and
//! check reports through it.

use serde::Serialize;

/// How much of one echoed value (a string, a name, a number) an error
/// message repeats, in characters: enough to recognise it, never the 50 MB
/// a hostile input could carry.
pub const MAX_ECHO_CHARS: usize = 80;

/// The most characters one refused field's name or message holds, however
/// many short values it quotes.
pub const MAX_MESSAGE_CHARS: usize = 600;

/// `text` made safe to show on one line: each quoted value (`"..."` or
/// `` `...` ``) and each unquoted word keeps its first [`MAX_ECHO_CHARS`]
/// characters, control characters are written as escapes, and the whole is
/// cut at [`MAX_MESSAGE_CHARS`]. A cut is marked with `…`.
pub fn clip_echoes(text: &str) -> String {
    let mut out = String::new();
    // Characters in `out`: an escape counts for each of its characters.
    let mut shown = 0usize;
    // The quote that opened the current token, if it is a quoted value.
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut run = 0usize;
    let mut cut = false;
    for c in text.chars() {
        if shown >= MAX_MESSAGE_CHARS {
            out.push('…');
            return out;
        }
        let ends_token = match quote {
            Some(q) => !escaped && c == q,
            None => c.is_whitespace() || c == '"' || c == '`',
        };
        if ends_token {
            if cut {
                out.push('…');
                shown += 1;
            }
            run = 0;
            cut = false;
            escaped = false;
            if quote.take().is_none() && (c == '"' || c == '`') {
                quote = Some(c);
            }
            shown += push_visible(&mut out, c);
            continue;
        }
        escaped = quote == Some('"') && !escaped && c == '\\';
        if run < MAX_ECHO_CHARS {
            shown += push_visible(&mut out, c);
            run += 1;
        } else {
            cut = true;
        }
    }
    if cut {
        out.push('…');
    }
    out
}

/// Control characters (a newline in a pasted value) would break the one
/// line an error takes: they are shown as escapes. Returns the characters
/// written.
fn push_visible(out: &mut String, c: char) -> usize {
    if c.is_control() || invisible_format(c) {
        let before = out.len();
        out.extend(c.escape_default());
        out.len() - before
    } else {
        out.push(c);
        1
    }
}

/// Format characters that would reorder or hide what a message shows
/// (Unicode's bidirectional controls, zero-width characters, separators of
/// lines and paragraphs, the byte-order mark): escaped like control
/// characters, so that a key echoed in an error reads as it was written.
fn invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
    )
}

/// One refused field: its dotted path and what would be valid.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// Dotted path of the field (or `scenario`, `link`, a link key).
    pub field: String,
    /// What is wrong and what would be valid.
    pub message: String,
}

impl FieldError {
    /// A refusal whose field name and message are clipped with
    /// [`clip_echoes`], so that neither repeats a long input back.
    pub fn new(field: &str, message: &str) -> Self {
        Self {
            field: clip_echoes(field),
            message: clip_echoes(message),
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Every problem found in a scenario, so that a user sees them all at once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScenarioError {
    /// Each refused field, in the order found.
    pub errors: Vec<FieldError>,
}

impl ScenarioError {
    /// One refused field, clipped as [`FieldError::new`] does.
    pub fn single(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            errors: vec![FieldError::new(&field.into(), &message.into())],
        }
    }
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.errors.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join("; "))
    }
}

impl std::error::Error for ScenarioError {}
