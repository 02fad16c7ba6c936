-- env: CLINK_DISABLE_COLUMNAR=1
-- Every stage takes its row path; the first consumer of the born-columnar
-- scan materialises, and each decision names the switch.
EXPLAIN ANALYZE
SELECT cat, COUNT(*), SUM(i64)
FROM '../testdata/parquet/duckdb_types.parquet'
WHERE id > 100
GROUP BY cat;
