-- The element statistics of each process definition (the counts that colour Operate's
-- diagram), kept as history is written (zest-history/src/counts.rs): per definition, element
-- and partition, the element instances active (with or without an incident), active with an
-- incident, completed and canceled. Filled here from the rows a store already holds.

CREATE TABLE element_count (
    process_definition_key INTEGER NOT NULL,
    element_id             TEXT NOT NULL,
    partition_id           INTEGER NOT NULL,
    active                 INTEGER NOT NULL DEFAULT 0,
    incidents              INTEGER NOT NULL DEFAULT 0,
    completed              INTEGER NOT NULL DEFAULT 0,
    canceled               INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (process_definition_key, element_id, partition_id)
) WITHOUT ROWID;

INSERT INTO element_count
SELECT e.process_definition_key, e.element_id, e.key >> 51,
       SUM(CASE WHEN e.state = 'ACTIVE' THEN 1 ELSE 0 END),
       SUM(CASE WHEN e.state = 'ACTIVE' AND e.incident_key IS NOT NULL THEN 1 ELSE 0 END),
       SUM(CASE WHEN e.state = 'COMPLETED' THEN 1 ELSE 0 END),
       SUM(CASE WHEN e.state = 'TERMINATED' THEN 1 ELSE 0 END)
FROM element_instance e
WHERE e.process_definition_key IS NOT NULL AND e.element_id IS NOT NULL
GROUP BY e.process_definition_key, e.element_id, e.key >> 51;
