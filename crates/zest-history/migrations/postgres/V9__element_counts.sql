-- The element statistics of each process definition, kept as history is written (see
-- migrations/sqlite/V9__element_counts.sql and zest-history/src/counts.rs).

CREATE TABLE element_count (
    process_definition_key BIGINT NOT NULL,
    element_id             TEXT COLLATE "C" NOT NULL,
    partition_id           BIGINT NOT NULL,
    active                 BIGINT NOT NULL DEFAULT 0,
    incidents              BIGINT NOT NULL DEFAULT 0,
    completed              BIGINT NOT NULL DEFAULT 0,
    canceled               BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (process_definition_key, element_id, partition_id)
);

INSERT INTO element_count
SELECT e.process_definition_key, e.element_id, e.key >> 51,
       SUM(CASE WHEN e.state = 'ACTIVE' THEN 1 ELSE 0 END),
       SUM(CASE WHEN e.state = 'ACTIVE' AND e.incident_key IS NOT NULL THEN 1 ELSE 0 END),
       SUM(CASE WHEN e.state = 'COMPLETED' THEN 1 ELSE 0 END),
       SUM(CASE WHEN e.state = 'TERMINATED' THEN 1 ELSE 0 END)
FROM element_instance e
WHERE e.process_definition_key IS NOT NULL AND e.element_id IS NOT NULL
GROUP BY e.process_definition_key, e.element_id, e.key >> 51;
