//! Removing history, written once for its two users: retention, which removes finished root
//! process instances and everything under them (child instances, element instances,
//! variables, incidents, jobs, user tasks, sequence flows, all keyed by their root) once they
//! ended longer ago than the history's time to live (Camunda's `default-history-ttl`, 30
//! days), a few roots per transaction so the exporter never waits long for the writer; and
//! history deletion (`docs/design/history.md`, "History deletion"), which removes one
//! instance's tree or one decision evaluation when the exporter meets HISTORY_DELETION
//! DELETED in the log. Both keep the counters (`counts.rs`) of what they remove. The job
//! statistics' minute buckets and the usage metrics' assignees by minute (`usage_assignee`) go
//! by their minute, with retention's cutoff; finished batch operations and their items by
//! their end.

use zest_protocol::HistoryDeletionRecord;

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
/// everything under them, and up to `batch` finished batch operations, in one transaction;
/// answers how many roots or operations went (the more of the two; `batch` when operations'
/// items are left for the next pass).
pub fn remove_expired(tx: &Conn, cutoff: i64, batch: usize) -> crate::db::Result<usize> {
    let roots: Vec<i64> = tx.query(
        "SELECT key FROM process_instance \
         WHERE end_date < ?1 AND root_process_instance_key = key \
         AND state IN ('COMPLETED', 'TERMINATED') ORDER BY end_date LIMIT ?2",
        params![cutoff, batch as i64],
        |r| r.get(0),
    )?;
    for root in &roots {
        remove_root(tx, *root)?;
    }
    // evaluations of no process instance (EvaluateDecision) expire by their own date
    tx.execute(
        "DELETE FROM decision_instance WHERE key IN (SELECT key FROM decision_instance \
         WHERE COALESCE(evaluation_date, 0) < ?1 AND evaluation_date IS NOT NULL \
         AND root_process_instance_key IS NULL LIMIT ?2)",
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
    let operations = remove_expired_operations(tx, cutoff, batch)?;
    Ok(roots.len().max(operations))
}

/// Removes batch operations that ended (COMPLETED or CANCELED) before `cutoff`, oldest first:
/// at most `batch` operations and `batch * 64` of their items in one pass. An operation's row
/// goes once its items are gone, so one with more items than a pass takes is finished by the
/// next passes. Answers how many operations went, or `batch` when items were left.
fn remove_expired_operations(tx: &Conn, cutoff: i64, batch: usize) -> crate::db::Result<usize> {
    let operations: Vec<i64> = tx.query(
        "SELECT key FROM batch_operation WHERE end_date < ?1 ORDER BY end_date LIMIT ?2",
        params![cutoff, batch as i64],
        |r| r.get(0),
    )?;
    let mut items_left = batch * 64;
    let mut removed = 0;
    for operation in operations {
        let items = tx.execute(
            "DELETE FROM batch_operation_item WHERE key IN (SELECT key FROM batch_operation_item \
             WHERE batch_operation_key = ?1 LIMIT ?2)",
            params![operation, items_left as i64],
        )?;
        if items >= items_left {
            return Ok(batch); // maybe more items of it: the next pass goes on
        }
        items_left -= items;
        tx.execute(
            "DELETE FROM batch_operation WHERE key = ?1",
            params![operation],
        )?;
        removed += 1;
    }
    Ok(removed)
}

/// Applies one HISTORY_DELETION DELETED: the process instance and everything under it, the
/// decision evaluation's decision instances, or the process definition once no instance of it
/// is left. A key history does not hold removes nothing.
pub fn remove(tx: &Conn, deletion: &HistoryDeletionRecord) -> crate::db::Result<()> {
    let key = deletion.resource_key;
    match deletion.resource_type.as_str() {
        HistoryDeletionRecord::PROCESS_INSTANCE => remove_instance(tx, key),
        HistoryDeletionRecord::DECISION_INSTANCE => remove_evaluation(tx, key),
        HistoryDeletionRecord::PROCESS_DEFINITION => remove_definition(tx, key),
        _ => Ok(()),
    }
}

/// A root instance's tree: every row keyed by the root, and the variables of its instances.
fn remove_root(tx: &Conn, root: i64) -> crate::db::Result<()> {
    crate::counts::remove_root(tx, root)?;
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
    Ok(())
}

/// A process instance and its descendants: the whole root tree for a root; for a child
/// instance, itself and the instances it called (through their parents), each one's rows
/// found among its root's.
fn remove_instance(tx: &Conn, key: i64) -> crate::db::Result<()> {
    let root: Option<i64> = tx.query_opt(
        "SELECT root_process_instance_key FROM process_instance WHERE key = ?1",
        params![key],
        |r| r.get(0),
    )?;
    let Some(root) = root else {
        return Ok(());
    };
    if root == key {
        return remove_root(tx, root);
    }
    let mut tree = vec![key];
    let mut next = 0;
    while next < tree.len() {
        let children: Vec<i64> = tx.query(
            "SELECT key FROM process_instance WHERE parent_process_instance_key = ?1",
            params![tree[next]],
            |r| r.get(0),
        )?;
        tree.extend(children);
        next += 1;
    }
    for instance in tree {
        crate::counts::remove_instance(tx, instance)?;
        tx.execute(
            "DELETE FROM variable WHERE process_instance_key = ?1",
            params![instance],
        )?;
        for table in CHILD_TABLES {
            tx.execute(
                &format!(
                    "DELETE FROM {table} WHERE root_process_instance_key = ?1 \
                     AND process_instance_key = ?2"
                ),
                params![root, instance],
            )?;
        }
        tx.execute(
            "DELETE FROM process_instance WHERE key = ?1",
            params![instance],
        )?;
    }
    Ok(())
}

/// A decision evaluation's decision instances: their keys pack the evaluation's key and an
/// index (`project::decisions::decision_instance_key`), so they are one range of keys.
fn remove_evaluation(tx: &Conn, evaluation: i64) -> crate::db::Result<()> {
    let max = crate::project::decisions::MAX_DECISIONS as i64;
    let (Some(first), Some(last)) = (
        crate::project::decisions::decision_instance_key(evaluation, 1),
        crate::project::decisions::decision_instance_key(evaluation, max),
    ) else {
        return Ok(());
    };
    tx.execute(
        "DELETE FROM decision_instance WHERE key >= ?1 AND key <= ?2",
        params![first, last],
    )?;
    Ok(())
}

/// A process definition (the last step of DELETE_PROCESS_DEFINITION): its row, its elements'
/// names and its counters, unless history still holds an instance of it (one that was
/// running when its deletion was refused): then it stays, as those instances need it.
fn remove_definition(tx: &Conn, key: i64) -> crate::db::Result<()> {
    let instance: Option<i64> = tx.query_opt(
        "SELECT key FROM process_instance WHERE process_definition_key = ?1 LIMIT 1",
        params![key],
        |r| r.get(0),
    )?;
    if instance.is_some() {
        return Ok(());
    }
    for table in ["element_name", "element_count", "instance_count"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE process_definition_key = ?1"),
            params![key],
        )?;
    }
    tx.execute(
        "DELETE FROM process_definition WHERE key = ?1",
        params![key],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests;
