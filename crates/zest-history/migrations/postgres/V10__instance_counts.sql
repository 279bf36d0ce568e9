-- The process instances per definition, state and partition, kept as history is written
-- (zest-history/src/counts.rs): the exact totals of the searches by process and state without
-- counting rows. Filled here from the rows a store already holds.

CREATE TABLE instance_count (
    process_definition_key BIGINT NOT NULL,
    bpmn_process_id        TEXT COLLATE "C" NOT NULL,
    state                  TEXT COLLATE "C" NOT NULL,
    partition_id           BIGINT NOT NULL,
    n                      BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (process_definition_key, state, partition_id)
);

INSERT INTO instance_count
SELECT t.process_definition_key, COALESCE(MIN(t.bpmn_process_id), ''), t.state, t.key >> 51,
       COUNT(*)
FROM process_instance t
WHERE t.process_definition_key IS NOT NULL AND t.state IS NOT NULL
GROUP BY t.process_definition_key, t.state, t.key >> 51;
