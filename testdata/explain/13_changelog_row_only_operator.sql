-- A real row-only operator: GROUP BY over an unbounded input is a changelog
-- (UpdatingAggregate), row form by construction (changelog-output). Its
-- input batches arrive columnar and are materialised at exactly that stage;
-- nothing before it materialises. LIMIT ends the unbounded run.
CREATE TABLE bids WITH ('connector' = 'nexmark', 'table' = 'bid');
EXPLAIN ANALYZE
SELECT channel, COUNT(*) AS n FROM bids WHERE price > 1000 GROUP BY channel LIMIT 20;
