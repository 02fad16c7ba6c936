-- The session switch: the reason names SET, not the environment.
SET 'columnar' = 'off';
EXPLAIN ANALYZE
SELECT cat, COUNT(*) FROM '../testdata/parquet/duckdb_types.parquet' GROUP BY cat;
