SET 'columnar.output' = 'off';
EXPLAIN ANALYZE
SELECT cat, COUNT(*) FROM '../testdata/parquet/duckdb_types.parquet' GROUP BY cat;
