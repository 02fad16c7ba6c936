-- ClickBench Q6 (PostgreSQL's text), a parser fixture.
SELECT MIN(EventDate), MAX(EventDate) FROM hits;
