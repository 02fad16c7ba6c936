-- testdata/parquet/duckdb_times.parquet, written by DuckDB:
--   COPY (<this query>) TO 'duckdb_times.parquet' (FORMAT parquet, ROW_GROUP_SIZE 16)
-- TIME is stored as INT64 TIME(MICROS); every value of t appears twice.
SELECT
  i::INTEGER AS id,
  'g' || (i % 4) AS grp,
  CASE WHEN i % 9 = 0 THEN NULL ELSE make_time((i % 5) * 5, (i % 3) * 20, (i % 2) * 30.5) END AS t,
  CASE WHEN i % 11 = 0 THEN NULL ELSE ((i % 7) * 1.5 - 2)::DOUBLE END AS v,
  CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 37 % 100 - 50)::INTEGER END AS n,
  CASE WHEN i % 10 = 0 THEN NULL ELSE i % 3 <> 0 END AS b,
  CASE WHEN i % 8 = 0 THEN NULL ELSE CAST(((i * 7919) % 10000 - 5000) / 100.0 AS DECIMAL(8, 2)) END AS d,
  TIMESTAMP '2024-01-01 00:00:00' + to_seconds(i * 7) AS ts
FROM range(60) t(i)
