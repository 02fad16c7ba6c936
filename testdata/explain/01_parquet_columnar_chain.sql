-- A pure columnar chain over Parquet: scan, filter, project, aggregate and
-- result sink all take the columnar path; nothing is materialised.
EXPLAIN ANALYZE
SELECT cat, COUNT(*), SUM(i64)
FROM '../testdata/parquet/duckdb_types.parquet'
WHERE id > 100
GROUP BY cat;
