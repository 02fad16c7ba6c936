-- ClickBench Q34 (PostgreSQL's text), a parser fixture.
SELECT 1, URL, COUNT(*) AS c FROM hits GROUP BY 1, URL ORDER BY c DESC LIMIT 10;
