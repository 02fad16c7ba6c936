-- EXPLAIN without ANALYZE: the plan only. The Parquet scan uses the pushed
-- predicate to skip row groups (duckdb_groups.parquet has 4).
EXPLAIN
SELECT id, v FROM '../testdata/parquet/duckdb_groups.parquet' WHERE id >= 5000;
