-- An unbounded nexmark source stopped by LIMIT. The nexmark source ignores
-- pushed filters, so no row-group skipping is claimed for it.
CREATE TABLE bids WITH ('connector' = 'nexmark', 'table' = 'bid');
EXPLAIN ANALYZE
SELECT auction, price FROM bids WHERE price > 1000 LIMIT 5;
