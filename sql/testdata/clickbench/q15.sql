-- ClickBench Q15 (PostgreSQL's text), a parser fixture.
SELECT UserID, COUNT(*) FROM hits GROUP BY UserID ORDER BY COUNT(*) DESC LIMIT 10;
