-- Zest's history, version 2: decisions (definitions, requirements with their XML, and the
-- instances of each evaluation). User tasks already have their table (version 1); their name
-- is their element's (element_name).

CREATE TABLE decision_requirements (
    key                      INTEGER PRIMARY KEY,
    decision_requirements_id TEXT NOT NULL,
    name                     TEXT,
    version                  INTEGER NOT NULL,
    resource_name            TEXT NOT NULL,
    tenant_id                TEXT NOT NULL,
    dmn_xml                  TEXT NOT NULL
);
CREATE INDEX decision_requirements_by_id ON decision_requirements (decision_requirements_id, version);

CREATE TABLE decision_definition (
    key                       INTEGER PRIMARY KEY,
    decision_id               TEXT NOT NULL,
    name                      TEXT,
    version                   INTEGER NOT NULL,
    decision_requirements_id  TEXT,
    decision_requirements_key INTEGER,
    tenant_id                 TEXT NOT NULL
);
CREATE INDEX decision_definition_by_id ON decision_definition (decision_id, version);

-- One row per decision an evaluation evaluated (a decision and the decisions it requires).
-- Its id in the REST API is `{evaluation_key}-{index}` (index from 1); `key` packs both into
-- one integer that keeps the evaluation key's partition in its high bits: the partition
-- (key >> 51) << 51, then the evaluation key's counter shifted left 6 bits, then the index - 1
-- (an evaluation of at most 64 decisions, a counter below 2^45).
CREATE TABLE decision_instance (
    key                       INTEGER PRIMARY KEY,
    evaluation_key            INTEGER NOT NULL,
    idx                       INTEGER NOT NULL,
    state                     TEXT NOT NULL,
    evaluation_date           INTEGER,
    evaluation_failure        TEXT,
    decision_key              INTEGER,
    decision_id               TEXT,
    decision_name             TEXT,
    decision_version          INTEGER,
    decision_type             TEXT,
    -- JSON texts
    result                    TEXT,
    evaluated_inputs          TEXT,
    matched_rules             TEXT,
    process_definition_key    INTEGER,
    process_instance_key      INTEGER,
    root_process_instance_key INTEGER,
    element_instance_key      INTEGER,
    element_id                TEXT,
    tenant_id                 TEXT
);
CREATE INDEX decision_instance_by_instance ON decision_instance (process_instance_key);
CREATE INDEX decision_instance_by_root ON decision_instance (root_process_instance_key);
CREATE INDEX decision_instance_by_decision ON decision_instance (decision_key, state);
CREATE INDEX decision_instance_by_date ON decision_instance (evaluation_date);

-- Process message subscriptions (a catch element waiting for a message), one row each, in
-- the state of their last record.
CREATE TABLE message_subscription (
    key                       INTEGER PRIMARY KEY,
    state                     TEXT,
    last_updated_date         INTEGER,
    message_name              TEXT,
    correlation_key           TEXT,
    element_id                TEXT,
    element_instance_key      INTEGER,
    process_instance_key      INTEGER,
    root_process_instance_key INTEGER,
    process_definition_key    INTEGER,
    bpmn_process_id           TEXT,
    tenant_id                 TEXT
);
CREATE INDEX message_subscription_by_instance ON message_subscription (process_instance_key);
CREATE INDEX message_subscription_by_name ON message_subscription (message_name, correlation_key);
CREATE INDEX message_subscription_by_root ON message_subscription (root_process_instance_key);

-- Each correlation of a message to a process message subscription. `key` is the CORRELATED
-- record's partition and position ((partition << 51) | position): unique per correlation (a
-- message may reach many subscriptions, a non-interrupting one many messages), the same when
-- a record is exported again.
CREATE TABLE correlated_message (
    key                       INTEGER PRIMARY KEY,
    message_key               INTEGER,
    subscription_key          INTEGER,
    message_name              TEXT,
    correlation_key           TEXT,
    correlation_time          INTEGER,
    partition_id              INTEGER,
    element_id                TEXT,
    element_instance_key      INTEGER,
    process_instance_key      INTEGER,
    root_process_instance_key INTEGER,
    process_definition_key    INTEGER,
    bpmn_process_id           TEXT,
    tenant_id                 TEXT
);
CREATE INDEX correlated_message_by_instance ON correlated_message (process_instance_key);
CREATE INDEX correlated_message_by_message ON correlated_message (message_key);
CREATE INDEX correlated_message_by_root ON correlated_message (root_process_instance_key);
