//! PROCESS_MESSAGE_SUBSCRIPTION records to rows: each subscription in the state of its last
//! record (CREATED, CORRELATED, DELETED, MIGRATED), and one row per correlation of a message
//! to it (the CORRELATED events).

use std::collections::BTreeMap;

use crate::db::{params, Conn};
use zest_protocol::{Intent, ProcessMessageSubscriptionRecord};

#[derive(Debug)]
pub struct Subscription {
    pub state: &'static str,
    pub at: i64,
    pub record: ProcessMessageSubscriptionRecord,
}

/// One correlation: its row key, the subscription's key, the partition, when.
#[derive(Debug)]
pub struct Correlation {
    pub row: i64,
    pub subscription: i64,
    pub partition: u32,
    pub at: i64,
    pub record: ProcessMessageSubscriptionRecord,
}

#[derive(Default, Debug)]
pub struct Messages {
    /// Each subscription (by key) as the batch's last record of it says.
    pub subscriptions: BTreeMap<i64, Subscription>,
    pub correlations: Vec<Correlation>,
}

impl Messages {
    pub fn subscription(
        &mut self,
        key: i64,
        at: i64,
        intent: Intent,
        partition: u32,
        position: u64,
        m: &ProcessMessageSubscriptionRecord,
    ) {
        let state = match intent {
            Intent::Creating | Intent::Created => "CREATED",
            Intent::Correlated => "CORRELATED",
            Intent::Deleting | Intent::Deleted => "DELETED",
            Intent::Migrated => "MIGRATED",
            _ => return,
        };
        if intent == Intent::Correlated {
            let row = ((partition as i64) << 51) | (position as i64 & ((1 << 51) - 1));
            self.correlations.push(Correlation {
                row,
                subscription: key,
                partition,
                at,
                record: m.clone(),
            });
        }
        let record = m.clone();
        self.subscriptions
            .insert(key, Subscription { state, at, record });
    }

    /// Writes the batch's rows in `tx`, after its process instances (a row's root is its
    /// instance's).
    pub fn write(&self, tx: &Conn) -> crate::db::Result<()> {
        const ROOT: &str = "COALESCE((SELECT p.root_process_instance_key FROM process_instance p \
                            WHERE p.key = ?7), ?7)";
        for (
            key,
            Subscription {
                state,
                at,
                record: m,
            },
        ) in &self.subscriptions
        {
            tx.execute(&format!(
                "INSERT INTO message_subscription (key, state, last_updated_date, message_name, \
                 correlation_key, element_id, process_instance_key, element_instance_key, \
                 process_definition_key, bpmn_process_id, tenant_id, root_process_instance_key) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, {ROOT}) \
                 ON CONFLICT(key) DO UPDATE SET state = excluded.state, \
                 last_updated_date = excluded.last_updated_date, \
                 element_id = COALESCE(NULLIF(excluded.element_id, ''), message_subscription.element_id), \
                 process_definition_key = \
                 COALESCE(NULLIF(excluded.process_definition_key, 0), \
                 message_subscription.process_definition_key), \
                 bpmn_process_id = COALESCE(NULLIF(excluded.bpmn_process_id, ''), \
                 message_subscription.bpmn_process_id)"
            ), params![
                key,
                state,
                at,
                m.message_name,
                m.correlation_key,
                m.element_id,
                m.process_instance_key,
                m.element_instance_key,
                m.process_definition_key,
                m.bpmn_process_id,
                m.tenant_id
            ])?;
        }
        for c in &self.correlations {
            let m = &c.record;
            tx.execute(
                &format!(
                "INSERT INTO correlated_message (key, message_key, subscription_key, message_name, \
                 correlation_key, correlation_time, process_instance_key, partition_id, \
                 element_id, element_instance_key, process_definition_key, bpmn_process_id, \
                 tenant_id, root_process_instance_key) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, {ROOT}) \
                 ON CONFLICT(key) DO NOTHING"
            ),
                params![
                    c.row,
                    m.message_key,
                    c.subscription,
                    m.message_name,
                    m.correlation_key,
                    c.at,
                    m.process_instance_key,
                    c.partition,
                    m.element_id,
                    m.element_instance_key,
                    m.process_definition_key,
                    m.bpmn_process_id,
                    m.tenant_id
                ],
            )?;
        }
        Ok(())
    }
}
