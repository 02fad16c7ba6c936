-- A continuous top-n: ORDER BY ... LIMIT over an unbounded input is an
-- UpdatingTopN, one global instance whose changelog (-D, +I) is row form by
-- construction (changelog-output); its input is materialised at exactly
-- that stage. No Limit stage follows it: the top-n is the limit. The outer
-- LIMIT ends the unbounded run after 10 changes.
CREATE TABLE bids WITH ('connector' = 'nexmark', 'table' = 'bid');
EXPLAIN ANALYZE
SELECT * FROM (SELECT auction, price FROM bids WHERE price > 1000 ORDER BY price DESC LIMIT 3) t LIMIT 10;
