-- Deployed forms, kept like process and decision definitions (zest-history/src/resources/
-- deployed.rs): a user task's form and a process's start form are read from history, and a
-- form stays here after its resource is deleted (`deleted` 1), as Camunda's secondary store
-- keeps it.
CREATE TABLE form (
    key            INTEGER PRIMARY KEY,
    form_id        TEXT NOT NULL,
    version        INTEGER NOT NULL,
    resource_name  TEXT NOT NULL,
    tenant_id      TEXT NOT NULL,
    deployment_key INTEGER NOT NULL,
    form_schema    TEXT NOT NULL,
    deleted        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX form_by_id ON form (form_id, version);

-- Retention of finished batch operations (zest-history/src/retention.rs): by their end.
CREATE INDEX batch_operation_by_end ON batch_operation (end_date);
