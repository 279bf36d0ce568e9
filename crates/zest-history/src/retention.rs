//! Retention: finished root process instances and everything under them (child instances,
//! element instances, variables, incidents, jobs, user tasks, sequence flows, all keyed by
//! their root) are removed once they ended longer ago than the history's time to live
//! (Camunda's `default-history-ttl`, 30 days). A few roots per transaction, so the exporter
//! never waits long for the writer. The job statistics' minute buckets and the usage metrics'
//! assignees by minute (`usage_assignee`) go by their minute, with the same cutoff.

use crate::db::{params, Conn};

/// The tables whose rows belong to a root process instance.
/// (Variables are reached through their instances: they have no index by root.)
const CHILD_TABLES: &[&str] = &[
    "element_instance",
    "incident",
    "job",
    "user_task",
    "sequence_flow",
    "decision_instance",
    "message_subscription",
    "correlated_message",
];

/// Removes up to `batch` finished root instances that ended before `cutoff` (epoch ms) and
/// everything under them, in one transaction; answers how many roots went.
pub fn remove_expired(tx: &Conn, cutoff: i64, batch: usize) -> crate::db::Result<usize> {
    let roots: Vec<i64> = tx.query(
        "SELECT key FROM process_instance \
         WHERE end_date < ?1 AND root_process_instance_key = key \
         AND state IN ('COMPLETED', 'TERMINATED') ORDER BY end_date LIMIT ?2",
        params![cutoff, batch as i64],
        |r| r.get(0),
    )?;
    for root in &roots {
        crate::counts::remove_root(tx, *root)?;
        tx.execute(
            "DELETE FROM variable WHERE process_instance_key IN \
             (SELECT key FROM process_instance WHERE root_process_instance_key = ?1)",
            params![root],
        )?;
        for table in CHILD_TABLES {
            tx.execute(
                &format!("DELETE FROM {table} WHERE root_process_instance_key = ?1"),
                params![root],
            )?;
        }
        tx.execute(
            "DELETE FROM process_instance WHERE root_process_instance_key = ?1",
            params![root],
        )?;
    }
    // evaluations of no process instance (EvaluateDecision) expire by their own date
    tx.execute(
        "DELETE FROM decision_instance WHERE key IN (SELECT key FROM decision_instance \
         WHERE evaluation_date < ?1 AND root_process_instance_key IS NULL LIMIT ?2)",
        params![cutoff, (batch * 64) as i64],
    )?;
    // the job statistics' buckets expire by their minute
    tx.execute("DELETE FROM job_stat WHERE bucket < ?1", params![cutoff])?;
    tx.execute(
        "DELETE FROM job_error_stat WHERE bucket < ?1",
        params![cutoff],
    )?;
    // the minutes of usage metrics' assignees, oldest first
    tx.execute(
        "DELETE FROM usage_assignee WHERE minute IN (SELECT minute FROM usage_assignee \
         WHERE minute < ?1 ORDER BY minute LIMIT ?2)",
        params![cutoff.div_euclid(crate::usage::MINUTE), (batch * 64) as i64],
    )?;
    Ok(roots.len())
}
