-- ClickBench Q26 (PostgreSQL's text), a parser fixture.
SELECT SearchPhrase FROM hits WHERE SearchPhrase <> '' ORDER BY EventTime, SearchPhrase LIMIT 10;
