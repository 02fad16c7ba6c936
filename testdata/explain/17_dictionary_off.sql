-- The A/B switch for dictionary codes: the scan hands out plain strings
-- and EXPLAIN names the switch (01 shows the same chain with codes).
SET 'columnar.dictionary' = 'off';
EXPLAIN ANALYZE
SELECT cat, COUNT(*), SUM(i64) FROM '../testdata/parquet/duckdb_types.parquet' WHERE id > 100 GROUP BY cat;
