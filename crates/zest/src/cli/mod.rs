//! The client commands of `zest`, with zbctl's command words, arguments and flags: `deploy`,
//! `create instance`, `cancel instance`, `set variables`, `publish message`, `broadcast
//! signal`, `activate jobs`, `complete job`, `fail job`, `throw error`, `update retries`,
//! `update timeout`, `resolve incident`, `evaluate decision`, `delete resource`, `create
//! worker`, `status` and `version`. Responses print as zbctl prints them (protojson, or its
//! human line); a failure prints one line on stderr and exits with status 1.

mod commands;
pub mod conn;
pub mod print;
mod worker;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
pub use conn::{CliError, ConnArgs};
use print::parse_duration;

/// Client commands (each also takes the gateway flags: `--address`, `--requestTimeout`, ...).
#[derive(Subcommand, Debug)]
pub enum ClientCommand {
    /// Deploy BPMN, DMN and form resources: `zest deploy [resource] <files...>`
    #[command(after_help = "Example:\n  zest deploy examples/order.bpmn examples/discount.dmn")]
    Deploy(DeployArgs),
    /// Create a process instance (`create instance`) or a job worker (`create worker`)
    #[command(
        args_conflicts_with_subcommands = true,
        subcommand_negates_reqs = true,
        after_help = "Examples:\n  zest create instance order --variables '{\"orderId\": 42}'\n  zest create instance order --withResult\n  zest create worker payment --handler ./pay.sh\n  zest create order --vars '{\"orderId\": 42}'     (short form)"
    )]
    Create(CreateArgs),
    /// Cancel a process instance: `zest cancel instance <key>`
    Cancel {
        #[command(subcommand)]
        what: CancelWhat,
    },
    /// Set variables of a process or element instance: `zest set variables <key>`
    Set {
        #[command(subcommand)]
        what: SetWhat,
    },
    /// Publish a message: `zest publish message <name> --correlationKey <key>`
    Publish {
        #[command(subcommand)]
        what: PublishWhat,
    },
    /// Broadcast a signal: `zest broadcast signal <name>`
    Broadcast {
        #[command(subcommand)]
        what: BroadcastWhat,
    },
    /// Activate jobs of a type: `zest activate jobs <type>`
    Activate {
        #[command(subcommand)]
        what: ActivateWhat,
    },
    /// Complete a job: `zest complete job <key>`
    Complete {
        #[command(subcommand)]
        what: CompleteWhat,
    },
    /// Fail a job: `zest fail job <key> --retries <n>`
    Fail {
        #[command(subcommand)]
        what: FailWhat,
    },
    /// Throw a BPMN error from a job: `zest throw error <jobKey> --errorCode <code>`
    Throw {
        #[command(subcommand)]
        what: ThrowWhat,
    },
    /// zbctl's older spelling of `throw error`: `zest throwError job <jobKey>`
    #[command(name = "throwError", hide = true)]
    ThrowErrorLegacy {
        #[command(subcommand)]
        what: ThrowErrorLegacyWhat,
    },
    /// Update a job's retries or timeout: `zest update retries|timeout <jobKey>`
    Update {
        #[command(subcommand)]
        what: UpdateWhat,
    },
    /// Resolve an incident: `zest resolve incident <key>`
    Resolve {
        #[command(subcommand)]
        what: ResolveWhat,
    },
    /// Evaluate a decision: `zest evaluate decision <id|key>`
    Evaluate {
        #[command(subcommand)]
        what: EvaluateWhat,
    },
    /// Delete a deployed resource: `zest delete resource <key>`
    Delete {
        #[command(subcommand)]
        what: DeleteWhat,
    },
    /// Show the cluster topology
    #[command(after_help = "Example:\n  zest status --output json")]
    Status {
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct DeployArgs {
    #[command(subcommand)]
    resource: Option<DeployWhat>,
    /// Files to deploy: .bpmn, .dmn, .form
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Resource names to use instead of the file paths (comma-separated, in order)
    #[arg(long = "resourceNames", value_delimiter = ',')]
    resource_names: Vec<String>,
    #[command(flatten)]
    conn: ConnArgs,
}

#[derive(Subcommand, Debug)]
pub enum DeployWhat {
    /// Deploy resources (zbctl's `deploy resource`)
    #[command(after_help = "Example:\n  zest deploy resource examples/order.bpmn")]
    Resource {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long = "resourceNames", value_delimiter = ',')]
        resource_names: Vec<String>,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Args, Debug)]
pub struct CreateArgs {
    #[command(subcommand)]
    what: Option<CreateWhat>,
    /// Short form: the BPMN process id (or process definition key) of the instance to create
    #[arg(required = true)]
    process: Option<String>,
    #[command(flatten)]
    instance: InstanceFlags,
}

#[derive(Args, Debug, Clone)]
pub struct InstanceFlags {
    /// Variables as a JSON object, or the path of a JSON file (@path too)
    #[arg(long = "variables", alias = "vars")]
    variables: Option<String>,
    /// Version of the process (latest when absent)
    #[arg(long)]
    version: Option<i32>,
    /// Wait for the instance to complete and print its variables (optionally only these,
    /// comma-separated: --withResult=a,b)
    #[arg(
        long = "withResult",
        alias = "with-result",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "",
        value_name = "VARIABLES"
    )]
    with_result: Option<String>,
    #[command(flatten)]
    conn: ConnArgs,
}

#[derive(Subcommand, Debug)]
pub enum CreateWhat {
    /// Create a process instance by BPMN process id or process definition key
    #[command(
        after_help = "Examples:\n  zest create instance order --variables '{\"orderId\": 42}'\n  zest create instance 2251799813685249 --withResult"
    )]
    Instance {
        /// BPMN process id, or process definition key
        process: String,
        #[command(flatten)]
        flags: InstanceFlags,
    },
    /// Run a polling job worker that calls a command for every job: the job's variables go to
    /// its stdin as JSON; JSON on its stdout completes the job with those variables; a
    /// non-zero exit fails it with its stderr as the message
    #[command(after_help = "Example:\n  zest create worker payment --handler 'python3 pay.py'")]
    Worker(worker::WorkerArgs),
}

#[derive(Subcommand, Debug)]
pub enum CancelWhat {
    /// Cancel a process instance
    #[command(after_help = "Example:\n  zest cancel instance 2251799813685251")]
    Instance {
        key: i64,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum SetWhat {
    /// Set variables of a process instance or element instance
    #[command(
        after_help = "Example:\n  zest set variables 2251799813685251 --variables '{\"approved\": true}'"
    )]
    Variables {
        /// Element instance key (a process instance key for the instance's scope)
        key: i64,
        /// Variables as a JSON object, or the path of a JSON file
        #[arg(long, default_value = "{}")]
        variables: String,
        /// Set them on this scope only, instead of where they are already defined
        #[arg(long)]
        local: bool,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum PublishWhat {
    /// Publish a message
    #[command(
        after_help = "Example:\n  zest publish message payment-received --correlationKey order-42 --variables '{\"paid\": true}'"
    )]
    Message {
        name: String,
        #[arg(long = "correlationKey", default_value = "")]
        correlation_key: String,
        /// Variables as a JSON object, or the path of a JSON file
        #[arg(long, default_value = "{}")]
        variables: String,
        /// Time to live, e.g. 300ms, 50s or 1m
        #[arg(long, default_value = "5s", value_parser = parse_duration)]
        ttl: Duration,
        /// Unique id of the message (a second message with the same id is refused)
        #[arg(long = "messageId", default_value = "")]
        message_id: String,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum BroadcastWhat {
    /// Broadcast a signal
    #[command(
        after_help = "Example:\n  zest broadcast signal stop-all --variables '{\"why\": \"test\"}'"
    )]
    Signal {
        name: String,
        /// Variables as a JSON object, or the path of a JSON file
        #[arg(long, default_value = "{}")]
        variables: String,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum ActivateWhat {
    /// Activate jobs of a type and print them
    #[command(after_help = "Example:\n  zest activate jobs payment --maxJobsToActivate 10")]
    Jobs {
        job_type: String,
        #[arg(long = "maxJobsToActivate", default_value_t = 1)]
        max_jobs_to_activate: i32,
        /// How long the jobs stay with this worker, e.g. 30s or 5m
        #[arg(long, default_value = "5m", value_parser = parse_duration)]
        timeout: Duration,
        #[arg(long, default_value = "zbctl")]
        worker: String,
        /// Variables to fetch (comma-separated; all when absent)
        #[arg(long, value_delimiter = ',')]
        variables: Vec<String>,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum CompleteWhat {
    /// Complete a job
    #[command(
        after_help = "Example:\n  zest complete job 2251799813685255 --variables '{\"paid\": true}'"
    )]
    Job {
        key: i64,
        /// Variables as a JSON object, or the path of a JSON file
        #[arg(long, default_value = "{}")]
        variables: String,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum FailWhat {
    /// Fail a job: with retries left it is activated again (after the backoff), without it
    /// raises an incident
    #[command(
        after_help = "Example:\n  zest fail job 2251799813685255 --retries 2 --errorMessage 'service down'"
    )]
    Job {
        key: i64,
        /// Retries left
        #[arg(long, default_value_t = 3)]
        retries: i32,
        #[arg(long = "errorMessage", default_value = "")]
        error_message: String,
        /// Wait this long before the job can be activated again, e.g. 30s
        #[arg(long = "retryBackoff", default_value = "0", value_parser = parse_duration)]
        retry_backoff: Duration,
        /// Variables as a JSON object, or the path of a JSON file
        #[arg(long, default_value = "{}")]
        variables: String,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Args, Debug)]
pub struct ThrowErrorArgs {
    job_key: i64,
    #[arg(long = "errorCode", required = true)]
    error_code: String,
    #[arg(long = "errorMessage", default_value = "")]
    error_message: String,
    /// Variables as a JSON object, or the path of a JSON file
    #[arg(long, default_value = "{}")]
    variables: String,
    #[command(flatten)]
    conn: ConnArgs,
}

#[derive(Subcommand, Debug)]
pub enum ThrowWhat {
    /// Throw a BPMN error from a job, caught by an error boundary or event sub-process
    #[command(after_help = "Example:\n  zest throw error 2251799813685255 --errorCode NOT_PAID")]
    Error(ThrowErrorArgs),
}

#[derive(Subcommand, Debug)]
pub enum ThrowErrorLegacyWhat {
    Job(ThrowErrorArgs),
}

#[derive(Subcommand, Debug)]
pub enum UpdateWhat {
    /// Update a job's retries
    #[command(after_help = "Example:\n  zest update retries 2251799813685255 --retries 3")]
    Retries {
        key: i64,
        #[arg(long, default_value_t = 3)]
        retries: i32,
        #[command(flatten)]
        conn: ConnArgs,
    },
    /// Update an activated job's timeout (from now)
    #[command(after_help = "Example:\n  zest update timeout 2251799813685255 --timeout 10m")]
    Timeout {
        key: i64,
        #[arg(long, required = true, value_parser = parse_duration)]
        timeout: Duration,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum ResolveWhat {
    /// Resolve an incident: the failed step is retried
    #[command(after_help = "Example:\n  zest resolve incident 2251799813685260")]
    Incident {
        key: i64,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum EvaluateWhat {
    /// Evaluate a decision by decision id (latest version) or decision key
    #[command(
        after_help = "Example:\n  zest evaluate decision discount --variables '{\"customer\": \"gold\"}'"
    )]
    Decision {
        decision: String,
        /// Variables as a JSON object, or the path of a JSON file
        #[arg(long, default_value = "{}")]
        variables: String,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum DeleteWhat {
    /// Delete a deployed process, decision requirements graph or form version
    #[command(after_help = "Example:\n  zest delete resource 2251799813685249")]
    Resource {
        key: i64,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

/// Runs a client command; `outer` holds gateway flags given before the command word.
pub async fn run(command: ClientCommand, outer: &ConnArgs) -> Result<(), CliError> {
    use ClientCommand as C;
    match command {
        C::Deploy(a) => match a.resource {
            Some(DeployWhat::Resource {
                files,
                resource_names,
                conn,
            }) => commands::deploy(&conn.or(outer), &files, &resource_names).await,
            None => commands::deploy(&a.conn.or(outer), &a.files, &a.resource_names).await,
        },
        C::Create(a) => match a.what {
            Some(CreateWhat::Instance { process, flags }) => {
                let conn = flags.conn.clone().or(outer);
                commands::create_instance(&conn, &process, &flags).await
            }
            Some(CreateWhat::Worker(w)) => worker::run(w, outer).await,
            None => {
                let process = a.process.unwrap_or_default();
                let conn = a.instance.conn.clone().or(outer);
                commands::create_instance(&conn, &process, &a.instance).await
            }
        },
        C::Cancel {
            what: CancelWhat::Instance { key, conn },
        } => commands::cancel_instance(&conn.or(outer), key).await,
        C::Set {
            what:
                SetWhat::Variables {
                    key,
                    variables,
                    local,
                    conn,
                },
        } => commands::set_variables(&conn.or(outer), key, &variables, local).await,
        C::Publish {
            what:
                PublishWhat::Message {
                    name,
                    correlation_key,
                    variables,
                    ttl,
                    message_id,
                    conn,
                },
        } => {
            let m = commands::Message {
                name,
                correlation_key,
                variables,
                ttl,
                message_id,
            };
            commands::publish_message(&conn.or(outer), m).await
        }
        C::Broadcast {
            what:
                BroadcastWhat::Signal {
                    name,
                    variables,
                    conn,
                },
        } => commands::broadcast_signal(&conn.or(outer), &name, &variables).await,
        C::Activate {
            what:
                ActivateWhat::Jobs {
                    job_type,
                    max_jobs_to_activate,
                    timeout,
                    worker,
                    variables,
                    conn,
                },
        } => {
            let a = commands::Activation {
                job_type,
                max_jobs: max_jobs_to_activate,
                timeout,
                worker,
                fetch_variables: variables,
            };
            commands::activate_jobs(&conn.or(outer), a).await
        }
        C::Complete {
            what:
                CompleteWhat::Job {
                    key,
                    variables,
                    conn,
                },
        } => commands::complete_job(&conn.or(outer), key, &variables).await,
        C::Fail {
            what:
                FailWhat::Job {
                    key,
                    retries,
                    error_message,
                    retry_backoff,
                    variables,
                    conn,
                },
        } => {
            let f = commands::Failure {
                key,
                retries,
                error_message,
                retry_backoff,
                variables,
            };
            commands::fail_job(&conn.or(outer), f).await
        }
        C::Throw {
            what: ThrowWhat::Error(a),
        }
        | C::ThrowErrorLegacy {
            what: ThrowErrorLegacyWhat::Job(a),
        } => {
            let conn = a.conn.clone().or(outer);
            commands::throw_error(&conn, &a).await
        }
        C::Update { what } => match what {
            UpdateWhat::Retries { key, retries, conn } => {
                commands::update_retries(&conn.or(outer), key, retries).await
            }
            UpdateWhat::Timeout { key, timeout, conn } => {
                commands::update_timeout(&conn.or(outer), key, timeout).await
            }
        },
        C::Resolve {
            what: ResolveWhat::Incident { key, conn },
        } => commands::resolve_incident(&conn.or(outer), key).await,
        C::Evaluate {
            what:
                EvaluateWhat::Decision {
                    decision,
                    variables,
                    conn,
                },
        } => commands::evaluate_decision(&conn.or(outer), &decision, &variables).await,
        C::Delete {
            what: DeleteWhat::Resource { key, conn },
        } => commands::delete_resource(&conn.or(outer), key).await,
        C::Status { conn } => commands::status(&conn.or(outer)).await,
    }
}
