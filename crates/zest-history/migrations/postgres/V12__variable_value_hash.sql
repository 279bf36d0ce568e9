-- Variable value filters find their variables through an index on a 64-bit hash of (name,
-- value) instead of one on their text (see the SQLite migration V12 for why). SQLite's
-- `zest_value_hash` is a function Zest registers on its connections; here it is PostgreSQL's
-- own text hash, so the store computes it on both sides of the comparison.
CREATE FUNCTION zest_value_hash(n TEXT, v TEXT) RETURNS BIGINT AS $$
    SELECT hashtextextended(n || chr(1) || v, 0)
$$ LANGUAGE sql IMMUTABLE PARALLEL SAFE;

DROP INDEX variable_by_name_value;
CREATE INDEX variable_by_value_hash ON variable (zest_value_hash(name, value));
