-- ClickBench Q2 (PostgreSQL's text), a parser fixture.
SELECT SUM(AdvEngineID), COUNT(*), AVG(ResolutionWidth) FROM hits;
