-- ClickBench Q17 (PostgreSQL's text), a parser fixture.
SELECT UserID, SearchPhrase, COUNT(*) FROM hits GROUP BY UserID, SearchPhrase LIMIT 10;
