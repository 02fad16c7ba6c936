-- A hash join whose probe side (a selective subquery over bids) brings a
-- handful of rows per batch: after 4 small born-columnar emissions the
-- damper backs off and holds the rest back to rows (re-probing every 64th).
CREATE TABLE bids WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '200000');
CREATE TABLE auctions WITH ('connector' = 'nexmark', 'table' = 'auction', 'events.num' = '200000');
EXPLAIN ANALYZE
SELECT b.auction, b.price, a.seller
FROM (SELECT auction, price FROM bids WHERE price % 1000 = 7) b JOIN auctions a ON b.auction = a.id;
