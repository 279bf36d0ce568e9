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
