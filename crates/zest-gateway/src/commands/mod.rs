//! The command layer both gateways share: each function takes a typed input, checks it, builds
//! the command record, submits it through [`Broker::submit`] to the partition it belongs to
//! (round-robin for new instances, `key >> 51` for keys, partition 1 for deployments, signals
//! and decisions, the correlation key's hash for messages) and returns a typed result. What can
//! go wrong is one [`CommandError`], which the gRPC service turns into a `tonic::Status` and the
//! REST API into an RFC 9457 problem: the rejections and broker errors are mapped once, here.
//!
//! One module per resource: `deployment`, `process_instance`, `job`, `message`, `signal`,
//! `incident`, `variables`, `decision`, `resource`, `user_task`, `clock`, `batch_operation`,
//! `history_deletion`, `user`.

use std::sync::Arc;
use std::time::Duration;

use zest_broker::Broker;
use zest_engine::new_command;
use zest_protocol::{Intent, PartitionId, Record, RecordType, RecordValue, DEFAULT_TENANT};

pub mod batch_operation;
pub mod clock;
pub mod decision;
pub mod deployment;
mod error;
pub mod history_deletion;
pub mod incident;
pub mod job;
pub mod job_result;
pub mod message;
pub mod process_instance;
pub mod resource;
pub mod signal;
pub mod user;
pub mod user_task;
pub mod variables;

pub use error::CommandError;

/// The gateway's settings, shared by gRPC and REST.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// Largest request accepted, in bytes (Zeebe's default: 4 MiB).
    pub max_message_size: usize,
    /// Long-polling time of ActivateJobs when the request gives none (requestTimeout 0).
    pub default_long_polling: Duration,
    /// How long CreateProcessInstanceWithResult waits when the request gives no timeout.
    pub default_request_timeout: Duration,
    /// Version reported by Topology.
    pub version: String,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            max_message_size: 4 * 1024 * 1024,
            default_long_polling: Duration::from_secs(10),
            default_request_timeout: Duration::from_secs(15),
            version: "8.8.0".into(),
        }
    }
}

/// The command layer: the broker, the gateway's settings and the node's stop signal.
#[derive(Clone)]
pub struct Commands {
    broker: Arc<Broker>,
    config: GatewayConfig,
    /// Becomes true when the node stops: parked long polls end, so the servers' graceful
    /// shutdown does not wait on them.
    shutdown: Option<tokio::sync::watch::Receiver<bool>>,
}

impl Commands {
    pub fn new(broker: Arc<Broker>, config: GatewayConfig) -> Self {
        Commands {
            broker,
            config,
            shutdown: None,
        }
    }

    /// Ends long polls (and the gRPC job streams) once `shutdown` turns true.
    pub fn with_shutdown(mut self, shutdown: tokio::sync::watch::Receiver<bool>) -> Self {
        self.shutdown = Some(shutdown);
        self
    }

    pub fn broker(&self) -> &Arc<Broker> {
        &self.broker
    }

    pub fn config(&self) -> &GatewayConfig {
        &self.config
    }

    /// Resolves once the node is stopping (never, without a shutdown signal).
    pub async fn stopping(&self) {
        match self.shutdown.clone() {
            Some(mut rx) => {
                let _ = rx.wait_for(|stop| *stop).await;
            }
            None => std::future::pending().await,
        }
    }

    /// Submits a command and waits for its answer: the event, or the rejection as an error.
    async fn submit(
        &self,
        partition: PartitionId,
        command: Record,
    ) -> Result<Record, CommandError> {
        let answer = self.broker.submit(partition, command).await?;
        expect_event(answer)
    }

    /// Submits `value` with `intent` (and the command's `key`, -1 for none) to `partition`.
    async fn send(
        &self,
        partition: PartitionId,
        key: i64,
        intent: Intent,
        value: RecordValue,
    ) -> Result<Record, CommandError> {
        self.submit(partition, new_command(key, intent, value, -1, -1))
            .await
    }

    /// Submits a command about the entity `key` to the partition that owns it; a key no
    /// partition can own is NOT_FOUND, worded as the engine's rejection (`what`, e.g. "Expected
    /// to fail job with key '1', but no such job was found").
    async fn send_keyed(
        &self,
        key: i64,
        intent: Intent,
        value: RecordValue,
        what: impl FnOnce() -> String,
    ) -> Result<Record, CommandError> {
        let partition = self.route(key, intent, what)?;
        self.send(partition, key, intent, value).await
    }

    /// The partition of a key, or NOT_FOUND with the command's wording when no partition has it.
    fn route(
        &self,
        key: i64,
        intent: Intent,
        what: impl FnOnce() -> String,
    ) -> Result<PartitionId, CommandError> {
        let p = self.broker.partition_of(key);
        if key <= 0 || p < 1 || p > self.broker.partition_count() {
            return Err(CommandError::NotFound(format!(
                "Command '{}' rejected with code 'NOT_FOUND': {}",
                intent.name(),
                what()
            )));
        }
        Ok(p)
    }

    /// Refuses a request larger than the gateway's message size limit (`len` bytes).
    pub fn check_size(&self, len: usize) -> Result<(), CommandError> {
        if len > self.config.max_message_size {
            return Err(CommandError::TooLarge(format!(
                "Expected the request to be at most {} bytes (the maximum message size), but it was {len} bytes",
                self.config.max_message_size
            )));
        }
        Ok(())
    }
}

/// Checks the answer of a command: a rejection becomes its error.
fn expect_event(r: Record) -> Result<Record, CommandError> {
    if r.record_type == RecordType::CommandRejection {
        Err(CommandError::rejected(&r))
    } else {
        Ok(r)
    }
}

/// Validates a variables document: empty, or a JSON object. Returns it as sent (blank text and
/// `null` are no document).
pub fn variables_document(text: String, property: &str) -> Result<String, CommandError> {
    match zest_protocol::json::parse_document(&text) {
        // an object (even `{}`) goes through as sent (the request's own text: a call waiting
        // for its answer holds no copy of it)
        Ok(_) if text.trim().is_empty() || text.trim() == "null" => Ok(String::new()),
        Ok(_) => Ok(text),
        Err(e) => Err(CommandError::Invalid(format!(
            "Property '{property}' is invalid: {e}"
        ))),
    }
}

/// The tenant of a request: the default tenant when none is given; with multi-tenancy off (as
/// always in Zest) another is refused, as Zeebe's gateways word it (`request` names the call:
/// "gRPC request PublishMessage").
pub fn tenant(given: &str, request: &str) -> Result<String, CommandError> {
    let t = given.trim();
    if t.is_empty() || t == DEFAULT_TENANT {
        return Ok(DEFAULT_TENANT.to_string());
    }
    Err(CommandError::Invalid(format!(
        "Expected to handle {request} with tenant identifier '{t}', but multi-tenancy is disabled"
    )))
}
