-- ClickBench Q19 (PostgreSQL's text), a parser fixture.
SELECT UserID FROM hits WHERE UserID = 435090932899640449;
