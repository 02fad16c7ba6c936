package sql

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/xwb1989/sqlparser"
)

func mustParse(t *testing.T, text string) Statement {
	t.Helper()
	st, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return st
}

// queryString parses text as a query and renders sqlparser's AST.
func queryString(t *testing.T, text string) string {
	t.Helper()
	q, ok := mustParse(t, text).(*Query)
	if !ok {
		t.Fatalf("Parse(%q) is not a *Query", text)
	}
	return sqlparser.String(q.AST)
}

func TestParseStatements(t *testing.T) {
	cases := []struct {
		text string
		want Statement
	}{
		{"DROP TABLE t", &Drop{Kind: "TABLE", Name: "t"}},
		{"drop view if exists `My View`;", &Drop{Kind: "VIEW", Name: "My View", IfExists: true}},
		{"DROP TEMPORARY VIEW v", &Drop{Kind: "VIEW", Name: "v"}},
		{"SET", &Set{}},
		{"SET 'parallelism' = '4'", &Set{Key: "parallelism", Value: "4"}},
		{"SET parallelism = 4", &Set{Key: "parallelism", Value: "4"}},
		{"SET table.exec.mini-batch.enabled TO true;", &Set{Key: "table.exec.mini-batch.enabled", Value: "true"}},
		{"SET 'sql-client.execution.result-mode' = tableau", &Set{Key: "sql-client.execution.result-mode", Value: "tableau"}},
		{"SET 'a.b' = 'it''s'", &Set{Key: "a.b", Value: "it's"}},
		{"RESET", &Reset{}},
		{"RESET 'parallelism'", &Reset{Key: "parallelism"}},
		{"reset parallelism", &Reset{Key: "parallelism"}},
		{"SHOW TABLES", &Show{What: "TABLES"}},
		{"show views;", &Show{What: "VIEWS"}},
		{"SHOW FUNCTIONS", &Show{What: "FUNCTIONS"}},
		{"SHOW CONNECTORS", &Show{What: "CONNECTORS"}},
		{"SHOW CREATE TABLE bid", &Show{What: "CREATE TABLE", Name: "bid"}},
		{"SHOW CREATE VIEW `bid`", &Show{What: "CREATE VIEW", Name: "bid"}},
		{"DESCRIBE bid", &Describe{Name: "bid"}},
		{"desc `dateTime`", &Describe{Name: "dateTime"}},
		{"DESC db.t", &Describe{Name: "db.t"}},
	}
	for _, c := range cases {
		got := mustParse(t, c.text)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %#v, want %#v", c.text, got, c.want)
		}
	}
}

func TestParseCreateTable(t *testing.T) {
	text := `CREATE TABLE IF NOT EXISTS kafka_bid (
    auction BIGINT NOT NULL,
    price DECIMAL(23, 3),
    ` + "`dateTime`" + ` TIMESTAMP(3),
    tags ARRAY<VARCHAR>,
    attrs MAP<STRING, INT>,
    part INT METADATA FROM 'partition' VIRTUAL,
    ts TIMESTAMP_LTZ(3) METADATA,
    day_str AS DATE_FORMAT(` + "`dateTime`" + `, 'yyyy-MM-dd'),
    PRIMARY KEY (auction) NOT ENFORCED,
    WATERMARK FOR ` + "`dateTime`" + ` AS ` + "`dateTime`" + ` - INTERVAL '4' SECOND
) COMMENT 'bids' WITH (
    'connector' = 'kafka',
    'topic' = 'bids',
    'scan.parallelism' = 2
);`
	ct, ok := mustParse(t, text).(*CreateTable)
	if !ok {
		t.Fatalf("not a CreateTable")
	}
	if ct.Name != "kafka_bid" || !ct.IfNotExists {
		t.Errorf("name %q ifNotExists %v", ct.Name, ct.IfNotExists)
	}
	want := []ColumnDef{
		{Name: "auction", Type: arrow.PrimitiveTypes.Int64, NotNull: true},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 23, Scale: 3}},
		{Name: "dateTime", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String)},
		{Name: "attrs", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)},
		{Name: "part", Type: arrow.PrimitiveTypes.Int32, Metadata: "partition"},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Metadata: "ts"},
		{Name: "day_str", Computed: "DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')"},
	}
	if len(ct.Columns) != len(want) {
		t.Fatalf("got %d columns, want %d: %+v", len(ct.Columns), len(want), ct.Columns)
	}
	for i, w := range want {
		g := ct.Columns[i]
		if g.Name != w.Name || g.NotNull != w.NotNull || g.Computed != w.Computed || g.Metadata != w.Metadata {
			t.Errorf("column %d = %+v, want %+v", i, g, w)
		}
		if (g.Type == nil) != (w.Type == nil) || (g.Type != nil && !arrow.TypeEqual(g.Type, w.Type)) {
			t.Errorf("column %s type = %v, want %v", w.Name, g.Type, w.Type)
		}
	}
	if ct.Watermark == nil || ct.Watermark.Column != "dateTime" || ct.Watermark.Expr != "`dateTime` - INTERVAL '4' SECOND" {
		t.Errorf("watermark = %+v", ct.Watermark)
	}
	wantOpts := map[string]string{"connector": "kafka", "topic": "bids", "scan.parallelism": "2"}
	if !reflect.DeepEqual(ct.Options, wantOpts) {
		t.Errorf("options = %v, want %v", ct.Options, wantOpts)
	}
	// The computed and watermark expressions are dialect expressions.
	e, err := ParseExpr(ct.Watermark.Expr)
	if err != nil {
		t.Fatal(err)
	}
	if got := sqlparser.String(e); got != "`dateTime` - __clink_interval('4', 'SECOND')" {
		t.Errorf("watermark expr = %s", got)
	}
}

func TestParseCreateTableWithoutColumns(t *testing.T) {
	ct := mustParse(t, "CREATE TEMPORARY TABLE b WITH ('connector' = 'parquet', 'path' = 'testdata/*.parquet')").(*CreateTable)
	if ct.Columns != nil || ct.Options["path"] != "testdata/*.parquet" || ct.Watermark != nil {
		t.Errorf("got %+v", ct)
	}
}

func TestParseCreateView(t *testing.T) {
	cv := mustParse(t, "CREATE TEMPORARY VIEW IF NOT EXISTS v AS SELECT a FROM t WHERE a > 1;").(*CreateView)
	if cv.Name != "v" || !cv.IfNotExists || cv.Query == nil {
		t.Fatalf("got %+v", cv)
	}
	if got := sqlparser.String(cv.Query.AST); got != "select a from t where a > 1" {
		t.Errorf("view query = %s", got)
	}
	if cv.Query.Text != "SELECT a FROM t WHERE a > 1" {
		t.Errorf("view text = %q", cv.Query.Text)
	}
}

func TestParseInsert(t *testing.T) {
	ins := mustParse(t, "INSERT INTO sink SELECT a, CAST(b AS BIGINT) FROM 'x.parquet'").(*Insert)
	if ins.Table != "sink" {
		t.Errorf("table %q", ins.Table)
	}
	if got := sqlparser.String(ins.Query.AST); got != "select a, __clink_cast(b, 'BIGINT') from `__clink_path:x.parquet`" {
		t.Errorf("query = %s", got)
	}
	if ins.Query.Text != "SELECT a, CAST(b AS BIGINT) FROM 'x.parquet'" {
		t.Errorf("text = %q", ins.Query.Text)
	}
}

func TestParseExplain(t *testing.T) {
	cases := []struct {
		text    string
		analyze bool
		opts    map[string]string
		inner   string // type of the explained statement
	}{
		{"EXPLAIN SELECT 1", false, map[string]string{}, "*sql.Query"},
		{"EXPLAIN ANALYZE SELECT a FROM t", true, map[string]string{}, "*sql.Query"},
		{"EXPLAIN ANALYZE VERBOSE SELECT a FROM t", true, map[string]string{"VERBOSE": "true"}, "*sql.Query"},
		{"EXPLAIN (ANALYZE, FORMAT JSON) SELECT a FROM t", true, map[string]string{"FORMAT": "JSON"}, "*sql.Query"},
		{"explain analyze (format json, verbose, duration '5s') select a from t", true,
			map[string]string{"FORMAT": "JSON", "VERBOSE": "true", "DURATION": "5s"}, "*sql.Query"},
		{"EXPLAIN (ANALYZE false) SELECT 1", false, map[string]string{}, "*sql.Query"},
		{"EXPLAIN FORMAT JSON SELECT 1", false, map[string]string{"FORMAT": "JSON"}, "*sql.Query"},
		{"EXPLAIN PLAN FOR SELECT 1", false, map[string]string{}, "*sql.Query"},
		{"EXPLAIN (SELECT 1)", false, map[string]string{}, "*sql.Query"},
		{"EXPLAIN INSERT INTO s SELECT a FROM t", false, map[string]string{}, "*sql.Insert"},
	}
	for _, c := range cases {
		ex, ok := mustParse(t, c.text).(*Explain)
		if !ok {
			t.Fatalf("%q: not an Explain", c.text)
		}
		if ex.Analyze != c.analyze || !reflect.DeepEqual(ex.Options, c.opts) {
			t.Errorf("%q: analyze=%v options=%v, want %v %v", c.text, ex.Analyze, ex.Options, c.analyze, c.opts)
		}
		if got := reflect.TypeOf(ex.Stmt).String(); got != c.inner {
			t.Errorf("%q: explained %s, want %s", c.text, got, c.inner)
		}
	}
}

func TestParseQueries(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SELECT a FROM t WHERE b = TRUE AND c IS NOT NULL AND d IS NULL",
			"select a from t where b = true and c is not null and d is null"},
		{"SELECT a FROM t WHERE b BETWEEN 1 AND 2 AND c IN (1, 2) AND d LIKE 'x%' AND e NOT LIKE 'y' AND f = FALSE",
			"select a from t where b between 1 and 2 and c in (1, 2) and d like 'x%' and e not like 'y' and f = false"},
		{"SELECT CASE WHEN a = 1 THEN 'x' ELSE 'y' END, a % 3, MOD(a, 3) FROM t",
			"select case when a = 1 then 'x' else 'y' end, a % 3, mod(a, 3) from t"},
		{"SELECT substring(s, 1, 2), SUBSTRING(s FROM 1 FOR 2) FROM t",
			"select substr(s, 1, 2), substr(s, 1, 2) from t"},
		{"SELECT a FROM t UNION ALL SELECT b FROM u", "select a from t union all select b from u"},
		{"SELECT s.a FROM (SELECT a FROM t) AS s", "select s.a from (select a from t) as s"},
		{"SELECT * FROM 'data/bid.parquet'", "select * from `__clink_path:data/bid.parquet`"},
		{"SELECT * FROM 'data/*.parquet' b JOIN 'it''s.parquet' AS c ON b.x = c.x, 'd.parquet'",
			"select * from `__clink_path:data/*.parquet` as b join `__clink_path:it's.parquet` as c on b.x = c.x, `__clink_path:d.parquet`"},
		{"SELECT CAST(a AS BIGINT), CAST(b AS DECIMAL(10,2)), cast(c as timestamp(3)), CAST(d AS ROW<x INT, `y` VARCHAR>) FROM t",
			"select __clink_cast(a, 'BIGINT'), __clink_cast(b, 'DECIMAL(10, 2)'), __clink_cast(c, 'TIMESTAMP(3)'), __clink_cast(d, 'ROW<`x` INT, `y` VARCHAR>') from t"},
		{"SELECT CAST(CAST(a AS INT) + 1 AS VARCHAR), upper(CAST(b AS STRING)) FROM t",
			"select __clink_cast(__clink_cast(a, 'INT') + 1, 'VARCHAR'), upper(__clink_cast(b, 'VARCHAR')) from t"},
		{"SELECT a || b, 'x' || CAST(c AS VARCHAR) || upper(d) FROM t WHERE e || f = 'ab'",
			"select concat(a, b), concat('x', __clink_cast(c, 'VARCHAR'), upper(d)) from t where concat(e, f) = 'ab'"},
		{"SELECT CASE WHEN a THEN b || 'x' ELSE (c || d) END || t.e FROM t",
			"select concat(case when a then concat(b, 'x') else (concat(c, d)) end, t.e) from t"},
		{"SELECT a FROM t WHERE ts > ts2 - INTERVAL '4' SECOND AND x < INTERVAL '1.5' minute + INTERVAL 10 MILLISECOND",
			"select a from t where ts > ts2 - __clink_interval('4', 'SECOND') and x < __clink_interval('1.5', 'MINUTE') + __clink_interval('10', 'MILLISECOND')"},
		{"SELECT a FROM t WHERE ts >= TIMESTAMP '2020-01-01 00:00:00' AND d = DATE '2020-01-01'",
			"select a from t where ts >= __clink_cast('2020-01-01 00:00:00', 'TIMESTAMP(6)') and d = __clink_cast('2020-01-01', 'DATE')"},
		{"SELECT count(*) FILTER (WHERE a > 1), COUNT(DISTINCT b) filter (where c IN (1, 2)) FROM t",
			"select __clink_filter(count(*), a > 1), __clink_filter(COUNT(distinct b), c in (1, 2)) from t"},
		{"WITH x AS (SELECT a FROM t), y AS (SELECT a FROM x) SELECT * FROM y JOIN x AS z ON y.a = z.a",
			"select * from (select a from (select a from t) as x) as y join (select a from t) as z on y.a = z.a"},
		{"SELECT `timestamp`, \"dq\" FROM t", "select `timestamp`, 'dq' from t"},
		{"SELECT TUMBLE_START(ts, INTERVAL '1' HOUR) FROM t GROUP BY TUMBLE(ts, INTERVAL '1' HOUR)",
			"select TUMBLE_START(ts, __clink_interval('1', 'HOUR')) from t group by TUMBLE(ts, __clink_interval('1', 'HOUR'))"},
		{"SELECT a FROM t -- comment\n /* block */ WHERE a = 1;", "select a from t where a = 1"},
		{"SELECT a FROM t WHERE -a = --1\n 2", "select a from t where -a = 2"},
	}
	for _, c := range cases {
		if got := queryString(t, c.in); got != c.want {
			t.Errorf("Parse(%q)\n got  %s\n want %s", c.in, got, c.want)
		}
	}
}

func TestWindowTVF(t *testing.T) {
	cases := []struct {
		in   string
		want WindowTVF
	}{
		{"SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))",
			WindowTVF{Kind: "TUMBLE", Table: "bid", TimeCol: "dateTime", Intervals: []Interval{{"10", "SECOND"}}}},
		{"SELECT * FROM TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) AS w",
			WindowTVF{Kind: "HOP", Table: "bid", TimeCol: "ts", Intervals: []Interval{{"2", "SECOND"}, {"10", "SECOND"}}}},
		{"SELECT * FROM TABLE(CUMULATE(TABLE db.bid, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '1' HOUR))",
			WindowTVF{Kind: "CUMULATE", Table: "db.bid", TimeCol: "ts", Intervals: []Interval{{"1", "MINUTE"}, {"1", "HOUR"}}}},
		{"SELECT * FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, `a:b`, DESCRIPTOR(ts), INTERVAL '5' MINUTE))",
			WindowTVF{Kind: "SESSION", Table: "bid", TimeCol: "ts", PartitionBy: []string{"bidder", "a:b"}, Intervals: []Interval{{"5", "MINUTE"}}}},
		{"SELECT * FROM t JOIN table(tumble(table `we:ird%`, descriptor(ts), interval '1' day, interval '-1' hour)) w ON t.a = w.a",
			WindowTVF{Kind: "TUMBLE", Table: "we:ird%", TimeCol: "ts", Intervals: []Interval{{"1", "DAY"}, {"-1", "HOUR"}}}},
	}
	for _, c := range cases {
		q := mustParse(t, c.in).(*Query)
		var found *WindowTVF
		_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
			if tn, ok := n.(sqlparser.TableName); ok {
				w, err := ParseWindowTable(tn.Name.String())
				if err != nil {
					t.Errorf("%q: %v", c.in, err)
				}
				if w != nil {
					found = w
				}
			}
			return true, nil
		}, q.AST)
		if found == nil {
			t.Errorf("%q: no window table in %s", c.in, sqlparser.String(q.AST))
			continue
		}
		if !reflect.DeepEqual(*found, c.want) {
			t.Errorf("%q: window = %+v, want %+v", c.in, *found, c.want)
		}
	}
	if w, err := ParseWindowTable("bid"); w != nil || err != nil {
		t.Errorf("plain table name decoded as a window: %v %v", w, err)
	}
	if _, err := ParseWindowTable(WindowTablePrefix + "TUMBLE:bid"); err == nil {
		t.Errorf("malformed window name accepted")
	}
	w := &WindowTVF{Kind: "HOP", Table: "bid", TimeCol: "ts", Intervals: []Interval{{"2", "SECOND"}, {"10", "SECOND"}}}
	if got, want := w.String(), "HOP(TABLE `bid`, DESCRIPTOR(`ts`), INTERVAL '2' SECOND, INTERVAL '10' SECOND)"; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}

func TestIntervalDuration(t *testing.T) {
	cases := []struct {
		iv   Interval
		want string
	}{
		{Interval{"10", "SECOND"}, "10s"},
		{Interval{"1.5", "MINUTE"}, "1m30s"},
		{Interval{"250", "MILLISECOND"}, "250ms"},
		{Interval{"2", "DAY"}, "48h0m0s"},
		{Interval{"-4", "HOUR"}, "-4h0m0s"},
	}
	for _, c := range cases {
		d, err := c.iv.Duration()
		if err != nil || d.String() != c.want {
			t.Errorf("%v.Duration() = %v, %v; want %s", c.iv, d, err, c.want)
		}
	}
	if _, err := (Interval{"x", "SECOND"}).Duration(); err == nil {
		t.Error("non-numeric interval accepted")
	}
	if _, err := (Interval{"1", "MONTH"}).Duration(); err == nil {
		t.Error("MONTH interval accepted")
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		text      string
		line, col int
		msg       string // substring of the message
	}{
		{"FOO bar", 1, 1, "unknown statement FOO"},
		{"SELECT a\nFORM t", 2, 6, `syntax error at or near "t"`},
		{"SELECT a,\n  b FROM t WHERE a = = 1", 2, 22, `syntax error at or near "="`},
		{"SELECT a FROM", 1, 14, "unexpected end of statement"},
		// Errors after rewritten constructs still land on the user's token.
		{"SELECT CAST(a AS INT) AS x, 'a' || b AS y,\n  b + * 2 FROM t", 2, 7, `syntax error at or near "*"`},
		{"SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '1' SECOND))\nWHERE a = = 1", 2, 11, `at or near "="`},
		{"WITH v AS (SELECT a\n FROM t WHERE a = = 1)\nSELECT * FROM v", 2, 19, `at or near "="`},
		{"SELECT ts - INTERVAL '1' SECOND AS x\nFROM t\nWHERE éa = 1 AND b IS NOTNULL", 3, 23, `at or near "NOTNULL"`},
		{"SELECT CAST(a AS INT),\n   CAST(b AS FOO) FROM t", 2, 14, "unsupported type FOO"},
		{"SELECT CAST(a) FROM t", 1, 8, "CAST needs"},
		{"SELECT a FROM t WHERE x = 'abc", 1, 27, "unterminated string"},
		{"SELECT (a FROM t", 1, 8, "unclosed '('"},
		{"SELECT a) FROM t", 1, 9, "unmatched ')'"},
		{"SELECT a FROM t; SELECT b FROM t", 1, 16, "only one statement"},
		{"", 0, 0, "empty statement"},
		{"  -- only a comment\n", 0, 0, "empty statement"},
		{"SELECT a FROM t WHERE ts > INTERVAL '1' MONTH", 1, 41, "unsupported interval unit"},
		{"SELECT a FROM t WHERE ts > INTERVAL 'x' SECOND", 1, 37, "is not a number"},
		{"SELECT a FROM t STRAIGHT_JOIN u ON t.a = u.a", 1, 17, "STRAIGHT_JOIN is not supported"},
		{"SELECT a FROM t FULL OUTER u ON t.a = u.a", 1, 17, "expected JOIN after FULL OUTER"},
		{"SELECT ROW_NUMBER() OVER (PARTITION BY a) FROM t", 1, 21, "window functions"},
		{"SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts)))", 1, 21, "wrong number of interval arguments"},
		{"SELECT * FROM TABLE(TUMBLE(bid, DESCRIPTOR(ts), INTERVAL '1' SECOND))", 1, 28, "expected TABLE as the first argument"},
		{"SELECT * FROM TABLE(SLIDE(TABLE bid, DESCRIPTOR(ts), INTERVAL '1' SECOND))", 1, 21, "expected TUMBLE, HOP"},
		{"SELECT a || FROM t", 1, 13, "missing operand for ||"},
		{"WITH x(a) AS (SELECT 1) SELECT * FROM x", 1, 7, "column lists in WITH"},
		{"CREATE TABLE t (a INT, b FOO) WITH ('connector' = 'x')", 1, 26, "unsupported type FOO"},
		{"CREATE TABLE t (\n  a INT,\n  a BIGINT\n) WITH ('connector' = 'x')", 3, 3, `duplicate column "a"`},
		{"CREATE TABLE t (a INT) WITH ('connector' = 'x', 'connector' = 'y')", 1, 49, "given twice"},
		{"CREATE TABLE t (a INT)", 1, 23, "expected WITH"},
		{"CREATE TABLE t (a INT, WATERMARK FOR b AS b) WITH ('connector' = 'x')", 1, 24, "no such column"},
		{"CREATE TABLE t (a INT, c AS a +) WITH ('connector' = 'x')", 1, 32, "unexpected end of statement"},
		{"CREATE TABLE t (ts TIMESTAMP(3),\n WATERMARK FOR ts AS ts - INTERVAL '4' SECONDS) WITH ('connector' = 'x')", 2, 40, "unsupported interval unit"},
		{"CREATE FUNCTION f AS 'x'", 1, 8, "CREATE FUNCTION is not supported"},
		{"CREATE VIEW v AS", 1, 17, "expected a query"},
		{"DROP INDEX i", 1, 6, "expected TABLE or VIEW"},
		{"SHOW DATABASES", 1, 6, "expected TABLES"},
		{"SET 'a' 'b'", 1, 9, "expected '=' or TO"},
		{"SET a =", 1, 8, "expected a value"},
		{"DESCRIBE", 1, 9, "expected a name"},
		{"DESCRIBE a b", 1, 12, `unexpected "b"`},
		{"INSERT INTO s (a, b) SELECT 1, 2", 1, 15, "column lists are not supported"},
		{"INSERT INTO s VALUES (1)", 1, 15, "VALUES is not supported"},
		{"EXPLAIN EXPLAIN SELECT 1", 1, 9, "EXPLAIN cannot explain EXPLAIN"},
		{"EXPLAIN (FORMAT JSON SELECT 1", 1, 9, "unclosed '('"},
		{"SELECT a FROM t WHERE b = 'é' AND é = #", 1, 39, "unexpected character '#'"},
	}
	for _, c := range cases {
		_, err := Parse(c.text)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) error = %v, want *Error", c.text, err)
			continue
		}
		if pe.Line != c.line || pe.Column != c.col || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("Parse(%q) = line %d col %d %q; want line %d col %d containing %q", c.text, pe.Line, pe.Column, pe.Msg, c.line, c.col, c.msg)
		}
	}
}

func TestParseExpr(t *testing.T) {
	e, err := ParseExpr("CASE WHEN a = 0 THEN p.`dateTime` ELSE CAST(b AS TIMESTAMP(3)) END")
	if err != nil {
		t.Fatal(err)
	}
	if got := sqlparser.String(e); got != "case when a = 0 then p.`dateTime` else __clink_cast(b, 'TIMESTAMP(3)') end" {
		t.Errorf("got %s", got)
	}
	for _, bad := range []string{"", "a FROM t", "a AS b", "a, b", "a +"} {
		if _, err := ParseExpr(bad); err == nil {
			t.Errorf("ParseExpr(%q) accepted", bad)
		}
	}
}

func TestKeywords(t *testing.T) {
	kw := Keywords()
	for _, want := range []string{"SELECT", "WATERMARK", "TUMBLE", "EXPLAIN", "BIGINT"} {
		found := false
		for _, k := range kw {
			found = found || k == want
		}
		if !found {
			t.Errorf("Keywords() lacks %s", want)
		}
	}
	for i := 1; i < len(kw); i++ {
		if kw[i-1] >= kw[i] {
			t.Fatalf("Keywords() not sorted and unique at %q, %q", kw[i-1], kw[i])
		}
	}
}

// TestFullJoinReachesBinder: FULL [OUTER] JOIN, which sqlparser's grammar
// lacks, reaches the binder as a join of kind FullJoinStr with its ON.
func TestFullJoinReachesBinder(t *testing.T) {
	for _, q := range []string{
		"SELECT * FROM a FULL OUTER JOIN b ON a.k = b.k",
		"SELECT * FROM a full join b ON a.k = b.k WHERE a.x > 1",
	} {
		st, err := Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		sel := st.(*Query).AST.(*sqlparser.Select)
		j, ok := sel.From[0].(*sqlparser.JoinTableExpr)
		if !ok || j.Join != FullJoinStr || j.Condition.On == nil {
			t.Errorf("%s: FROM is %s", q, sqlparser.String(sel.From[0]))
		}
	}
}
