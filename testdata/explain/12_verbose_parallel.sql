-- VERBOSE: operator kinds, columnar-path counts, watermarks, operators' own
-- counters, filters a source was offered but does not use; two subtasks.
-- Fixed splits: with the shared range queue, which subtask reads which row
-- group (and so the batch counts) changes from run to run.
SET 'parallelism' = '2';
SET 'parallelism.shared-ranges' = 'off';
CREATE TABLE t WITH ('connector' = 'filesystem', 'format' = 'parquet', 'path' = '../testdata/parquet/duckdb_groups.parquet');
EXPLAIN (VERBOSE) ANALYZE
SELECT a.id, COUNT(*) FROM t a JOIN t b ON a.id = b.id WHERE a.id < 5000 GROUP BY a.id ORDER BY a.id LIMIT 3;
