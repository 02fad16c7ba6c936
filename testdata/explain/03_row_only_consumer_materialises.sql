-- sink: row-only
-- The consumer is a row-only operator (a test-only sink: clink has no
-- row-only SQL operator yet). The columnar chain stays columnar up to it,
-- and the one materialisation is counted at exactly that stage.
EXPLAIN ANALYZE
SELECT id, s FROM '../testdata/parquet/duckdb_types.parquet' WHERE id < 10;
