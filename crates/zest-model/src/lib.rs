//! BPMN model: parses BPMN 2.0 XML with Zeebe's `zeebe:` extensions, validates it and builds the
//! executable graph the engine runs. Pure: no I/O, no clock.

pub mod dmn;
mod dmn_boxed;
mod dmn_boxed_eval;
mod dmn_eval;
mod dmn_parse;
mod model;
mod parse;
pub mod time;
mod xml;

pub use dmn::parse_dmn;
pub use model::*;
pub use parse::parse_bpmn;
