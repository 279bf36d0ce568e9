-- Variable value filters (`variables: [{name, value}]` of the process instance search) find
-- their variables through an index on a 64-bit hash of (name, value) instead of one on the
-- text of both: an insert in the middle of an index of texts (a value shared by many
-- instances, or a new one) costs a text comparison per level and splits pages; an integer key
-- is compared once and its page holds several times more entries. Measured with the store
-- alone (export_rate, one-task with 30 variables): the (name, value) index was 40 % of the
-- write cost, an integer index half of that. `zest_value_hash` is registered on every
-- connection the store opens (db.rs); creating the index hashes the rows already here.
DROP INDEX variable_by_name_value;
CREATE INDEX variable_by_value_hash ON variable (zest_value_hash(name, value));
