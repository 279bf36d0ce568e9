-- The jobs per type, state, tenant and partition, kept as history is written
-- (zest-history/src/counts.rs): the exact totals of the job searches by type and state (a job
-- worker dashboard's default, `c8 search jobs --type x --state CREATED`) without counting
-- 980,000 index entries at 1,000,000 instances. A column the row does not know counts as ''.
-- Filled here from the rows a store already holds.

CREATE TABLE job_count (
    job_type     TEXT COLLATE "C" NOT NULL,
    state        TEXT COLLATE "C" NOT NULL,
    tenant_id    TEXT COLLATE "C" NOT NULL,
    partition_id BIGINT NOT NULL,
    n            BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (job_type, state, tenant_id, partition_id)
);

INSERT INTO job_count
SELECT COALESCE(job_type, ''), COALESCE(state, ''), COALESCE(tenant_id, ''), key >> 51, COUNT(*)
FROM job
GROUP BY COALESCE(job_type, ''), COALESCE(state, ''), COALESCE(tenant_id, ''), key >> 51;
