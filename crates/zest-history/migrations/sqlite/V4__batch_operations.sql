-- Batch operations (Camunda 8.8's batch operations by filter): projected from partition 1's
-- BATCH_OPERATION records (zest-history/src/batch.rs). Dates are milliseconds since the epoch.

CREATE TABLE batch_operation (
    key            INTEGER PRIMARY KEY,
    operation_type TEXT NOT NULL,
    state          TEXT NOT NULL,
    start_date     INTEGER,
    end_date       INTEGER,
    -- items the filter found (known once the first chunk ran)
    total          INTEGER NOT NULL DEFAULT 0,
    completed      INTEGER NOT NULL DEFAULT 0,
    failed         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX batch_operation_by_state ON batch_operation (state, key);

-- One row per item done. `key` is the row's own: partition 1's key space (1 << 51) plus a
-- counter, so a search restricted by partition keeps the rows with their operation.
CREATE TABLE batch_operation_item (
    key                  INTEGER PRIMARY KEY,
    batch_operation_key  INTEGER NOT NULL,
    operation_type       TEXT NOT NULL,
    item_key             INTEGER NOT NULL,
    process_instance_key INTEGER NOT NULL,
    state                TEXT NOT NULL,
    error_message        TEXT,
    processed_date       INTEGER
);
CREATE UNIQUE INDEX batch_operation_item_by_operation
    ON batch_operation_item (batch_operation_key, item_key);
CREATE INDEX batch_operation_item_by_instance ON batch_operation_item (process_instance_key);
