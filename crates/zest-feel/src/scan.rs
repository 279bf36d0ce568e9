//! A lexical pre-scan of a FEEL text before dsntk parses it: where its string literals and
//! comments are. dsntk reads both in linear time, while its parse of everything else costs more
//! than linear time (see the limits in `lib.rs`); the limits on work apply to [`Scanned::code`],
//! the text without them, so that a long text in a string literal (a system prompt of an AI
//! agent) costs no more than a short one.

use std::borrow::Cow;

/// A FEEL text as the parse needs it.
pub(crate) struct Scanned<'a> {
    /// The text dsntk parses: the source, with each line break inside a string literal written
    /// as an escape (`\n`, `\r`, `\u000B`, `\u000C`). FEEL-scala (Zeebe) accepts a string
    /// literal over several lines; dsntk refuses a raw line break inside one.
    pub text: Cow<'a, str>,
    /// The source without the contents of its string literals (each literal left as `""`) and
    /// with each comment as one space: the tokens that dsntk's parser works on.
    pub code: String,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Code,
    Literal { escaped: bool },
    LineComment,
    BlockComment,
}

/// Scans `source` as dsntk's lexer reads it: `"` outside a comment opens a string literal that
/// the next unescaped `"` closes, `//` and `/*` outside a literal open a comment.
pub(crate) fn scan(source: &str) -> Scanned<'_> {
    let mut code = String::with_capacity(source.len().min(1024));
    // the text for dsntk, built only once a line break in a literal needs an escape, and how far
    // into the source it is built
    let mut text: Option<String> = None;
    let mut copied = 0;
    let mut state = State::Code;
    let mut chars = source.char_indices().peekable();
    while let Some((at, ch)) = chars.next() {
        let next = chars.peek().map(|&(_, c)| c);
        state = match state {
            State::Code => match (ch, next) {
                ('"', _) => {
                    code.push('"');
                    State::Literal { escaped: false }
                }
                ('/', Some('/')) => {
                    chars.next();
                    code.push(' ');
                    State::LineComment
                }
                ('/', Some('*')) => {
                    chars.next();
                    code.push(' ');
                    State::BlockComment
                }
                _ => {
                    code.push(ch);
                    State::Code
                }
            },
            State::Literal { escaped } => {
                if let Some(escape) = line_break_escape(ch) {
                    let text = text.get_or_insert_with(String::new);
                    text.push_str(&source[copied..at]);
                    if escaped {
                        // a backslash before the line break stays a backslash (`\\`)
                        text.push('\\');
                    }
                    text.push_str(escape);
                    copied = at + ch.len_utf8();
                    State::Literal { escaped: false }
                } else if escaped {
                    State::Literal { escaped: false }
                } else if ch == '\\' {
                    State::Literal { escaped: true }
                } else if ch == '"' {
                    code.push('"');
                    State::Code
                } else {
                    state
                }
            }
            State::LineComment if ch == '\n' => State::Code,
            State::BlockComment if ch == '*' && next == Some('/') => {
                chars.next();
                State::Code
            }
            State::LineComment | State::BlockComment => state,
        };
    }
    let text = match text {
        Some(mut text) => {
            text.push_str(&source[copied..]);
            Cow::Owned(text)
        }
        None => Cow::Borrowed(source),
    };
    Scanned { text, code }
}

/// The escape dsntk reads for a line break character (dsntk's "vertical space").
fn line_break_escape(ch: char) -> Option<&'static str> {
    match ch {
        '\n' => Some("\\n"),
        '\r' => Some("\\r"),
        '\u{000B}' => Some("\\u000B"),
        '\u{000C}' => Some("\\u000C"),
        _ => None,
    }
}
