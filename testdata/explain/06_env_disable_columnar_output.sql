-- env: CLINK_DISABLE_COLUMNAR_OUTPUT=1
-- Operators still ingest columnar, but none builds born-columnar output.
EXPLAIN ANALYZE
SELECT cat, COUNT(*), SUM(i64)
FROM '../testdata/parquet/duckdb_types.parquet'
WHERE id > 100
GROUP BY cat;
