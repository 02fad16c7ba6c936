-- Nexmark q7's shape: the interval condition in WHERE bounds the streaming
-- join's state by event time (right.dateTime - left.dateTime in [0s, 10s]),
-- so held rows expire with the watermark; the join is append only and
-- emits born columnar.
CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,
  `dateTime` TIMESTAMP(3), extra VARCHAR, WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND)
  WITH ('connector' = 'nexmark', 'table' = 'bid');
EXPLAIN
SELECT B.auction, B.price, B.bidder, B.`dateTime`
FROM bids B JOIN (
  SELECT MAX(price) AS maxprice, window_end AS `dateTime`
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end) B1
ON B.price = B1.maxprice
WHERE B.`dateTime` BETWEEN B1.`dateTime` - INTERVAL '10' SECOND AND B1.`dateTime`;
