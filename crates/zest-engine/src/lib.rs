//! The deterministic engine: (state, command, timestamp) -> (records, responses, side effects).
//!
//! No I/O, no clock, no threads, no randomness, no output that depends on hash-map order. The
//! broker feeds it commands and a timestamp; it reads state through [`state::StateRead`], writes
//! only through event appliers into a [`state::Txn`], and returns the records to append.
//!
//! Layout: one module per concern. `engine` holds the processing loop and the record writers;
//! `appliers` is the only code that mutates state; `bpmn` holds one behaviour per element kind;
//! `jobs`, `deployment`, `instance` hold the processors of the other value types;
//! `events` holds event triggers (PROCESS_EVENT); `messages` the message subscriptions;
//! `ad_hoc` ad-hoc sub-processes and their inner instances; `compensation` compensation subscriptions, throw events and handlers; `listeners` execution listeners (jobs an element's lifecycle waits for);
//! `signals` signal broadcasts and subscriptions; `multi_instance` multi-instance bodies and
//! PROCESS_INSTANCE_BATCH (children activated or terminated one command at a time);
//! `modification` and `migration` the instance operations of Operate; `user_tasks` Camunda user tasks (USER_TASK); `decisions` DMN deployment and decision
//! evaluation (DECISION_EVALUATION); `variables` implements Zeebe's variable scoping and propagation, `scope_variables` how one scope's variables are stored (one document per scope).

mod appliers;
mod behaviour;
mod context;
mod element;
mod engine;
mod keys;
mod models;
mod processors;
pub mod queries;
pub mod scope_variables;
pub mod state;
pub mod types;

pub use appliers::apply_event;
pub use context::{
    new_command, JobStreams, ProcResult, ProcessingResult, Rejection, Response, SideEffect,
    StreamTarget,
};
pub use engine::Engine;
pub use keys::user_task_key;
pub use models::Models;
