-- ClickBench Q5 (PostgreSQL's text), a parser fixture.
SELECT COUNT(DISTINCT SearchPhrase) FROM hits;
