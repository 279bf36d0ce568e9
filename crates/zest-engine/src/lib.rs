//! The deterministic engine: (state, command, timestamp) -> (records, responses, side effects).
//!
//! No I/O, no clock, no threads, no randomness, no output that depends on hash-map order. The
//! broker feeds it commands and a timestamp; it reads state through [`state::StateRead`], writes
//! only through event appliers into a [`state::Txn`], and returns the records to append.
//!
//! Layout, lowest first (a module imports only modules above it in this list; there is no
//! import circle):
//! - `state` (keyspaces, the `Txn` overlay), `keys` (how each keyspace's keys are built),
//!   `types` (values kept in state), `scope_variables` (one scope's variables as a document);
//! - `models` (parsed models, an LRU), `appliers/` (the only code that changes state, one
//!   module per value type), `context` (`Ctx`: record writers, keys, responses);
//! - `behaviour/`: the steps elements and processors share (expressions, variables, jobs,
//!   incidents, flows, termination, event scopes and triggers, subscriptions, listeners);
//! - `element/`: `kind` (the `ElementProcessor` trait), one module per element family, and
//!   `lifecycle` (ACTIVATE, COMPLETE, TERMINATE_ELEMENT and the steps all elements share);
//! - `processors/`: the commands, one module per value type, and `dispatch`;
//! - `engine` (`Engine::process`, replay) and `queries` (lookups for the gateway).
//!
//! `docs/architecture.md` has the map and the rooms for typical changes.

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
    is_read_only, new_command, JobStreams, ProcResult, ProcessingResult, Rejection, Response,
    SideEffect, StreamTarget,
};
pub use engine::Engine;
pub use keys::user_task_key;
pub use models::Models;
