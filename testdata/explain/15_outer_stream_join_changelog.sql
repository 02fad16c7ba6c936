-- An outer join of two streams is a changelog: a row without a match comes
-- out padded with NULLs (+I) and is retracted (-D) when its match arrives.
-- Row form by construction: the join's gate says changelog-output, and the
-- row kind is the first output column.
SET 'execution.runtime-mode' = 'streaming';
EXPLAIN VERBOSE
SELECT o.i64, p.cat FROM '../testdata/parquet/duckdb_types.parquet' o
LEFT JOIN '../testdata/parquet/duckdb_types.parquet' p ON o.i64 = p.i64;
