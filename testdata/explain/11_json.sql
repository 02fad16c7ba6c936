-- The document behind the text, as FORMAT JSON gives it.
EXPLAIN ANALYZE (FORMAT JSON)
SELECT cat, COUNT(*) FROM '../testdata/parquet/duckdb_types.parquet' WHERE id > 100 GROUP BY cat;
