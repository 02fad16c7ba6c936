-- Two subtasks scan one Parquet table by taking row ranges (whole row
-- groups here: they are small) from one queue as they finish.
SET 'parallelism' = '2';
EXPLAIN SELECT id % 7 AS k, COUNT(*) FROM '../testdata/parquet/duckdb_groups.parquet' GROUP BY id % 7;
