package sql

import (
	"errors"
	"strings"
	"testing"
)

// TestParseErrors pins the message, line and column of bad input: what
// was expected, what was found, and where.
func TestParseErrors(t *testing.T) {
	deep := "SELECT " + strings.Repeat("(", 1200) + "1" + strings.Repeat(")", 1200)
	cases := []struct {
		text      string
		line, col int
		msg       string
	}{
		// Missing or misplaced pieces.
		{"SELECT a FROM", 1, 14, "unexpected end of statement: expected a table, a quoted path, a subquery or TABLE(...) after FROM"},
		{"SELECT a FROM WHERE x = 1", 1, 15, "expected a table, a quoted path, a subquery or TABLE(...) after FROM, found WHERE"},
		{"SELECT (1 + 2", 1, 14, "unexpected end of statement: expected ')' to close '(' at line 1, column 8"},
		{"SELECT f(a,\n  b", 2, 4, "unexpected end of statement: expected ')' to close '(' at line 1, column 9"},
		{"SELECT a, FROM t", 1, 11, "expected an expression after ',', found FROM"},
		{"SELECT a,", 1, 10, "unexpected end of statement: expected an expression after ','"},
		{"SELECT FROM t", 1, 8, "expected an expression after SELECT, found FROM"},
		{"SELECT 1 + )", 1, 12, "expected an expression after '+', found ')'"},
		{"SELECT 1 + + + FROM t", 1, 16, "expected an expression after '+', found FROM"},
		{"SELECT a FROM t WHERE", 1, 22, "unexpected end of statement: expected an expression after WHERE"},
		{"SELECT a FROM t GROUP a", 1, 23, `expected BY after GROUP, found "a"`},
		{"SELECT a b c FROM t", 1, 12, `expected end of statement after "b", found "c"`},
		{"SELECT * FROM a JOIN b WHERE x", 1, 24, `expected ON or USING after "b", found WHERE`},
		{"SELECT * FROM t LEFT JOIN u", 1, 28, `unexpected end of statement: expected ON or USING after "u"`},
		{"SELECT CAST(a) FROM t", 1, 14, `expected AS after "a", found ')'`},
		{"SELECT CASE WHEN a THEN b", 1, 26, "unexpected end of statement: expected END to close CASE at line 1, column 8"},
		{"SELECT CASE a END", 1, 15, `expected WHEN after "a", found END`},
		{"SELECT COUNT(DISTINCT) FROM t", 1, 22, "expected an expression after DISTINCT, found ')'"},
		{"SELECT COUNT(*, a) FROM t", 1, 15, "expected ')' to close '(' at line 1, column 13, found ','"},
		{"WITH x AS SELECT 1 SELECT 1", 1, 11, "expected '(' and a query after AS, found SELECT"},
		{"SELECT 1 UNION", 1, 15, "unexpected end of statement: expected a query (SELECT, VALUES or a query in parentheses) after UNION"},
		{"SELECT x::", 1, 11, "unexpected end of statement: expected a type name after '::'"},
		{"SELECT ARRAY[1, 2", 1, 18, "unexpected end of statement: expected ']' to close '[' at line 1, column 13"},
		{"SELECT a) FROM t", 1, 9, "unexpected ')': no '(' is open here"},
		{"SELECT a FROM t; SELECT b FROM t", 1, 16, "only one statement is allowed here, found ';' before the end"},
		{"SELECT a\nFORM t", 2, 6, `expected end of statement after "FORM", found "t"`},
		{"", 0, 0, "empty statement"},
		{"  -- only a comment\n;", 0, 0, "empty statement"},
		{"FOO bar", 1, 1, "unknown statement FOO: expected SELECT, WITH, VALUES, INSERT, CREATE, DROP, EXPLAIN, SET, RESET, SHOW, DESCRIBE or EXECUTE STATEMENT SET"},
		{"UPDATE t SET a = 1", 1, 1, "UPDATE is not supported"},

		// Reserved words where a name is expected.
		{"SELECT * FROM select", 1, 15, "expected a table, a quoted path, a subquery or TABLE(...) after FROM, found SELECT"},
		{"SELECT a AS from FROM t", 1, 13, `expected an alias after AS, found FROM (a reserved word: write "from" to use it as a name)`},
		{"CREATE TABLE Order (a INT)", 1, 14, `expected a table name after TABLE, found ORDER (a reserved word: write "order" to use it as a name)`},
		{"SELECT t.select FROM t", 1, 10, `expected a name after '.', found SELECT (a reserved word: write "select" to use it as a name)`},

		// Operators.
		{"SELECT a < b = c < d", 1, 14, "comparison operators are non-associative"},
		{"SELECT a = b = c", 1, 14, "comparison operators are non-associative"},
		{"SELECT a IS NULL IS NULL", 1, 18, "IS is non-associative"},
		{"SELECT a LIKE b LIKE c", 1, 17, "BETWEEN, IN, LIKE and ILIKE are non-associative"},
		{"SELECT a IN (1) BETWEEN 1 AND 2", 1, 17, "BETWEEN, IN, LIKE and ILIKE are non-associative"},
		{"SELECT x IN t", 1, 13, `expected '(' (a list or a subquery) after IN, found "t"`},
		{"SELECT 1 FROM t WHERE a = ANY (1, 2)", 1, 31, "expected a subquery here: x = ANY (SELECT ...); for a list of values write x IN (...)"},
		{"SELECT EXISTS (1)", 1, 15, "expected a subquery here: EXISTS (SELECT ...)"},
		{"SELECT a.* + 1 FROM t", 1, 12, "expected end of statement after '*', found '+'"},
		{"SELECT db.f(x)", 1, 8, "qualified function names (db.f) are not supported"},
		{"SELECT x::int NOT NULL", 1, 15, "expected end of statement after INT, found NOT"},

		// Literals and the lexer.
		{"SELECT 'abc", 1, 8, "unterminated string literal: ' has no closing '"},
		{"SELECT E'abc\\'", 1, 8, "unterminated string literal: E' has no closing '"},
		{"SELECT \"abc", 1, 8, `unterminated quoted identifier: " has no closing "`},
		{"SELECT `abc", 1, 8, "unterminated quoted identifier: ` has no closing `"},
		{"SELECT 1 /* x", 1, 10, "unterminated comment: /* has no */"},
		{`SELECT "" FROM t`, 1, 8, "zero-length quoted identifier"},
		{`SELECT E'\u12'`, 1, 10, `invalid Unicode escape: \u needs 4 hex digits`},
		{"SELECT x'0a'", 1, 8, "binary string literals (x'...') are not supported"},
		{"SELECT ? FROM t", 1, 8, "placeholders (?) are not supported: write the value"},
		{"SELECT $1", 1, 8, "placeholders ($1) are not supported: write the value"},
		{"SELECT a FROM t WHERE b = 'é' AND é = #", 1, 39, "unexpected character '#'"},

		// INTERVAL.
		{"SELECT INTERVAL '1' FOO", 1, 21, "unknown interval unit FOO: expected YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND or MICROSECOND"},
		{"SELECT INTERVAL 3 FORTNIGHTS", 1, 19, "unknown interval unit FORTNIGHTS: expected YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND or MICROSECOND"},
		{"SELECT INTERVAL 'x' SECOND", 1, 17, "interval value 'x' is not a number"},
		{"SELECT INTERVAL '1' MONTH TO DAY", 1, 17, "INTERVAL MONTH TO DAY is not a valid range: use YEAR TO MONTH, DAY TO HOUR|MINUTE|SECOND, HOUR TO MINUTE|SECOND or MINUTE TO SECOND"},
		{"SELECT INTERVAL '1-2' DAY TO HOUR", 1, 17, "interval value '1-2' does not match DAY TO HOUR: write 'days hours', e.g. '1 02'"},
		{"SELECT INTERVAL '1 fortnight'", 1, 17, "interval value '1 fortnight': unknown unit 'fortnight'"},
		{"CREATE TABLE t (ts TIMESTAMP(3),\n WATERMARK FOR ts AS ts - INTERVAL '4' SECONDZ) WITH ('connector' = 'x')", 2, 40, "unknown interval unit SECONDZ: expected YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND or MICROSECOND"},

		// LIMIT, EXPLAIN, VALUES.
		{"SELECT 1 LIMIT 1, 2", 1, 10, "LIMIT 1, 2 is MySQL's syntax: write LIMIT 2 OFFSET 1"},
		{"SELECT 1 OFFSET 1 OFFSET 2", 1, 19, "OFFSET given twice"},
		{"SELECT 1 LIMIT 1 FETCH FIRST 2 ROWS ONLY", 1, 18, "LIMIT given twice (FETCH FIRST is a LIMIT)"},
		{"EXPLAIN EXPLAIN SELECT 1", 1, 9, "EXPLAIN cannot explain EXPLAIN"},
		{"EXPLAIN (FORMAT JSON SELECT 1", 1, 22, "expected ',' or ')' after JSON, found SELECT"},
		{"EXPLAIN (ANALYZE maybe) SELECT 1", 1, 18, `expected TRUE or FALSE for ANALYZE after ANALYZE, found "maybe"`},
		{"EXPLAIN (DURATION '1s', DURATION '2s') SELECT 1", 1, 25, "EXPLAIN option DURATION given twice"},
		{"VALUES (1, 2), (3)", 1, 16, "VALUES rows must have the same number of values: row 2 has 1, row 1 has 2"},

		// FROM.
		{"SELECT * FROM (t) AS x", 1, 19, "a parenthesised FROM item takes no alias: alias the tables inside it"},
		{"SELECT * FROM t NATURAL CROSS JOIN u", 1, 25, "NATURAL CROSS JOIN is not a join: write CROSS JOIN or NATURAL JOIN"},
		{"SELECT * FROM TABLE(t)", 1, 21, `expected a function call in TABLE(...), such as TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE), found "t"`},

		// DDL and the other statements.
		{"CREATE TABLE t (a INT, b FOO) WITH ('connector' = 'x')", 1, 26, "unsupported type FOO"},
		{"CREATE TABLE t (\n  a INT,\n  a BIGINT\n)", 3, 3, `duplicate column "a"`},
		{"CREATE TABLE t (a INT, WATERMARK FOR b AS b)", 1, 38, `WATERMARK FOR "b": no such column`},
		{"CREATE TABLE t (a INT PRIMARY KEY, PRIMARY KEY (a))", 1, 36, "only one PRIMARY KEY is allowed"},
		{"CREATE TABLE t (a INT) WITH ('k' = 'v', 'k' = 'w')", 1, 41, "option 'k' given twice"},
		{"CREATE TABLE t (a INT) WITH (k = 'v')", 1, 30, `expected a quoted option name after '(', found "k"`},
		{"CREATE TABLE t ()", 1, 17, "expected a column name after '(', found ')'"},
		{"CREATE TABLE t (a INT VIRTUAL)", 1, 23, "VIRTUAL belongs to a METADATA column: col type METADATA [FROM 'key'] VIRTUAL"},
		{"CREATE FUNCTION f AS 'x'", 1, 8, "CREATE FUNCTION is not supported: user-defined functions are not available"},
		{"CREATE OR REPLACE TABLE t (a INT)", 1, 1, "CREATE OR REPLACE TABLE is not supported: DROP the table first"},
		{"SHOW DATABASES", 1, 6, `expected TABLES, VIEWS, FUNCTIONS, CONNECTORS, COLUMNS FROM or CREATE TABLE|VIEW after SHOW, found "DATABASES"`},
		{"SET 'a' 'b'", 1, 9, "expected '=' or TO after 'a', found 'b'"},
		{"SET a =", 1, 8, "unexpected end of statement: expected a value after '='"},
		{"SET a = b; SELECT 1", 1, 10, "only one statement is allowed here, found ';' before the end"},
		{"DESCRIBE", 1, 9, "unexpected end of statement: expected a table or view name, a quoted path or a query after DESCRIBE"},
		{"DESCRIBE a b", 1, 12, `expected end of statement after "a", found "b"`},
		{"INSERT t SELECT 1", 1, 8, `expected INTO or OVERWRITE after INSERT, found "t"`},
		{"EXECUTE STATEMENT SET BEGIN SELECT 1; END", 1, 29, "expected INSERT or END after BEGIN, found SELECT"},

		// Nesting.
		// The query and the select item are two levels, each '(', '-' or
		// NOT one more: the 1001st level starts at the 1000th of them.
		{deep, 1, 8 + 999, "expression nested too deeply (more than 1000 levels)"},
		{"SELECT " + strings.Repeat("- ", 5000) + "1", 1, 8 + 2*999, "expression nested too deeply (more than 1000 levels)"},
		{"SELECT " + strings.Repeat("NOT ", 5000) + "1", 1, 8 + 4*999, "expression nested too deeply (more than 1000 levels)"},
		// Each subquery is a level: the 1001st starts after 1000 of them.
		{strings.Repeat("SELECT * FROM (", 2000) + "SELECT 1", 1, 1 + 15*1000, "expression nested too deeply (more than 1000 levels)"},
		// Each type is a level, under the query and the CAST: the 999th
		// ARRAY is the 1001st level.
		{"SELECT CAST(x AS " + strings.Repeat("ARRAY<", 2000) + "INT", 1, 18 + 6*998, "expression nested too deeply (more than 1000 levels)"},
		{"SELECT * FROM " + strings.Repeat("(", 3000) + "t", 1, 15 + 999, "expression nested too deeply (more than 1000 levels)"},
	}
	for _, c := range cases {
		_, err := Parse(c.text)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%.60q) error = %v, want an *Error", c.text, err)
			continue
		}
		if pe.Line != c.line || pe.Column != c.col || pe.Msg != c.msg {
			t.Errorf("Parse(%.60q)\n got  line %d column %d: %s\n want line %d column %d: %s", c.text, pe.Line, pe.Column, pe.Msg, c.line, c.col, c.msg)
		}
		if pe.Line > 0 {
			if l, col := lineCol(c.text, pe.Offset); l != pe.Line || col != pe.Column {
				t.Errorf("Parse(%.60q): Offset %d is line %d column %d, not %d:%d", c.text, pe.Offset, l, col, pe.Line, pe.Column)
			}
		}
	}
}

func TestErrorAt(t *testing.T) {
	text := "SELECT a,\n  é, bad\nFROM t"
	e := ErrorAt(text, strings.Index(text, "bad"), "column 'bad' not found")
	if e.Line != 2 || e.Column != 6 || e.Offset != 16 {
		t.Errorf("ErrorAt = %+v, want line 2 column 6 offset 16", e)
	}
	if got, want := e.Error(), "line 2, column 6: column 'bad' not found"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := (&Error{Msg: "m"}).Error(); got != "m" {
		t.Errorf("Error() without a position = %q", got)
	}
}

func TestParseExprErrors(t *testing.T) {
	for _, bad := range []string{"", "a FROM t", "a AS b", "a, b", "a +", "SELECT 1"} {
		if _, err := ParseExpr(bad); err == nil {
			t.Errorf("ParseExpr(%q) accepted", bad)
		}
	}
}

// TestRecoverInternal: a bug that panics inside the parser comes out as
// an *Error, not a crash of the session.
func TestRecoverInternal(t *testing.T) {
	_, err := run("SELECT 1", func(p *parser) int {
		var m map[string]int
		m["x"] = 1 // a bug: assignment to a nil map
		return 0
	})
	var pe *Error
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Msg, "internal error in the SQL parser: ") {
		t.Errorf("error = %#v, want an internal *Error", err)
	}
}
