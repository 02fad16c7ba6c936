-- ClickBench Q0 (PostgreSQL's text), a parser fixture.
SELECT COUNT(*) FROM hits;
