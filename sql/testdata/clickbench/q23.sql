-- ClickBench Q23 (PostgreSQL's text), a parser fixture.
SELECT * FROM hits WHERE URL LIKE '%google%' ORDER BY EventTime LIMIT 10;
