//! What the BPMN and DMN parsers share: reading a resource as an XML document, and turning byte
//! offsets into the line and column numbers that problems are reported with.

use roxmltree::Document;

use crate::model::{ModelError, Problem};

/// The resource as UTF-8 text (without a byte order mark) and its XML document, or the problem
/// that makes it unreadable (with its line and column).
pub(crate) fn load<'t>(
    resource_name: &str,
    bytes: &'t [u8],
) -> Result<(&'t str, Document<'t>), ModelError> {
    let fail = |problem: Problem| ModelError {
        resource_name: resource_name.to_string(),
        problems: vec![problem],
    };
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            // The valid prefix is UTF-8; locate the first bad byte in it.
            let valid = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default();
            let (line, column) = LineIndex::new(valid).pos(valid.len());
            return Err(fail(Problem {
                element_id: None,
                line,
                column,
                message: format!("XML is not well-formed: the resource is not valid UTF-8 ({e})"),
            }));
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match Document::parse(text) {
        Ok(doc) => Ok((text, doc)),
        Err(e @ (roxmltree::Error::UnclosedRootNode | roxmltree::Error::UnexpectedEndOfStream)) => {
            // roxmltree places these at 1:1; the problem is where the text ends
            let index = LineIndex::new(text);
            let (line, column) = index.pos(text.len());
            let open = match last_open_element(text) {
                Some((name, at)) => {
                    let (l, c) = index.pos(at);
                    format!(" while <{name}> (opened at line {l}, column {c}) is not closed")
                }
                None => String::new(),
            };
            Err(fail(Problem {
                element_id: None,
                line,
                column,
                message: format!("XML is not well-formed: {e}: the document ends{open}"),
            }))
        }
        Err(e) => {
            let pos = e.pos();
            Err(fail(Problem {
                element_id: None,
                line: pos.row,
                column: pos.col,
                message: format!("XML is not well-formed: {e}"),
            }))
        }
    }
}

/// The innermost element left open at the end of `text` (its name and byte offset): a scan of
/// the tags, skipping comments, CDATA, processing instructions and declarations.
fn last_open_element(text: &str) -> Option<(String, usize)> {
    let mut open: Vec<(&str, usize)> = Vec::new();
    let mut i = 0;
    while let Some(lt) = text[i..].find('<').map(|p| p + i) {
        let rest = &text[lt..];
        let skip_to = |end: &str| rest.find(end).map(|p| lt + p + end.len());
        let next = if rest.starts_with("<!--") {
            skip_to("-->")
        } else if rest.starts_with("<![CDATA[") {
            skip_to("]]>")
        } else if rest.starts_with("<?") || rest.starts_with("<!") {
            skip_to(">")
        } else {
            let end = rest.find('>').map(|p| lt + p);
            let tag = &text[lt + 1..end.unwrap_or(text.len())];
            let name = tag
                .trim_start_matches('/')
                .split(|c: char| c.is_whitespace() || c == '/')
                .next()
                .unwrap_or("");
            if tag.starts_with('/') {
                open.pop();
            } else if end.is_none() || !tag.ends_with('/') {
                // an open tag, or one cut off by the end of the text
                open.push((name, lt));
            }
            end.map(|e| e + 1)
        };
        match next {
            Some(n) => i = n,
            None => break,
        }
    }
    open.last().map(|(n, at)| (n.to_string(), *at))
}

/// Byte offset -> 1-based line and column (in characters).
pub(crate) struct LineIndex<'t> {
    text: &'t str,
    line_starts: Vec<usize>,
}

impl<'t> LineIndex<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { text, line_starts }
    }

    /// The line of `node`.
    pub(crate) fn line(&self, node: roxmltree::Node) -> u32 {
        self.pos(node.range().start).0
    }

    /// A problem at `node` (its line and column).
    pub(crate) fn problem(
        &self,
        element_id: Option<&str>,
        node: roxmltree::Node,
        message: impl Into<String>,
    ) -> Problem {
        let (line, column) = self.pos(node.range().start);
        Problem {
            element_id: element_id.map(str::to_string),
            line,
            column,
            message: message.into(),
        }
    }

    pub(crate) fn pos(&self, byte: usize) -> (u32, u32) {
        let byte = byte.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= byte).max(1);
        let start = self.line_starts.get(line - 1).copied().unwrap_or(0);
        let col = self.text.get(start..byte).map_or(0, |s| s.chars().count()) + 1;
        (
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(col).unwrap_or(u32::MAX),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(text: &str) -> Problem {
        load("t.bpmn", text.as_bytes())
            .unwrap_err()
            .problems
            .remove(0)
    }

    #[test]
    fn a_document_that_ends_too_early_is_reported_where_it_ends() {
        let p = problem(
            "<?xml version=\"1.0\"?>\n<definitions>\n  <!-- <not-a-tag> -->\n  <process id=\"p\">\n    <task/>\n",
        );
        assert_eq!((p.line, p.column), (6, 1), "{p:?}");
        assert!(
            p.message
                .contains("<process> (opened at line 4, column 3) is not closed"),
            "{}",
            p.message
        );
    }

    #[test]
    fn other_errors_keep_their_position() {
        let p = problem("<a>\n  <b x=\"1\" x=\"2\"/>\n</a>");
        assert_eq!((p.line, p.column), (2, 12), "{p:?}");
    }
}
