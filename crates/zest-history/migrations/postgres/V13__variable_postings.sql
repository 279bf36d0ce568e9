-- Variable value filters go through postings instead of an index entry per variable (see the
-- SQLite migration V13): the store fills the postings of the variables already here when it
-- opens, with its own hash (PostgreSQL's `zest_value_hash` is no longer used).
DROP INDEX variable_by_value_hash;
DROP FUNCTION zest_value_hash(TEXT, TEXT);
CREATE TABLE variable_posting (
    -- first_key >> 16: a batch's postings go to the few pages of its bucket, not one page
    -- each across the whole table (a value of one instance, a business key, would otherwise
    -- write a page a variable); a filter seeks each bucket of posting_bucket
    bucket    BIGINT NOT NULL,
    hash      BIGINT NOT NULL,
    first_key BIGINT NOT NULL,
    keys      TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (bucket, hash, first_key)
);
CREATE TABLE posting_bucket (bucket BIGINT PRIMARY KEY);
CREATE TABLE posting_fill (after_key BIGINT NOT NULL);
INSERT INTO posting_fill (after_key)
    SELECT -9223372036854775807 WHERE EXISTS (SELECT 1 FROM variable);
