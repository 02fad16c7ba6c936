-- ClickBench Q25 (PostgreSQL's text), a parser fixture.
SELECT SearchPhrase FROM hits WHERE SearchPhrase <> '' ORDER BY SearchPhrase LIMIT 10;
