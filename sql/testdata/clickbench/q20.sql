-- ClickBench Q20 (PostgreSQL's text), a parser fixture.
SELECT COUNT(*) FROM hits WHERE URL LIKE '%google%';
