package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clink-sql/clink/connectors"
	_ "github.com/clink-sql/clink/connectors/parquet"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// fuzzCatalog has a bounded table t (Parquet, many types), a bounded
// nexmark table b, an unbounded nexmark table u with a watermark, and a
// view v over VALUES.
func fuzzCatalog(tb testing.TB) *Catalog {
	cat := NewCatalog()
	fs, _ := connectors.Lookup("filesystem")
	tbl, err := fs(map[string]string{"connector": "filesystem", "format": "parquet",
		"path": filepath.Join("..", "testdata", "parquet", "duckdb_types.parquet")}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	_ = cat.Add(&Entry{Name: "t", Table: tbl, Connector: "filesystem"}, false)
	nx, _ := connectors.Lookup("nexmark")
	bt, err := nx(map[string]string{"table": "bid", "events.num": "100"}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	_ = cat.Add(&Entry{Name: "b", Table: bt, Connector: "nexmark"}, false)
	ut, err := nx(map[string]string{"table": "bid"}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	wmText := "`dateTime` - INTERVAL '4' SECOND"
	wm, err := sql.ParseExpr(wmText)
	if err != nil {
		tb.Fatal(err)
	}
	_ = cat.Add(&Entry{Name: "u", Table: ut, Connector: "nexmark",
		Watermark: &WatermarkDef{Column: "dateTime", Expr: wm, Text: wmText}}, false)
	viewText := "SELECT * FROM (VALUES (1, 'a', 2.5), (2, NULL, NULL)) AS x(k, s, d)"
	st, err := sql.Parse(viewText)
	if err != nil {
		tb.Fatal(err)
	}
	_ = cat.Add(&Entry{Name: "v", View: st.(*ast.Query), ViewText: viewText}, false)
	return cat
}

// FuzzBind feeds statements through the parser, the binder and the rules:
// any input may be refused, none may crash or come out as an internal
// error (the binder's recover turns a panic into one).
func FuzzBind(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	cat := fuzzCatalog(f)
	f.Fuzz(func(t *testing.T, text string) {
		st, err := sql.Parse(text)
		if err != nil {
			return
		}
		q, ok := st.(*ast.Query)
		if !ok {
			return
		}
		for _, streaming := range []bool{false, true} {
			n, err := Bind(cat, q, BindOptions{Text: text, Streaming: streaming})
			if err == nil {
				_, _, err = Optimize(n, RuleOptions{Streaming: streaming})
			}
			if err != nil && strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%q (streaming %v): %v", text, streaming, err)
			}
		}
	})
}

// fuzzSeeds are the queries of the SQL suites, over the fuzz catalog's
// names where they can be.
func fuzzSeeds(tb testing.TB) []string {
	seeds := []string{
		"SELECT k, count(*) FROM v GROUP BY ROLLUP (k, s) ORDER BY 1 NULLS FIRST",
		"SELECT id, (SELECT max(k) FROM v WHERE v.k < t.id) FROM t WHERE EXISTS (SELECT 1 FROM v WHERE v.k = t.id)",
		"WITH c AS (SELECT i64, s FROM t) SELECT * FROM c a JOIN c b USING (i64) WHERE a.s NOT IN (SELECT s FROM v)",
		"SELECT auction, row_number() OVER (PARTITION BY bidder ORDER BY price DESC) FROM b QUALIFY 2 > 1",
		"SELECT window_start, count(*) FROM TABLE(TUMBLE(TABLE u, DESCRIPTOR(`dateTime`), INTERVAL '5' SECOND)) GROUP BY window_start, window_end",
		"SELECT a.auction FROM u a JOIN u c ON a.auction = c.auction AND a.`dateTime` BETWEEN c.`dateTime` - INTERVAL '1' SECOND AND c.`dateTime`",
		"SELECT k FROM v INTERSECT SELECT id FROM t EXCEPT ALL SELECT 1",
	}
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "sql", "*.slt"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, rec := range strings.Split(string(data), "\n\n") {
			lines := strings.Split(strings.TrimSpace(rec), "\n")
			if len(lines) < 2 || !strings.HasPrefix(lines[0], "query") {
				continue
			}
			var body []string
			for _, l := range lines[1:] {
				if strings.TrimSpace(l) == "----" {
					break
				}
				body = append(body, l)
			}
			seeds = append(seeds, strings.Join(body, "\n"))
		}
	}
	return seeds
}
