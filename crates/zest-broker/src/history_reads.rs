//! Reads of history for the REST API, from any node of the cluster (a standalone gateway
//! included). Each node's history holds the partitions it replicates (every replica exports
//! its own log), so a read that concerns other partitions asks a node that replicates them:
//! its leader first, then its other replicas (a `READ` frame, as reads of the state do). That
//! node answers from its history once its own export passed what it answered
//! (`PartitionExport::wait_exported`).
//!
//! A search asks this node for the partitions it exports and, at once, a replica of each of
//! the others for its share ([`zest_history::Part`]: the first `from + limit` rows of an offset
//! page, the `limit` rows after a cursor, each with its sort values, and the count); the shares
//! merge by the sort values into the page, the counts summed ([`zest_history::search::merge`]).
//! A node that exports every partition answers in one query. A get asks the partition of the
//! key; element statistics of a definition sum every partition's; an instance's statistics,
//! sequence flows and call hierarchy ask the instance's partition (and a caller's, link by
//! link, for a call hierarchy). Usage metrics ask every partition for its share, round
//! after round, and count distinct assignees over the shares' pairs
//! ([`zest_history::usage::Tally`]).
//!
//! A partition whose history here has a gap (`crate::history_copy` is filling it) is read
//! from a replica whose history is complete; only when none answers is it read from what
//! this node has (or, failing that, what another incomplete replica has).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use zest_history::aggregate::{Aggregate, Groups};
use zest_history::usage::{Name, Share, Tally, Window};
use zest_history::{Conditions, History, Named, Of, Part, SearchError};
use zest_protocol::PartitionId;

use crate::export::PartitionExport;
use crate::local::Local;
use crate::reads::{Answer, Read};
use crate::{Broker, BrokerError};

/// What a read of history asks of the partitions it is sent for.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum HistoryRead {
    /// A share of a search (`instance`: only the rows of that process instance, a path's key).
    Search {
        resource: Named,
        query: Value,
        instance: Option<i64>,
    },
    Get {
        resource: Named,
        key: i64,
    },
    /// Element statistics of a definition's instances (filtered by `filter`).
    DefinitionStatistics {
        definition: i64,
        filter: Value,
    },
    InstanceStatistics(i64),
    SequenceFlows(i64),
    /// One link of a call hierarchy.
    CallLink(i64),
    /// The groups of an 8.9 statistics request.
    Aggregate(Aggregate),
    /// A round of usage metrics (`after`: its cursor).
    Usage {
        window: Window,
        after: Option<Name>,
    },
    /// The read, answered also by a replica whose history of the partition has a gap (when
    /// no complete one answered).
    Incomplete(Box<HistoryRead>),
}

/// A node's answer to a [`HistoryRead`].
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum HistoryAnswer {
    Part(Part),
    Item(Option<Value>),
    Value(Value),
    Link(Option<(Value, Option<i64>)>),
    Groups(Groups),
    Usage(Share),
}

/// Why a read of history failed.
#[derive(Debug, thiserror::Error)]
pub enum HistoryReadError {
    /// The node runs with `--history off`.
    #[error("history is off on this node")]
    Off,
    /// The request is wrong (400); the message names the field.
    #[error("{0}")]
    Bad(String),
    /// This node's history store failed.
    #[error("history store: {0}")]
    Store(String),
    /// This node's history store cannot be reached (503; PostgreSQL down).
    #[error("{0}")]
    StoreUnavailable(String),
    /// No node that replicates a partition answered.
    #[error(transparent)]
    Unavailable(#[from] BrokerError),
}

impl From<SearchError> for HistoryReadError {
    fn from(e: SearchError) -> Self {
        match e {
            SearchError::Bad(m) => HistoryReadError::Bad(m),
            SearchError::Store(e) => HistoryReadError::Store(e.to_string()),
            SearchError::Unavailable(m) => HistoryReadError::StoreUnavailable(m),
        }
    }
}

/// This node's history and the exports of its partitions, as reads of it see them.
pub(crate) struct HistoryHere {
    pub history: Arc<History>,
    pub exports: BTreeMap<PartitionId, PartitionExport>,
    /// The copies of history this node sends to replicas with a gap.
    pub copies: crate::history_copy::Sessions,
}

impl HistoryHere {
    /// Whether this node's history holds `partition` whole (it exports it, without a gap).
    pub fn holds(&self, partition: PartitionId) -> bool {
        self.exports
            .get(&partition)
            .is_some_and(PartitionExport::is_complete)
    }

    /// Whether this node's history holds `partition`, with a gap or not.
    pub fn keeps(&self, partition: PartitionId) -> bool {
        self.exports.contains_key(&partition)
    }

    /// Answers `read` for `partitions` (all exported here) from this node's history, once its
    /// export passed what this node answered on them.
    pub async fn answer(
        &self,
        local: &Local,
        partitions: Vec<PartitionId>,
        read: HistoryRead,
    ) -> Result<HistoryAnswer, HistoryReadError> {
        // a store not reached yet answers at once (503): nothing to wait for
        let ready = self.history.is_ready();
        for pid in partitions.iter().filter(|_| ready) {
            if let (Some(export), Some(p)) = (self.exports.get(pid), local.partition(*pid)) {
                export.wait_exported(&p.applied).await;
            }
        }
        let history = self.history.clone();
        tokio::task::spawn_blocking(move || run(&history, &partitions, read))
            .await
            .map_err(|e| HistoryReadError::Store(e.to_string()))?
            .map_err(HistoryReadError::from)
    }
}

fn run(
    history: &History,
    partitions: &[PartitionId],
    read: HistoryRead,
) -> Result<HistoryAnswer, SearchError> {
    Ok(match read {
        HistoryRead::Search {
            resource,
            query,
            instance,
        } => HistoryAnswer::Part(history.search_part(
            resource.resource(),
            &query,
            base(instance),
            partitions,
        )?),
        HistoryRead::Get { resource, key } => {
            HistoryAnswer::Item(history.get(resource.resource(), key)?)
        }
        HistoryRead::DefinitionStatistics { definition, filter } => HistoryAnswer::Value(
            history.element_statistics_of(Of::Definition(definition), &filter, partitions)?,
        ),
        HistoryRead::InstanceStatistics(key) => {
            HistoryAnswer::Value(history.element_statistics(Of::Instance(key), &Value::Null)?)
        }
        HistoryRead::SequenceFlows(key) => HistoryAnswer::Value(history.sequence_flows(key)?),
        HistoryRead::CallLink(key) => HistoryAnswer::Link(history.call_hierarchy_link(key)?),
        HistoryRead::Aggregate(aggregate) => {
            HistoryAnswer::Groups(history.aggregate(&aggregate, Some(partitions))?)
        }
        HistoryRead::Usage { window, after } => {
            HistoryAnswer::Usage(history.usage_share(&window, after.as_ref(), partitions)?)
        }
        HistoryRead::Incomplete(read) => return run(history, partitions, *read),
    })
}

/// The base conditions of a search: the rows of one process instance, or all.
fn base(instance: Option<i64>) -> Conditions {
    match instance {
        Some(key) => Conditions::key_equals("t.process_instance_key", key),
        None => Conditions::default(),
    }
}

impl Broker {
    /// Whether this node answers reads of history (`--history on`, the default). A node
    /// without partitions (a standalone gateway) answers them from the nodes that have them.
    pub fn history_on(&self) -> bool {
        self.config.history
    }

    /// A search of history over every partition of the cluster (`instance`: of one process
    /// instance's rows), the REST API's `{items, page}`.
    pub async fn history_search(
        &self,
        resource: Named,
        query: &Value,
        instance: Option<i64>,
    ) -> Result<Value, HistoryReadError> {
        if !self.history_on() {
            return Err(HistoryReadError::Off);
        }
        if self.history_holds_every_partition() {
            // one query over every partition
            let h = self.history().await.ok_or(HistoryReadError::Off)?;
            return Ok(h.search(resource.resource(), query, base(instance))?);
        }
        let read = HistoryRead::Search {
            resource,
            query: query.clone(),
            instance,
        };
        let answers = self.ask_every_partition(read).await?;
        let mut parts = Vec::new();
        for (partition, answer) in answers {
            match answer {
                HistoryAnswer::Part(p) => parts.push(p),
                _ => return Err(crate::unexpected_answer(partition).into()),
            }
        }
        Ok(zest_history::search::merge(
            resource.resource(),
            query,
            parts,
        )?)
    }

    /// The item of `resource` with `key`, from the history of the key's partition.
    pub async fn history_get(
        &self,
        resource: Named,
        key: i64,
    ) -> Result<Option<Value>, HistoryReadError> {
        let partition = self.partition_of(key);
        match self
            .history_read(partition, HistoryRead::Get { resource, key })
            .await?
        {
            HistoryAnswer::Item(item) => Ok(item),
            _ => Err(crate::unexpected_answer(partition).into()),
        }
    }

    /// Element instance counts per element: of a definition's instances (every partition's,
    /// summed), or of one instance (its partition's).
    pub async fn history_statistics(
        &self,
        of: Of,
        filter: &Value,
    ) -> Result<Value, HistoryReadError> {
        match of {
            Of::Definition(definition) => {
                let read = HistoryRead::DefinitionStatistics {
                    definition,
                    filter: filter.clone(),
                };
                let mut parts = Vec::new();
                for (partition, answer) in self.ask_every_partition(read).await? {
                    match answer {
                        HistoryAnswer::Value(v) => parts.push(v),
                        _ => return Err(crate::unexpected_answer(partition).into()),
                    }
                }
                Ok(zest_history::merge_element_statistics(&parts))
            }
            Of::Instance(key) => {
                self.history_value(key, HistoryRead::InstanceStatistics(key))
                    .await
            }
        }
    }

    /// The page of an 8.9 statistics request (`query`: its sort and page): every partition's
    /// groups, summed.
    pub async fn history_aggregate(
        &self,
        aggregate: Aggregate,
        query: &Value,
    ) -> Result<Value, HistoryReadError> {
        if !self.history_on() {
            return Err(HistoryReadError::Off);
        }
        let parts = if self.history_holds_every_partition() {
            let h = self.history().await.ok_or(HistoryReadError::Off)?;
            vec![h.aggregate(&aggregate, None)?]
        } else {
            let mut parts = Vec::new();
            let read = HistoryRead::Aggregate(aggregate.clone());
            for (partition, answer) in self.ask_every_partition(read).await? {
                match answer {
                    HistoryAnswer::Groups(g) => parts.push(g),
                    _ => return Err(crate::unexpected_answer(partition).into()),
                }
            }
            parts
        };
        Ok(zest_history::aggregate::page(&aggregate, parts, query)?)
    }

    /// The usage metrics of `window` over every partition: one query per round where this
    /// node holds them all, else every partition's share per round (distinct assignees are
    /// counted over the shares' pairs, not summed).
    pub async fn history_usage(&self, window: Window) -> Result<Tally, HistoryReadError> {
        if !self.history_on() {
            return Err(HistoryReadError::Off);
        }
        if self.history_holds_every_partition() {
            // waits for this node's export to pass what it answered
            self.history().await.ok_or(HistoryReadError::Off)?;
            let h = self.exporting.as_ref().ok_or(HistoryReadError::Off)?;
            let h = h.history.clone();
            return tokio::task::spawn_blocking(move || h.usage(&window))
                .await
                .map_err(|e| HistoryReadError::Store(e.to_string()))?
                .map_err(HistoryReadError::from);
        }
        let mut tally = Tally::default();
        let mut after = None;
        loop {
            let read = HistoryRead::Usage {
                window: window.clone(),
                after: after.clone(),
            };
            let mut shares = Vec::new();
            for (partition, answer) in self.ask_every_partition(read).await? {
                match answer {
                    HistoryAnswer::Usage(s) => shares.push(s),
                    _ => return Err(crate::unexpected_answer(partition).into()),
                }
            }
            after = tally.add(&shares);
            if after.is_none() {
                return Ok(tally);
            }
        }
    }

    /// The sequence flows a process instance took.
    pub async fn history_sequence_flows(&self, instance: i64) -> Result<Value, HistoryReadError> {
        self.history_value(instance, HistoryRead::SequenceFlows(instance))
            .await
    }

    /// The instance and the instances that called it, root first, each read from its own
    /// partition's history; None when history lacks the instance.
    pub async fn history_call_hierarchy(
        &self,
        instance: i64,
    ) -> Result<Option<Value>, HistoryReadError> {
        let mut chain = Vec::new();
        let mut key = instance;
        // a chain of calls is at most as deep as the engine lets calls nest; the bound only
        // guards against a cycle in damaged data
        for _ in 0..1000 {
            let partition = self.partition_of(key);
            let link = match self
                .history_read(partition, HistoryRead::CallLink(key))
                .await?
            {
                HistoryAnswer::Link(link) => link,
                _ => return Err(crate::unexpected_answer(partition).into()),
            };
            let Some((entry, parent)) = link else { break };
            chain.push(entry);
            match parent {
                Some(p) => key = p,
                None => break,
            }
        }
        if chain.is_empty() {
            return Ok(None);
        }
        chain.reverse();
        Ok(Some(Value::Array(chain)))
    }

    async fn history_value(&self, key: i64, read: HistoryRead) -> Result<Value, HistoryReadError> {
        let partition = self.partition_of(key);
        match self.history_read(partition, read).await? {
            HistoryAnswer::Value(v) => Ok(v),
            _ => Err(crate::unexpected_answer(partition).into()),
        }
    }

    /// `read` for every partition: the ones this node exports in one read here, each other
    /// one by a node that replicates it, all at once.
    async fn ask_every_partition(
        &self,
        read: HistoryRead,
    ) -> Result<Vec<(PartitionId, HistoryAnswer)>, HistoryReadError> {
        let complete = |p: &PartitionId| self.exports.get(p).is_some_and(|e| e.is_complete());
        let here: Vec<PartitionId> = (1..=self.config.partitions).filter(complete).collect();
        let elsewhere: Vec<PartitionId> = (1..=self.config.partitions)
            .filter(|p| !complete(p))
            .collect();
        let local = async {
            match (here.first(), self.local.history.get()) {
                (Some(&first), Some(h)) => Some(
                    h.answer(&self.local, here.clone(), read.clone())
                        .await
                        .map(|a| (first, a)),
                ),
                _ => None,
            }
        };
        let remote = futures::future::join_all(elsewhere.iter().map(|&partition| {
            let read = read.clone();
            async move {
                self.history_elsewhere(partition, read)
                    .await
                    .map(|a| (partition, a))
            }
        }));
        let (local, remote) = futures::join!(local, remote);
        let mut answers = Vec::new();
        if let Some(local) = local {
            answers.push(local?);
        }
        for answer in remote {
            answers.push(answer?);
        }
        Ok(answers)
    }

    /// `read` of one partition: here when this node exports it, else by a node that does.
    async fn history_read(
        &self,
        partition: PartitionId,
        read: HistoryRead,
    ) -> Result<HistoryAnswer, HistoryReadError> {
        if !self.history_on() {
            return Err(HistoryReadError::Off);
        }
        if partition == 0 || partition > self.config.partitions {
            return Err(BrokerError::NoSuchPartition(partition).into());
        }
        match self.local.history.get().filter(|h| h.holds(partition)) {
            Some(h) => h.answer(&self.local, vec![partition], read).await,
            None => self.history_elsewhere(partition, read).await,
        }
    }

    /// `read` of a partition this node's history lacks or has with a gap: by a replica whose
    /// history is complete; when none answers, from this node's (with its gap) or another
    /// incomplete replica's.
    async fn history_elsewhere(
        &self,
        partition: PartitionId,
        read: HistoryRead,
    ) -> Result<HistoryAnswer, HistoryReadError> {
        let unavailable = match self.history_remote(partition, read.clone()).await {
            Err(HistoryReadError::Unavailable(e)) => e,
            answered => return answered,
        };
        if let Some(h) = self.local.history.get().filter(|h| h.keeps(partition)) {
            return h.answer(&self.local, vec![partition], read).await;
        }
        match self
            .history_remote(partition, HistoryRead::Incomplete(Box::new(read)))
            .await
        {
            Err(HistoryReadError::Unavailable(_)) => Err(unavailable.into()),
            answered => answered,
        }
    }

    async fn history_remote(
        &self,
        partition: PartitionId,
        read: HistoryRead,
    ) -> Result<HistoryAnswer, HistoryReadError> {
        match self
            .local
            .read_remote(partition, &Read::History(read))
            .await?
        {
            Answer::History(Ok(answer)) => Ok(answer),
            Answer::History(Err(bad)) => Err(HistoryReadError::Bad(bad)),
            _ => Err(crate::unexpected_answer(partition).into()),
        }
    }
}

impl Local {
    /// A read of history another node asks of `partition`: answered when this node exports it
    /// (else unavailable here, and the asker tries another replica); a wrong request is an
    /// answer (the asker's 400), a failing store an error.
    pub(crate) async fn history_here(
        &self,
        partition: PartitionId,
        read: HistoryRead,
    ) -> Result<Answer, tonic::Status> {
        let anyway = matches!(read, HistoryRead::Incomplete(_));
        let here = self.history.get().filter(|h| {
            if anyway {
                h.keeps(partition)
            } else {
                h.holds(partition)
            }
        });
        let Some(h) = here else {
            return Err(tonic::Status::unavailable(format!(
                "node {} keeps no complete history of partition {partition}",
                self.node_id
            )));
        };
        match h.answer(self, vec![partition], read).await {
            Ok(answer) => Ok(Answer::History(Ok(answer))),
            Err(HistoryReadError::Bad(m)) => Ok(Answer::History(Err(m))),
            // the asker tries another replica
            Err(HistoryReadError::StoreUnavailable(m)) => Err(tonic::Status::unavailable(m)),
            Err(e) => Err(tonic::Status::internal(format!(
                "the history of node {} failed to answer: {e}",
                self.node_id
            ))),
        }
    }
}
