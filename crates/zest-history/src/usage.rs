//! Usage metrics (`GET /v2/system/usage-metrics`, Camunda's RPI, EDI and TU), each counted in
//! a window `[start, end)` of epoch milliseconds, per tenant:
//!
//! - process instances: root process instances started in the window (`process_instance`
//!   by `start_date`, the rows whose root is themselves);
//! - decision instances: decision evaluations that succeeded in the window (Zeebe counts one
//!   per `DecisionEvaluation EVALUATED` record, however many decisions of a DRG it
//!   evaluated; `decision_instance` holds one row per decision, so an evaluation is counted
//!   by its `evaluation_key`, a failed one not);
//! - assignees: the distinct users assigned a user task in the window (`UserTask ASSIGNED`
//!   with an assignee), from `usage_assignee`, which the exporter keeps by minute: one row per
//!   (minute, assignee, tenant, partition) with the first and the last assignment of that
//!   minute. A user assigned in the window's first or last minute counts when one of those
//!   two falls in the window: exact, except for a window that begins and ends within the same
//!   minute while the user's assignments of that minute lie on both sides of it.
//!
//! Distinct assignees are not a sum over partitions: each partition sends the (assignee,
//! tenant) pairs of the window in order, [`MAX_NAMES`] at a time after a cursor, and
//! [`Tally`] counts each pair once, round after round, until every partition is done.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::db::{params, Cell, Conn};
use crate::search::{SearchError, PARTITION_OF_KEY};

/// The bucket of `usage_assignee`: a minute, in epoch ms.
pub const MINUTE: i64 = 60_000;

/// (assignee, tenant) pairs a partition sends in one round.
pub const MAX_NAMES: usize = 10_000;

/// An assignee and the tenant of the task assigned.
pub type Name = (String, String);

/// What the figures are asked for: `[start, end)` (epoch ms), of one tenant or all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    pub start: i64,
    pub end: i64,
    pub tenant: Option<String>,
}

/// One store's (or partition's) share of a round: the counts per tenant (first round only)
/// and the next (assignee, tenant) pairs after the round's cursor, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Share {
    /// Per tenant: (root process instances, decision evaluations).
    pub counts: BTreeMap<String, (i64, i64)>,
    pub names: Vec<Name>,
    /// Whether pairs follow the last of `names`.
    pub more: bool,
}

/// Writes a batch's assignments (minute, assignee, tenant) -> (first, last) of `partition`:
/// a pair seen again keeps the earliest first and the latest last (export is idempotent).
pub fn write(
    tx: &Conn,
    partition: u32,
    assignments: &BTreeMap<(i64, String, String), (i64, i64)>,
) -> crate::db::Result<()> {
    for ((minute, assignee, tenant), (first, last)) in assignments {
        tx.execute(
            "INSERT INTO usage_assignee (minute, assignee, tenant_id, partition_id, first_at, \
             last_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
             ON CONFLICT(minute, assignee, tenant_id, partition_id) DO UPDATE SET \
             first_at = CASE WHEN excluded.first_at < usage_assignee.first_at \
             THEN excluded.first_at ELSE usage_assignee.first_at END, \
             last_at = CASE WHEN excluded.last_at > usage_assignee.last_at \
             THEN excluded.last_at ELSE usage_assignee.last_at END",
            params![minute, assignee, tenant, partition, first, last],
        )?;
    }
    Ok(())
}

/// `AND column IN (?n, ...)` for `partitions` (None: nothing), its parameters pushed.
fn partition_clause(column: &str, partitions: Option<&[u32]>, params: &mut Vec<Cell>) -> String {
    let Some(ps) = partitions else {
        return String::new();
    };
    let marks: Vec<String> = ps
        .iter()
        .map(|p| {
            params.push(Cell::Integer(*p as i64));
            format!("?{}", params.len())
        })
        .collect();
    format!(" AND {column} IN ({})", marks.join(", "))
}

/// `AND t.tenant_id = ?n` when the window is one tenant's.
fn tenant_clause(window: &Window, params: &mut Vec<Cell>) -> String {
    match &window.tenant {
        Some(t) => {
            params.push(Cell::Text(t.clone()));
            format!(" AND t.tenant_id = ?{}", params.len())
        }
        None => String::new(),
    }
}

/// The store's share of a round (`after`: the round's cursor, None for the first, which
/// also counts instances and evaluations) for `partitions` (None: all it holds).
pub fn share(
    conn: &Conn,
    window: &Window,
    after: Option<&Name>,
    partitions: Option<&[u32]>,
) -> Result<Share, SearchError> {
    let mut out = Share::default();
    if window.start >= window.end {
        return Ok(out);
    }
    if after.is_none() {
        counts(conn, window, partitions, &mut out.counts)?;
    }
    let mut params = vec![
        Cell::Integer(window.start.div_euclid(MINUTE)),
        Cell::Integer((window.end - 1).div_euclid(MINUTE)),
        Cell::Integer(window.start),
        Cell::Integer(window.end),
    ];
    let mut and = tenant_clause(window, &mut params);
    if let Some((assignee, tenant)) = after {
        params.push(Cell::Text(assignee.clone()));
        params.push(Cell::Text(tenant.clone()));
        let (a, t) = (params.len() - 1, params.len());
        and.push_str(&format!(
            " AND (t.assignee > ?{a} OR (t.assignee = ?{a} AND t.tenant_id > ?{t}))"
        ));
    }
    and.push_str(&partition_clause("t.partition_id", partitions, &mut params));
    let sql = format!(
        "SELECT t.assignee, t.tenant_id FROM usage_assignee t \
         WHERE t.minute >= ?1 AND t.minute <= ?2 AND t.last_at >= ?3 AND t.first_at < ?4{and} \
         GROUP BY t.assignee, t.tenant_id ORDER BY t.assignee, t.tenant_id LIMIT {}",
        MAX_NAMES + 1
    );
    out.names = conn.query(&sql, &crate::db::cells(&params), |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    out.more = out.names.len() > MAX_NAMES;
    out.names.truncate(MAX_NAMES);
    Ok(out)
}

/// Root process instances started and decision evaluations that succeeded in the window,
/// per tenant, into `into`.
fn counts(
    conn: &Conn,
    window: &Window,
    partitions: Option<&[u32]>,
    into: &mut BTreeMap<String, (i64, i64)>,
) -> Result<(), SearchError> {
    let queries = [
        (
            "process_instance",
            "COUNT(*)",
            "t.start_date",
            " AND t.root_process_instance_key = t.key",
        ),
        (
            "decision_instance",
            // one evaluation, however many decisions it evaluated; a failed one not
            "CAST(COUNT(DISTINCT t.evaluation_key) - \
             SUM(CASE WHEN t.state = 'FAILED' THEN 1 ELSE 0 END) AS BIGINT)",
            // as the index (V15) holds it
            "COALESCE(t.evaluation_date, 0)",
            "",
        ),
    ];
    for (i, (table, count, date, only)) in queries.into_iter().enumerate() {
        let mut params = vec![Cell::Integer(window.start), Cell::Integer(window.end)];
        let mut and = tenant_clause(window, &mut params);
        and.push_str(&partition_clause(PARTITION_OF_KEY, partitions, &mut params));
        let sql = format!(
            "SELECT t.tenant_id, {count} FROM {table} t \
             WHERE {date} >= ?1 AND {date} < ?2{only}{and} GROUP BY t.tenant_id"
        );
        let rows = conn.query(&sql, &crate::db::cells(&params), |r| {
            Ok((
                r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                r.get::<_, Option<i64>>(1)?.unwrap_or(0),
            ))
        })?;
        for (tenant, n) in rows {
            let entry = into.entry(tenant).or_default();
            if i == 0 {
                entry.0 += n;
            } else {
                entry.1 += n;
            }
        }
    }
    Ok(())
}

/// One tenant's figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Figures {
    pub process_instances: i64,
    pub decision_instances: i64,
    pub assignees: i64,
}

impl Figures {
    fn json(&self) -> Value {
        json!({
            "processInstances": self.process_instances,
            "decisionInstances": self.decision_instances,
            "assignees": self.assignees,
        })
    }
}

/// The figures of every store's (or partition's) shares, counted round by round.
#[derive(Debug, Default)]
pub struct Tally {
    pub tenants: BTreeMap<String, Figures>,
    /// Distinct assignees over every tenant.
    pub assignees: i64,
    last_assignee: Option<String>,
}

impl Tally {
    /// Takes in one round's shares (every partition's for the same cursor); answers the
    /// cursor of the next round, None when every partition sent all its pairs. A pair is
    /// counted once it is certain that no share holds a smaller one not yet sent: up to the
    /// smallest last pair of the shares that have more.
    pub fn add(&mut self, shares: &[Share]) -> Option<Name> {
        for share in shares {
            for (tenant, (pi, di)) in &share.counts {
                let f = self.tenants.entry(tenant.clone()).or_default();
                f.process_instances += pi;
                f.decision_instances += di;
            }
        }
        let frontier = shares
            .iter()
            .filter(|s| s.more)
            .filter_map(|s| s.names.last())
            .min();
        let names: BTreeSet<&Name> = shares
            .iter()
            .flat_map(|s| &s.names)
            .filter(|n| frontier.is_none_or(|f| *n <= f))
            .collect();
        for (assignee, tenant) in names {
            self.tenants.entry(tenant.clone()).or_default().assignees += 1;
            // pairs come ordered by assignee: a user of several tenants is adjacent
            if self.last_assignee.as_ref() != Some(assignee) {
                self.assignees += 1;
                self.last_assignee = Some(assignee.clone());
            }
        }
        frontier.cloned()
    }

    /// The REST response (`UsageMetricsResponse`): the totals, the number of tenants with
    /// any figure in the window, and, `with_tenants`, each such tenant's figures.
    pub fn response(&self, with_tenants: bool) -> Value {
        let active: Vec<(&String, &Figures)> = self
            .tenants
            .iter()
            .filter(|(_, f)| **f != Figures::default())
            .collect();
        let mut tenants = Map::new();
        if with_tenants {
            for (tenant, f) in &active {
                tenants.insert((*tenant).clone(), f.json());
            }
        }
        json!({
            "processInstances": self.tenants.values().map(|f| f.process_instances).sum::<i64>(),
            "decisionInstances": self.tenants.values().map(|f| f.decision_instances).sum::<i64>(),
            "assignees": self.assignees,
            "activeTenants": active.len(),
            "tenants": tenants,
        })
    }
}

/// The figures of `window` from one store that holds every partition asked for (`partitions`,
/// None: all it holds), round after round.
pub fn tally(
    conn: &Conn,
    window: &Window,
    partitions: Option<&[u32]>,
) -> Result<Tally, SearchError> {
    let mut tally = Tally::default();
    let mut after = None;
    loop {
        let share = share(conn, window, after.as_ref(), partitions)?;
        after = tally.add(std::slice::from_ref(&share));
        if after.is_none() {
            return Ok(tally);
        }
    }
}

#[cfg(test)]
mod tests;
