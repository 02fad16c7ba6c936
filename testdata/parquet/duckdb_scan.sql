-- duckdb_scan.parquet: written by DuckDB (duckpeer) for the scan pushdown
-- tests (late materialisation, dictionary pruning): 10000 rows in row
-- groups of 2048; grp's values differ per row group (dictionary-encoded),
-- s is dictionary-encoded text with NULLs, u is unique text.
COPY (
  SELECT
    i::BIGINT AS id,
    'g' || (i // 2048) || '_' || (i % 3) AS grp,
    CASE WHEN i % 9 = 0 THEN NULL ELSE 'w' || (i % 13) END AS s,
    'u' || lpad(i::VARCHAR, 6, '0') || repeat('x', i % 17) AS u,
    CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 37 % 1000)::INTEGER END AS v,
    i * 0.5 - 100 AS x,
    (i % 4 = 0) AS flag
  FROM range(10000) t(i)
) TO 'testdata/parquet/duckdb_scan.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048);
