package main

import (
	"bytes"
	"context"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSplitStatements(t *testing.T) {
	script := "-- header\n-- more\ncreate view v (a) as select 1;\n\nselect ';' as x, a from v -- trailing\n;\ndrop view v;\n-- only a comment\n"
	got := splitStatements(script)
	want := []string{"create view v (a) as select 1", "select ';' as x, a from v -- trailing", "drop view v"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if !returnsRows(got[1]) || returnsRows(got[0]) || returnsRows(got[2]) || !returnsRows("WITH t AS (SELECT 1) SELECT * FROM t") {
		t.Fatal("returnsRows misjudged a statement")
	}
}

func TestParseOrder(t *testing.T) {
	cases := []struct {
		q            string
		names        []string
		ordered      bool
		keys         []int
		limit, offst int64
	}{
		{"select a, b, sum(c) as s from t group by a, b order by a, b", []string{"a", "b", "s"}, true, []int{0, 1}, -1, 0},
		{"select x, count(*) as c from t group by x order by c desc limit 10", []string{"x", "c"}, true, []int{1}, 10, 0},
		{"SELECT AdvEngineID, COUNT(*) FROM hits WHERE AdvEngineID <> 0 GROUP BY AdvEngineID ORDER BY COUNT(*) DESC", []string{"AdvEngineID", "count_star()"}, true, []int{1}, -1, 0},
		{"SELECT a, COUNT(*) FROM t GROUP BY a ORDER BY 2 DESC LIMIT 25", []string{"a", "n"}, true, []int{1}, 25, 0},
		{"SELECT SearchPhrase FROM hits WHERE SearchPhrase <> '' ORDER BY EventTime LIMIT 10", []string{"SearchPhrase"}, true, nil, 10, 0},
		{"SELECT * FROM hits WHERE URL LIKE '%google%' ORDER BY EventTime LIMIT 10", []string{"WatchID", "EventTime"}, true, []int{1}, 10, 0},
		{"SELECT DATE_TRUNC('minute', EventTime) AS M, COUNT(*) AS PageViews FROM hits GROUP BY DATE_TRUNC('minute', EventTime) ORDER BY DATE_TRUNC('minute', EventTime) LIMIT 10 OFFSET 1000", []string{"M", "PageViews"}, true, []int{0}, 10, 1000},
		{"SELECT UserID, SearchPhrase, COUNT(*) FROM hits GROUP BY UserID, SearchPhrase LIMIT 10", []string{"UserID", "SearchPhrase", "c"}, false, nil, 10, 0},
		{"select count(*) from (select a from t order by a limit 3) x", []string{"c"}, false, nil, -1, 0},
		{"select o_year, sum(case when nation = 'BRAZIL' then volume else 0 end) / sum(volume) as mkt_share from (select extract(year from o_orderdate) as o_year from t) as all_nations group by o_year order by o_year", []string{"o_year", "mkt_share"}, true, []int{0}, -1, 0},
		{"select n1.n_name as supp_nation, l_year, sum(volume) as revenue from t group by supp_nation, l_year order by supp_nation, l_year", []string{"supp_nation", "l_year", "revenue"}, true, []int{0, 1}, -1, 0},
	}
	for _, c := range cases {
		s := parseOrder(c.q, c.names)
		if s.ordered != c.ordered || s.limit != c.limit || s.offset != c.offst || !equalInts(s.keys, c.keys) {
			t.Errorf("%s:\n got ordered %v keys %v limit %d offset %d\nwant ordered %v keys %v limit %d offset %d",
				c.q, s.ordered, s.keys, s.limit, s.offset, c.ordered, c.keys, c.limit, c.offst)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCompareAnswers(t *testing.T) {
	rows := func(s ...string) [][]string {
		out := [][]string{}
		for _, r := range s {
			out = append(out, strings.Split(r, ","))
		}
		return out
	}
	byCount := orderSpec{ordered: true, keys: []int{1}, limit: -1}
	top3 := orderSpec{ordered: true, keys: []int{1}, limit: 3}
	cases := []struct {
		name        string
		clink, duck [][]string
		spec        orderSpec
		ok          bool
		kind        checkKind
	}{
		{"unordered, any order", rows("a,1", "b,2"), rows("b,2", "a,1"), orderSpec{limit: -1}, true, checkFull},
		{"unordered, a value differs", rows("a,1", "b,2"), rows("b,2", "a,3"), orderSpec{limit: -1}, false, checkFull},
		{"ordered, ties in any order", rows("a,5", "b,3", "c,3", "d,1"), rows("a,5", "c,3", "b,3", "d,1"), byCount, true, checkFull},
		{"ordered, wrong order", rows("d,1", "a,5"), rows("a,5", "d,1"), byCount, false, checkFull},
		{"ordered, tie group differs", rows("a,5", "b,3", "x,3"), rows("a,5", "c,3", "b,3"), byCount, false, checkFull},
		{"LIMIT cuts a tie: other rows allowed", rows("a,5", "b,3", "x,3"), rows("a,5", "c,3", "b,3"), top3, true, checkFull},
		{"LIMIT cut, key differs", rows("a,5", "b,3", "x,2"), rows("a,5", "c,3", "b,3"), top3, false, checkFull},
		{"LIMIT not reached: last group complete", rows("a,5", "x,3"), rows("a,5", "b,3"), top3, false, checkFull},
		{"OFFSET cuts the first group", rows("x,5", "b,3"), rows("a,5", "b,3"), orderSpec{ordered: true, keys: []int{1}, limit: 10, offset: 5}, true, checkFull},
		{"LIMIT without ORDER BY: count only", rows("a,1", "b,2"), rows("c,7", "d,8"), orderSpec{limit: 2}, true, checkCountOnly},
		{"LIMIT without ORDER BY: count differs", rows("a,1"), rows("c,7", "d,8"), orderSpec{limit: 2}, false, checkCountOnly},
		{"key not in result: as a set", rows("b", "a"), rows("a", "b"), orderSpec{ordered: true, limit: 2}, true, checkUnordered},
		{"decimal rounding within half a unit", rows("x,16.380779"), rows("x,16.38077862639554"), orderSpec{limit: -1}, true, checkFull},
		{"decimal beyond half a unit", rows("x,16.380781"), rows("x,16.38077862639554"), orderSpec{limit: -1}, false, checkFull},
		{"integer vs fraction", rows("x,123"), rows("x,123.4"), orderSpec{limit: -1}, false, checkFull},
		{"row counts differ", rows("a,1"), rows("a,1", "a,1"), byCount, false, checkFull},
	}
	for _, c := range cases {
		kind, err := compareAnswers(c.clink, c.duck, c.spec)
		if (err == nil) != c.ok || kind != c.kind {
			t.Errorf("%s: got %v (%s), want ok=%v (%s)", c.name, err, kind, c.ok, c.kind)
		}
	}
}

func TestDecimalString(t *testing.T) {
	for _, c := range []struct {
		v     int64
		scale int
		want  string
	}{{12345, 2, "123.45"}, {-12345, 2, "-123.45"}, {5, 2, "0.05"}, {-5, 3, "-0.005"}, {0, 2, "0.00"}, {42, 0, "42"}, {1200, 2, "12.00"}} {
		if got := decimalString(big.NewInt(c.v), c.scale); got != c.want {
			t.Errorf("decimalString(%d, %d) = %q, want %q", c.v, c.scale, got, c.want)
		}
	}
}

// TestQueryFiles: the suites' query files are all there and parse into
// one answering statement each (Q15: three statements, the second).
func TestQueryFiles(t *testing.T) {
	dir, err := findTestdata()
	if err != nil {
		t.Fatal(err)
	}
	for suite, n := range map[string]int{"tpch": 22, "clickbench": 43} {
		qs, err := readQueries(filepath.Join(dir, suite, "queries"), "all")
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) != n {
			t.Errorf("%s: %d queries, want %d", suite, len(qs), n)
		}
		for _, q := range qs {
			if q.name == "q15" && suite == "tpch" {
				if len(q.stmts) != 3 || q.main != 1 {
					t.Errorf("tpch q15: %d statements, answer %d; want 3 and the second", len(q.stmts), q.main)
				}
			} else if len(q.stmts) != 1 {
				t.Errorf("%s %s: %d statements", suite, q.name, len(q.stmts))
			}
			if (q.duck != nil) != (suite == "tpch" && q.name == "q01") {
				t.Errorf("%s %s: DuckDB variant %v; only TPC-H q01 has one", suite, q.name, q.duck != nil)
			}
		}
	}
	if _, err := readQueries(filepath.Join(dir, "tpch", "queries"), "q01,q99"); err == nil || !strings.Contains(err.Error(), "q99") {
		t.Errorf("an unknown query was accepted: %v", err)
	}
	some, err := readQueries(filepath.Join(dir, "tpch", "queries"), "q15, q06")
	if err != nil || len(some) != 2 || some[0].name != "q06" || some[1].name != "q15" {
		t.Errorf("-queries q15, q06 selected %d queries (%v)", len(some), err)
	}
}

// TestDuckDBReadsGeneratedData: DuckDB reads both generators' files, with
// the types DuckDB's own tpch extension and ClickBench's create.sql give.
func TestDuckDBReadsGeneratedData(t *testing.T) {
	ctx := context.Background()
	var log bytes.Buffer
	tp, err := prepareSuite(ctx, analyticConfig{suite: "tpch", sf: 0.01, data: t.TempDir(), queries: "q06"}, &log)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := prepareSuite(ctx, analyticConfig{suite: "clickbench", rows: 5000, data: t.TempDir(), queries: "q00"}, &log)
	if err != nil {
		t.Fatal(err)
	}
	dk, err := newDuckRunner(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer dk.Close()
	for _, st := range append(tp.duckSetup, cb.duckSetup...) {
		if err := dk.exec(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	check := func(q string, want ...string) {
		t.Helper()
		_, rows, err := dk.answer(ctx, q, true)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(rows) != 1 || strings.Join(rows[0], ",") != strings.Join(want, ",") {
			t.Errorf("%s: %v, want %v", q, rows, want)
		}
	}
	check("SELECT count(*) FROM lineitem WHERE l_orderkey NOT IN (SELECT o_orderkey FROM orders)", "0")
	check("SELECT count(*), count(DISTINCT c_custkey) FROM customer", "1500", "1500")
	check("SELECT typeof(l_orderkey), typeof(l_quantity), typeof(l_shipdate), typeof(l_returnflag), typeof(n_nationkey) FROM lineitem, nation LIMIT 1",
		"BIGINT", "DECIMAL(15,2)", "DATE", "VARCHAR", "INTEGER")
	check("SELECT typeof(EventTime), typeof(EventDate), typeof(CounterID), typeof(IsMobile), count(*) OVER () FROM hits LIMIT 1",
		"TIMESTAMP", "DATE", "INTEGER", "SMALLINT", "5000")
	check("SELECT min(EventDate), max(EventDate) <= DATE '2013-07-31' FROM hits", "2013-07-01", "true")
	check("SELECT count(*) FROM (DESCRIBE hits)", "105")
}

// TestAnalyticSuitesAgree runs TPC-H at SF 0.1 and ClickBench on 50,000
// rows through the same comparison as the benchmark and fails on every
// query whose answer differs from DuckDB's or that clink cannot run: each
// query is a subtest, so the output lists every query's status (and the
// report follows in the log). It fails until clink runs both suites.
func TestAnalyticSuitesAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the TPC-H and ClickBench comparison is skipped")
	}
	ctx := context.Background()
	for _, c := range []analyticConfig{
		{suite: "tpch", sf: 0.1},
		{suite: "clickbench", rows: 50_000},
	} {
		c.threads, c.repeat, c.timeout, c.queries = 1, 1, 2*time.Minute, "all"
		if d := os.Getenv("CLINK_BENCH_DATA"); d != "" {
			c.data = filepath.Join(d, c.suite)
		} else {
			c.data = t.TempDir()
		}
		var log bytes.Buffer
		s, err := prepareSuite(ctx, c, &log)
		if err != nil {
			t.Fatal(err)
		}
		results, note, version, err := runSuite(ctx, s, c, &log)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.suite, err, log.String())
		}
		t.Logf("\n%s", suiteReport(s, c, results, note, version))
		if len(results) != len(s.queries) {
			t.Errorf("%s: %d results for %d queries", c.suite, len(results), len(s.queries))
		}
		for _, o := range results {
			t.Run(c.suite+"/"+o.name, func(t *testing.T) {
				if o.duckErr != nil {
					t.Fatalf("DuckDB cannot run it: %v", o.duckErr)
				}
				if o.failed() {
					t.Fatal(o.status())
				}
			})
		}
	}
}
