-- Camunda 8.9's job statistics, kept as history is written (never by scanning the jobs):
-- per minute bucket (epoch ms of the minute's start), partition, job type, worker and tenant,
-- how many jobs were created, completed and failed there, and the time of the last of each
-- (epoch ms, 0 when none). The exporter adds a batch's increments in the transaction that
-- stores its position, so each record is counted once.
CREATE TABLE job_stat (
    bucket          INTEGER NOT NULL,
    partition_id    INTEGER NOT NULL,
    job_type        TEXT NOT NULL,
    worker          TEXT NOT NULL,
    tenant_id       TEXT NOT NULL,
    created         INTEGER NOT NULL DEFAULT 0,
    completed       INTEGER NOT NULL DEFAULT 0,
    failed          INTEGER NOT NULL DEFAULT 0,
    created_last    INTEGER NOT NULL DEFAULT 0,
    completed_last  INTEGER NOT NULL DEFAULT 0,
    failed_last     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (bucket, partition_id, job_type, worker, tenant_id)
);

-- The errors jobs ended with (a failure's or a thrown error's code and message), per minute
-- bucket, partition, job type, error and worker (the statistics count the distinct workers
-- of an error).
CREATE TABLE job_error_stat (
    bucket          INTEGER NOT NULL,
    partition_id    INTEGER NOT NULL,
    job_type        TEXT NOT NULL,
    error_code      TEXT NOT NULL,
    error_message   TEXT NOT NULL,
    worker          TEXT NOT NULL,
    count           INTEGER NOT NULL DEFAULT 0,
    last            INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (bucket, partition_id, job_type, error_code, error_message, worker)
);
