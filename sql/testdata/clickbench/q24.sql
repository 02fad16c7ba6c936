-- ClickBench Q24 (PostgreSQL's text), a parser fixture.
SELECT SearchPhrase FROM hits WHERE SearchPhrase <> '' ORDER BY EventTime LIMIT 10;
