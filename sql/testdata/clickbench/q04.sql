-- ClickBench Q4 (PostgreSQL's text), a parser fixture.
SELECT COUNT(DISTINCT UserID) FROM hits;
