-- Deployed forms, kept like process and decision definitions (zest-history/src/resources/
-- deployed.rs): a user task's form and a process's start form are read from history, and a
-- form stays here after its resource is deleted (`deleted` 1), as Camunda's secondary store
-- keeps it.
CREATE TABLE form (
    key            BIGINT PRIMARY KEY,
    form_id        TEXT COLLATE "C" NOT NULL,
    version        BIGINT NOT NULL,
    resource_name  TEXT COLLATE "C" NOT NULL,
    tenant_id      TEXT COLLATE "C" NOT NULL,
    deployment_key BIGINT NOT NULL,
    form_schema    TEXT COLLATE "C" NOT NULL,
    deleted        BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX form_by_id ON form (form_id, version);

-- Retention of finished batch operations (zest-history/src/retention.rs): by their end.
CREATE INDEX batch_operation_by_end ON batch_operation (end_date);
