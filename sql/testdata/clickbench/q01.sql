-- ClickBench Q1 (PostgreSQL's text), a parser fixture.
SELECT COUNT(*) FROM hits WHERE AdvEngineID <> 0;
