-- Each variable row was inserted into four indexes besides the table: with the typical payload
-- (30 variables) that was most of an instance's export cost. Retention now reaches a root's
-- variables through its instances (`variable_by_instance`), so the index by root goes.
DROP INDEX variable_by_root;
