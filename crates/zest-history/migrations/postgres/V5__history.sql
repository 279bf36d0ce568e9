-- Zest's history in PostgreSQL (`--history-url`): the schema of SQLite's versions 1 to 5
-- (migrations/sqlite) in one, so that the next version is 6 in both. The differences: every
-- integer is a BIGINT, every text collates as "C" (text sorts by its bytes, as in SQLite and as
-- the merge of several partitions' pages compares it), and SQLite's built-in functions that the
-- searches use exist here under their SQLite names (at the end).

-- Zest's history, version 1: what Operate and Tasklist show, one row per entity, keyed by the
-- entity's key. Dates are milliseconds since the epoch. Every child table carries the root
-- process instance key, so retention deletes a whole tree by it.

CREATE TABLE export_position (
    partition_id BIGINT PRIMARY KEY,
    -- the position of the last record exported
    position     BIGINT NOT NULL,
    -- the first log index not yet exported
    next_index   BIGINT NOT NULL DEFAULT 0,
    -- the position below which this partition's history is incomplete (a snapshot skipped
    -- the log there), 0 when it has none
    gap_to       BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE process_definition (
    key              BIGINT PRIMARY KEY,
    bpmn_process_id  TEXT COLLATE "C" NOT NULL,
    name             TEXT COLLATE "C",
    version          BIGINT NOT NULL,
    version_tag      TEXT COLLATE "C",
    resource_name    TEXT COLLATE "C" NOT NULL,
    tenant_id        TEXT COLLATE "C" NOT NULL,
    has_start_form   BIGINT NOT NULL DEFAULT 0,
    bpmn_xml         TEXT COLLATE "C" NOT NULL
);
CREATE INDEX process_definition_by_id ON process_definition (bpmn_process_id, version);

-- the names of a definition's elements (ElementInstanceResult.elementName)
CREATE TABLE element_name (
    process_definition_key BIGINT NOT NULL,
    element_id             TEXT COLLATE "C" NOT NULL,
    name                   TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (process_definition_key, element_id)
);

CREATE TABLE process_instance (
    key                         BIGINT PRIMARY KEY,
    partition_id                BIGINT,
    process_definition_key      BIGINT,
    bpmn_process_id             TEXT COLLATE "C",
    version                     BIGINT,
    tenant_id                   TEXT COLLATE "C",
    state                       TEXT COLLATE "C",
    start_date                  BIGINT,
    end_date                    BIGINT,
    parent_process_instance_key BIGINT,
    parent_element_instance_key BIGINT,
    root_process_instance_key   BIGINT,
    incidents                   BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX process_instance_by_definition ON process_instance (bpmn_process_id, state, key);
CREATE INDEX process_instance_by_definition_key ON process_instance (process_definition_key, state);
CREATE INDEX process_instance_by_start ON process_instance (start_date);
CREATE INDEX process_instance_by_end ON process_instance (end_date);
CREATE INDEX process_instance_by_root ON process_instance (root_process_instance_key);
CREATE INDEX process_instance_by_parent ON process_instance (parent_process_instance_key);
CREATE INDEX process_instance_with_incidents ON process_instance (key) WHERE incidents > 0;

CREATE TABLE element_instance (
    key                       BIGINT PRIMARY KEY,
    process_instance_key      BIGINT,
    root_process_instance_key BIGINT,
    process_definition_key    BIGINT,
    bpmn_process_id           TEXT COLLATE "C",
    element_id                TEXT COLLATE "C",
    element_type              TEXT COLLATE "C",
    state                     TEXT COLLATE "C",
    flow_scope_key            BIGINT,
    start_date                BIGINT,
    end_date                  BIGINT,
    incident_key              BIGINT,
    tenant_id                 TEXT COLLATE "C"
);
CREATE INDEX element_instance_by_instance ON element_instance (process_instance_key, key);
CREATE INDEX element_instance_by_scope ON element_instance (flow_scope_key);
CREATE INDEX element_instance_by_definition ON element_instance (process_definition_key, element_id, state);
CREATE INDEX element_instance_by_root ON element_instance (root_process_instance_key);

CREATE TABLE sequence_flow (
    process_instance_key      BIGINT NOT NULL,
    flow_id                   TEXT COLLATE "C" NOT NULL,
    root_process_instance_key BIGINT,
    process_definition_key    BIGINT,
    bpmn_process_id           TEXT COLLATE "C",
    tenant_id                 TEXT COLLATE "C",
    PRIMARY KEY (process_instance_key, flow_id)
);
CREATE INDEX sequence_flow_by_root ON sequence_flow (root_process_instance_key);

CREATE TABLE variable (
    key                       BIGINT PRIMARY KEY,
    name                      TEXT COLLATE "C",
    -- the value, cut at 8191 characters (Camunda's variableSizeThreshold) when longer
    value                     TEXT COLLATE "C",
    -- the whole value, only when `value` is cut
    full_value                TEXT COLLATE "C",
    is_truncated              BIGINT,
    scope_key                 BIGINT,
    process_instance_key      BIGINT,
    root_process_instance_key BIGINT,
    process_definition_key    BIGINT,
    bpmn_process_id           TEXT COLLATE "C",
    tenant_id                 TEXT COLLATE "C"
);
CREATE INDEX variable_by_scope ON variable (scope_key, name);
CREATE INDEX variable_by_instance ON variable (process_instance_key, name);
CREATE INDEX variable_by_name_value ON variable (name, value);

CREATE TABLE incident (
    key                       BIGINT PRIMARY KEY,
    process_instance_key      BIGINT,
    root_process_instance_key BIGINT,
    process_definition_key    BIGINT,
    bpmn_process_id           TEXT COLLATE "C",
    element_id                TEXT COLLATE "C",
    element_instance_key      BIGINT,
    job_key                   BIGINT,
    error_type                TEXT COLLATE "C",
    error_message             TEXT COLLATE "C",
    error_message_hash        BIGINT,
    state                     TEXT COLLATE "C",
    creation_time             BIGINT,
    tenant_id                 TEXT COLLATE "C"
);
CREATE INDEX incident_by_instance ON incident (process_instance_key);
CREATE INDEX incident_by_state ON incident (state, error_type);
CREATE INDEX incident_by_element ON incident (element_instance_key);
CREATE INDEX incident_by_root ON incident (root_process_instance_key);

CREATE TABLE job (
    key                          BIGINT PRIMARY KEY,
    job_type                     TEXT COLLATE "C",
    worker                       TEXT COLLATE "C",
    state                        TEXT COLLATE "C",
    kind                         TEXT COLLATE "C",
    listener_event_type          TEXT COLLATE "C",
    retries                      BIGINT,
    deadline                     BIGINT,
    end_time                     BIGINT,
    error_message                TEXT COLLATE "C",
    error_code                   TEXT COLLATE "C",
    has_failed_with_retries_left BIGINT,
    custom_headers               TEXT COLLATE "C",
    element_id                   TEXT COLLATE "C",
    element_instance_key         BIGINT,
    process_instance_key         BIGINT,
    root_process_instance_key    BIGINT,
    process_definition_key       BIGINT,
    bpmn_process_id              TEXT COLLATE "C",
    tenant_id                    TEXT COLLATE "C"
);
CREATE INDEX job_by_instance ON job (process_instance_key);
CREATE INDEX job_by_type ON job (job_type, state);
CREATE INDEX job_by_root ON job (root_process_instance_key);

CREATE TABLE user_task (
    key                       BIGINT PRIMARY KEY,
    name                      TEXT COLLATE "C",
    state                     TEXT COLLATE "C",
    assignee                  TEXT COLLATE "C",
    candidate_groups          TEXT COLLATE "C",
    candidate_users           TEXT COLLATE "C",
    due_date                  TEXT COLLATE "C",
    follow_up_date            TEXT COLLATE "C",
    creation_date             BIGINT,
    completion_date           BIGINT,
    priority                  BIGINT,
    form_key                  BIGINT,
    external_form_reference   TEXT COLLATE "C",
    custom_headers            TEXT COLLATE "C",
    element_id                TEXT COLLATE "C",
    element_instance_key      BIGINT,
    process_instance_key      BIGINT,
    root_process_instance_key BIGINT,
    process_definition_key    BIGINT,
    process_definition_version BIGINT,
    bpmn_process_id           TEXT COLLATE "C",
    tenant_id                 TEXT COLLATE "C"
);
CREATE INDEX user_task_by_state ON user_task (state, assignee);
CREATE INDEX user_task_by_instance ON user_task (process_instance_key);
CREATE INDEX user_task_by_root ON user_task (root_process_instance_key);

-- Zest's history, version 2: decisions (definitions, requirements with their XML, and the
-- instances of each evaluation). User tasks already have their table (version 1); their name
-- is their element's (element_name).

CREATE TABLE decision_requirements (
    key                      BIGINT PRIMARY KEY,
    decision_requirements_id TEXT COLLATE "C" NOT NULL,
    name                     TEXT COLLATE "C",
    version                  BIGINT NOT NULL,
    resource_name            TEXT COLLATE "C" NOT NULL,
    tenant_id                TEXT COLLATE "C" NOT NULL,
    dmn_xml                  TEXT COLLATE "C" NOT NULL
);
CREATE INDEX decision_requirements_by_id ON decision_requirements (decision_requirements_id, version);

CREATE TABLE decision_definition (
    key                       BIGINT PRIMARY KEY,
    decision_id               TEXT COLLATE "C" NOT NULL,
    name                      TEXT COLLATE "C",
    version                   BIGINT NOT NULL,
    decision_requirements_id  TEXT COLLATE "C",
    decision_requirements_key BIGINT,
    tenant_id                 TEXT COLLATE "C" NOT NULL
);
CREATE INDEX decision_definition_by_id ON decision_definition (decision_id, version);

-- One row per decision an evaluation evaluated (a decision and the decisions it requires).
-- Its id in the REST API is `{evaluation_key}-{index}` (index from 1); `key` packs both into
-- one integer that keeps the evaluation key's partition in its high bits: the partition
-- (key >> 51) << 51, then the evaluation key's counter shifted left 6 bits, then the index - 1
-- (an evaluation of at most 64 decisions, a counter below 2^45).
CREATE TABLE decision_instance (
    key                       BIGINT PRIMARY KEY,
    evaluation_key            BIGINT NOT NULL,
    idx                       BIGINT NOT NULL,
    state                     TEXT COLLATE "C" NOT NULL,
    evaluation_date           BIGINT,
    evaluation_failure        TEXT COLLATE "C",
    decision_key              BIGINT,
    decision_id               TEXT COLLATE "C",
    decision_name             TEXT COLLATE "C",
    decision_version          BIGINT,
    decision_type             TEXT COLLATE "C",
    -- JSON texts
    result                    TEXT COLLATE "C",
    evaluated_inputs          TEXT COLLATE "C",
    matched_rules             TEXT COLLATE "C",
    process_definition_key    BIGINT,
    process_instance_key      BIGINT,
    root_process_instance_key BIGINT,
    element_instance_key      BIGINT,
    element_id                TEXT COLLATE "C",
    tenant_id                 TEXT COLLATE "C"
);
CREATE INDEX decision_instance_by_instance ON decision_instance (process_instance_key);
CREATE INDEX decision_instance_by_root ON decision_instance (root_process_instance_key);
CREATE INDEX decision_instance_by_decision ON decision_instance (decision_key, state);
CREATE INDEX decision_instance_by_date ON decision_instance (evaluation_date);

-- Process message subscriptions (a catch element waiting for a message), one row each, in
-- the state of their last record.
CREATE TABLE message_subscription (
    key                       BIGINT PRIMARY KEY,
    state                     TEXT COLLATE "C",
    last_updated_date         BIGINT,
    message_name              TEXT COLLATE "C",
    correlation_key           TEXT COLLATE "C",
    element_id                TEXT COLLATE "C",
    element_instance_key      BIGINT,
    process_instance_key      BIGINT,
    root_process_instance_key BIGINT,
    process_definition_key    BIGINT,
    bpmn_process_id           TEXT COLLATE "C",
    tenant_id                 TEXT COLLATE "C"
);
CREATE INDEX message_subscription_by_instance ON message_subscription (process_instance_key);
CREATE INDEX message_subscription_by_name ON message_subscription (message_name, correlation_key);
CREATE INDEX message_subscription_by_root ON message_subscription (root_process_instance_key);

-- Each correlation of a message to a process message subscription. `key` is the CORRELATED
-- record's partition and position ((partition << 51) | position): unique per correlation (a
-- message may reach many subscriptions, a non-interrupting one many messages), the same when
-- a record is exported again.
CREATE TABLE correlated_message (
    key                       BIGINT PRIMARY KEY,
    message_key               BIGINT,
    subscription_key          BIGINT,
    message_name              TEXT COLLATE "C",
    correlation_key           TEXT COLLATE "C",
    correlation_time          BIGINT,
    partition_id              BIGINT,
    element_id                TEXT COLLATE "C",
    element_instance_key      BIGINT,
    process_instance_key      BIGINT,
    root_process_instance_key BIGINT,
    process_definition_key    BIGINT,
    bpmn_process_id           TEXT COLLATE "C",
    tenant_id                 TEXT COLLATE "C"
);
CREATE INDEX correlated_message_by_instance ON correlated_message (process_instance_key);
CREATE INDEX correlated_message_by_message ON correlated_message (message_key);
CREATE INDEX correlated_message_by_root ON correlated_message (root_process_instance_key);

-- Batch operations (Camunda 8.8's batch operations by filter): projected from partition 1's
-- BATCH_OPERATION records (zest-history/src/batch.rs). Dates are milliseconds since the epoch.

CREATE TABLE batch_operation (
    key            BIGINT PRIMARY KEY,
    operation_type TEXT COLLATE "C" NOT NULL,
    state          TEXT COLLATE "C" NOT NULL,
    start_date     BIGINT,
    end_date       BIGINT,
    -- items the filter found (known once the first chunk ran)
    total          BIGINT NOT NULL DEFAULT 0,
    completed      BIGINT NOT NULL DEFAULT 0,
    failed         BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX batch_operation_by_state ON batch_operation (state, key);

-- One row per item done. `key` is the row's own: partition 1's key space (1 << 51) plus a
-- counter, so a search restricted by partition keeps the rows with their operation.
CREATE TABLE batch_operation_item (
    key                  BIGINT PRIMARY KEY,
    batch_operation_key  BIGINT NOT NULL,
    operation_type       TEXT COLLATE "C" NOT NULL,
    item_key             BIGINT NOT NULL,
    process_instance_key BIGINT NOT NULL,
    state                TEXT COLLATE "C" NOT NULL,
    error_message        TEXT COLLATE "C",
    processed_date       BIGINT
);
CREATE UNIQUE INDEX batch_operation_item_by_operation
    ON batch_operation_item (batch_operation_key, item_key);
CREATE INDEX batch_operation_item_by_instance ON batch_operation_item (process_instance_key);

-- SQLite's julianday(text): the Julian day number of a date-time text (NULL when it is not one).
CREATE FUNCTION julianday(t TEXT) RETURNS DOUBLE PRECISION AS $$
BEGIN
    RETURN extract(epoch FROM t::timestamptz)::double precision / 86400.0 + 2440587.5;
EXCEPTION WHEN others THEN
    RETURN NULL;
END;
$$ LANGUAGE plpgsql IMMUTABLE;

-- SQLite's json_valid(text).
CREATE FUNCTION json_valid(t TEXT) RETURNS BOOLEAN AS $$
BEGIN
    RETURN t IS NOT NULL AND t::jsonb IS NOT NULL;
EXCEPTION WHEN others THEN
    RETURN FALSE;
END;
$$ LANGUAGE plpgsql IMMUTABLE;

-- SQLite's json_each(text) over a JSON list: one row per element, its text in `value`.
CREATE FUNCTION json_each(t TEXT) RETURNS TABLE (value TEXT) AS $$
    SELECT e FROM jsonb_array_elements_text(t::jsonb) AS e
$$ LANGUAGE sql IMMUTABLE;
