-- ClickBench Q3 (PostgreSQL's text), a parser fixture.
SELECT AVG(UserID) FROM hits;
