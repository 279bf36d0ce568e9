-- Variable value filters go through postings instead of an index entry per variable
-- (zest-history/src/postings.rs; docs/design/history.md, "What the writes cost"): one row per
-- hash of (name, value) and batch, naming the batch's process instances with that variable
-- value as offsets from `first_key` (a JSON list). The postings of the variables already here
-- are filled by the store when it opens, in chunks (`posting_fill` says how far it went; the
-- hash is the store's own, computed outside SQL).
DROP INDEX variable_by_value_hash;
CREATE TABLE variable_posting (
    -- first_key >> 16: a batch's postings go to the few pages of its bucket, not one page
    -- each across the whole table (a value of one instance, a business key, would otherwise
    -- write a page a variable); a filter seeks each bucket of posting_bucket
    bucket    INTEGER NOT NULL,
    hash      INTEGER NOT NULL,
    first_key INTEGER NOT NULL,
    keys      TEXT NOT NULL,
    PRIMARY KEY (bucket, hash, first_key)
) WITHOUT ROWID;
CREATE TABLE posting_bucket (bucket INTEGER PRIMARY KEY);
CREATE TABLE posting_fill (after_key INTEGER NOT NULL);
INSERT INTO posting_fill (after_key)
    SELECT -9223372036854775807 WHERE EXISTS (SELECT 1 FROM variable);
