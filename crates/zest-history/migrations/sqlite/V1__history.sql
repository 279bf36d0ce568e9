-- Zest's history, version 1: what Operate and Tasklist show, one row per entity, keyed by the
-- entity's key. Dates are milliseconds since the epoch. Every child table carries the root
-- process instance key, so retention deletes a whole tree by it.

CREATE TABLE export_position (
    partition_id INTEGER PRIMARY KEY,
    -- the position of the last record exported
    position     INTEGER NOT NULL,
    -- the first log index not yet exported
    next_index   INTEGER NOT NULL DEFAULT 0,
    -- the position below which this partition's history is incomplete (a snapshot skipped
    -- the log there), 0 when it has none
    gap_to       INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE process_definition (
    key              INTEGER PRIMARY KEY,
    bpmn_process_id  TEXT NOT NULL,
    name             TEXT,
    version          INTEGER NOT NULL,
    version_tag      TEXT,
    resource_name    TEXT NOT NULL,
    tenant_id        TEXT NOT NULL,
    has_start_form   INTEGER NOT NULL DEFAULT 0,
    bpmn_xml         TEXT NOT NULL
);
CREATE INDEX process_definition_by_id ON process_definition (bpmn_process_id, version);

-- the names of a definition's elements (ElementInstanceResult.elementName)
CREATE TABLE element_name (
    process_definition_key INTEGER NOT NULL,
    element_id             TEXT NOT NULL,
    name                   TEXT NOT NULL,
    PRIMARY KEY (process_definition_key, element_id)
) WITHOUT ROWID;

CREATE TABLE process_instance (
    key                         INTEGER PRIMARY KEY,
    partition_id                INTEGER,
    process_definition_key      INTEGER,
    bpmn_process_id             TEXT,
    version                     INTEGER,
    tenant_id                   TEXT,
    state                       TEXT,
    start_date                  INTEGER,
    end_date                    INTEGER,
    parent_process_instance_key INTEGER,
    parent_element_instance_key INTEGER,
    root_process_instance_key   INTEGER,
    incidents                   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX process_instance_by_definition ON process_instance (bpmn_process_id, state, key);
CREATE INDEX process_instance_by_definition_key ON process_instance (process_definition_key, state);
CREATE INDEX process_instance_by_start ON process_instance (start_date);
CREATE INDEX process_instance_by_end ON process_instance (end_date);
CREATE INDEX process_instance_by_root ON process_instance (root_process_instance_key);
CREATE INDEX process_instance_by_parent ON process_instance (parent_process_instance_key);
CREATE INDEX process_instance_with_incidents ON process_instance (key) WHERE incidents > 0;

CREATE TABLE element_instance (
    key                       INTEGER PRIMARY KEY,
    process_instance_key      INTEGER,
    root_process_instance_key INTEGER,
    process_definition_key    INTEGER,
    bpmn_process_id           TEXT,
    element_id                TEXT,
    element_type              TEXT,
    state                     TEXT,
    flow_scope_key            INTEGER,
    start_date                INTEGER,
    end_date                  INTEGER,
    incident_key              INTEGER,
    tenant_id                 TEXT
);
CREATE INDEX element_instance_by_instance ON element_instance (process_instance_key, key);
CREATE INDEX element_instance_by_scope ON element_instance (flow_scope_key);
CREATE INDEX element_instance_by_definition ON element_instance (process_definition_key, element_id, state);
CREATE INDEX element_instance_by_root ON element_instance (root_process_instance_key);

CREATE TABLE sequence_flow (
    process_instance_key      INTEGER NOT NULL,
    flow_id                   TEXT NOT NULL,
    root_process_instance_key INTEGER,
    process_definition_key    INTEGER,
    bpmn_process_id           TEXT,
    tenant_id                 TEXT,
    PRIMARY KEY (process_instance_key, flow_id)
) WITHOUT ROWID;
CREATE INDEX sequence_flow_by_root ON sequence_flow (root_process_instance_key);

CREATE TABLE variable (
    key                       INTEGER PRIMARY KEY,
    name                      TEXT,
    -- the value, cut at 8191 characters (Camunda's variableSizeThreshold) when longer
    value                     TEXT,
    -- the whole value, only when `value` is cut
    full_value                TEXT,
    is_truncated              INTEGER,
    scope_key                 INTEGER,
    process_instance_key      INTEGER,
    root_process_instance_key INTEGER,
    process_definition_key    INTEGER,
    bpmn_process_id           TEXT,
    tenant_id                 TEXT
);
CREATE INDEX variable_by_scope ON variable (scope_key, name);
CREATE INDEX variable_by_instance ON variable (process_instance_key, name);
CREATE INDEX variable_by_name_value ON variable (name, value);
CREATE INDEX variable_by_root ON variable (root_process_instance_key);

CREATE TABLE incident (
    key                       INTEGER PRIMARY KEY,
    process_instance_key      INTEGER,
    root_process_instance_key INTEGER,
    process_definition_key    INTEGER,
    bpmn_process_id           TEXT,
    element_id                TEXT,
    element_instance_key      INTEGER,
    job_key                   INTEGER,
    error_type                TEXT,
    error_message             TEXT,
    error_message_hash        INTEGER,
    state                     TEXT,
    creation_time             INTEGER,
    tenant_id                 TEXT
);
CREATE INDEX incident_by_instance ON incident (process_instance_key);
CREATE INDEX incident_by_state ON incident (state, error_type);
CREATE INDEX incident_by_element ON incident (element_instance_key);
CREATE INDEX incident_by_root ON incident (root_process_instance_key);

CREATE TABLE job (
    key                          INTEGER PRIMARY KEY,
    job_type                     TEXT,
    worker                       TEXT,
    state                        TEXT,
    kind                         TEXT,
    listener_event_type          TEXT,
    retries                      INTEGER,
    deadline                     INTEGER,
    end_time                     INTEGER,
    error_message                TEXT,
    error_code                   TEXT,
    has_failed_with_retries_left INTEGER,
    custom_headers               TEXT,
    element_id                   TEXT,
    element_instance_key         INTEGER,
    process_instance_key         INTEGER,
    root_process_instance_key    INTEGER,
    process_definition_key       INTEGER,
    bpmn_process_id              TEXT,
    tenant_id                    TEXT
);
CREATE INDEX job_by_instance ON job (process_instance_key);
CREATE INDEX job_by_type ON job (job_type, state);
CREATE INDEX job_by_root ON job (root_process_instance_key);

CREATE TABLE user_task (
    key                       INTEGER PRIMARY KEY,
    name                      TEXT,
    state                     TEXT,
    assignee                  TEXT,
    candidate_groups          TEXT,
    candidate_users           TEXT,
    due_date                  TEXT,
    follow_up_date            TEXT,
    creation_date             INTEGER,
    completion_date           INTEGER,
    priority                  INTEGER,
    form_key                  INTEGER,
    external_form_reference   TEXT,
    custom_headers            TEXT,
    element_id                TEXT,
    element_instance_key      INTEGER,
    process_instance_key      INTEGER,
    root_process_instance_key INTEGER,
    process_definition_key    INTEGER,
    process_definition_version INTEGER,
    bpmn_process_id           TEXT,
    tenant_id                 TEXT
);
CREATE INDEX user_task_by_state ON user_task (state, assignee);
CREATE INDEX user_task_by_instance ON user_task (process_instance_key);
CREATE INDEX user_task_by_root ON user_task (root_process_instance_key);
