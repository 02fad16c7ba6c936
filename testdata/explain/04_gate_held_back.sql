-- sink: row-only
-- The aggregate could emit born columnar, but its consumer ingests rows:
-- the gate holds its output back to rows and names the consumer.
EXPLAIN ANALYZE
SELECT cat, COUNT(*) FROM '../testdata/parquet/duckdb_types.parquet' GROUP BY cat;
