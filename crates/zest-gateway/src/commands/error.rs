//! What a command can end in besides its answer, mapped once to both gateways: gRPC status
//! codes as Zeebe's gateway answers them, and HTTP statuses with the titles of Camunda's REST
//! API problem details (a rejection's detail keeps Zeebe's wording: "Command 'CREATE' rejected
//! with code 'NOT_FOUND': ...").

use axum::http::StatusCode;
use tonic::{Code, Status};
use zest_broker::BrokerError;
use zest_protocol::{Record, RejectionType};

#[derive(Debug)]
pub enum CommandError {
    /// The request is malformed or incomplete (no command was sent).
    Invalid(String),
    /// No partition can hold the entity the request names.
    NotFound(String),
    /// The engine rejected the command.
    Rejected {
        rejection: RejectionType,
        message: String,
    },
    /// The broker did not take the command (backpressure, no leader, ...).
    Broker(BrokerError),
    /// The request is larger than the gateway accepts.
    TooLarge(String),
    /// The answer did not come in time (a creation awaiting its instance's completion).
    Timeout(String),
    /// The node is stopping.
    Stopping,
    /// An answer the gateway did not expect.
    Internal(String),
}

impl CommandError {
    /// The rejection a command was answered with.
    pub fn rejected(r: &Record) -> CommandError {
        CommandError::Rejected {
            rejection: r.rejection_type,
            message: format!(
                "Command '{}' rejected with code '{}': {}",
                r.intent.name(),
                rejection_name(r.rejection_type),
                r.rejection_reason
            ),
        }
    }

    /// The text that explains the error.
    pub fn message(&self) -> String {
        match self {
            CommandError::Invalid(m)
            | CommandError::NotFound(m)
            | CommandError::TooLarge(m)
            | CommandError::Timeout(m)
            | CommandError::Internal(m)
            | CommandError::Rejected { message: m, .. } => m.clone(),
            CommandError::Broker(e) => e.to_string(),
            CommandError::Stopping => "the gateway is shutting down; reconnect".into(),
        }
    }

    /// True for errors that pass: a full queue, a partition between leaders.
    pub fn is_transient(&self) -> bool {
        matches!(self.code(), Code::ResourceExhausted | Code::Unavailable)
    }

    /// The gRPC status code, as Zeebe's gateway maps rejections and broker errors.
    pub fn code(&self) -> Code {
        match self {
            CommandError::Invalid(_) => Code::InvalidArgument,
            CommandError::NotFound(_) => Code::NotFound,
            CommandError::Rejected { rejection, .. } => match rejection {
                RejectionType::InvalidArgument => Code::InvalidArgument,
                RejectionType::NotFound => Code::NotFound,
                RejectionType::AlreadyExists => Code::AlreadyExists,
                RejectionType::InvalidState => Code::FailedPrecondition,
                RejectionType::ExceededBatchRecordSize => Code::ResourceExhausted,
                RejectionType::Forbidden => Code::PermissionDenied,
                RejectionType::ProcessingError | RejectionType::NullVal => Code::Internal,
            },
            CommandError::Broker(e) => match e {
                BrokerError::Backpressure(_)
                | BrokerError::JobBacklog(_)
                | BrokerError::ExportBacklog { .. }
                | BrokerError::NodeBusy(_)
                | BrokerError::MemoryFull { .. } => Code::ResourceExhausted,
                BrokerError::Unavailable(..) => Code::Unavailable,
                BrokerError::NoSuchPartition(_) => Code::NotFound,
            },
            CommandError::TooLarge(_) => Code::ResourceExhausted,
            CommandError::Timeout(_) => Code::DeadlineExceeded,
            CommandError::Stopping => Code::Unavailable,
            CommandError::Internal(_) => Code::Internal,
        }
    }

    /// The HTTP status and problem title of Camunda's REST API: rejections by their code
    /// (NOT_FOUND 404, INVALID_STATE 409, INVALID_ARGUMENT 400), backpressure 429
    /// RESOURCE_EXHAUSTED.
    pub fn http(&self) -> (StatusCode, &'static str) {
        if let CommandError::Rejected { rejection, .. } = self {
            let status = match rejection {
                RejectionType::InvalidArgument | RejectionType::ExceededBatchRecordSize => {
                    StatusCode::BAD_REQUEST
                }
                RejectionType::NotFound => StatusCode::NOT_FOUND,
                RejectionType::Forbidden => StatusCode::FORBIDDEN,
                RejectionType::InvalidState | RejectionType::AlreadyExists => StatusCode::CONFLICT,
                RejectionType::ProcessingError | RejectionType::NullVal => {
                    StatusCode::INTERNAL_SERVER_ERROR
                }
            };
            return (status, rejection_name(*rejection));
        }
        match self.code() {
            Code::InvalidArgument => (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT"),
            Code::NotFound => (StatusCode::NOT_FOUND, "NOT_FOUND"),
            Code::ResourceExhausted if matches!(self, CommandError::TooLarge(_)) => {
                (StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE")
            }
            Code::ResourceExhausted => (StatusCode::TOO_MANY_REQUESTS, "RESOURCE_EXHAUSTED"),
            Code::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE"),
            Code::DeadlineExceeded => (StatusCode::GATEWAY_TIMEOUT, "DEADLINE_EXCEEDED"),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL"),
        }
    }
}

/// A rejection type as Zeebe names it (NOT_FOUND, INVALID_STATE, ...).
fn rejection_name(r: RejectionType) -> &'static str {
    match r {
        RejectionType::InvalidArgument => "INVALID_ARGUMENT",
        RejectionType::NotFound => "NOT_FOUND",
        RejectionType::AlreadyExists => "ALREADY_EXISTS",
        RejectionType::InvalidState => "INVALID_STATE",
        RejectionType::ExceededBatchRecordSize => "EXCEEDED_BATCH_RECORD_SIZE",
        RejectionType::ProcessingError => "PROCESSING_ERROR",
        RejectionType::NullVal => "NULL_VAL",
        RejectionType::Forbidden => "FORBIDDEN",
    }
}

impl From<BrokerError> for CommandError {
    fn from(e: BrokerError) -> Self {
        CommandError::Broker(e)
    }
}

impl From<CommandError> for Status {
    fn from(e: CommandError) -> Self {
        Status::new(e.code(), e.message())
    }
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}
