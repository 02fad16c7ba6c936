package dispatch

import (
	"encoding/json"
	"io"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/complete"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/explain"
)

func TestParseOptions(t *testing.T) {
	o, err := parseOptions("  -- clink: duration=5s rows=100\nSELECT 1;")
	if err != nil || o.duration != 5*time.Second || o.rows != 100 {
		t.Fatalf("%+v %v", o, err)
	}
	o, err = parseOptions("-- CLINK: chart=Bar x=a y=b\nSELECT 1")
	if err != nil || o.chart != "bar" || o.x != "a" {
		t.Fatalf("%+v %v", o, err)
	}
	if o, err := parseOptions("SELECT 1; -- clink: rows=1"); err != nil || o.rows != 0 {
		t.Fatalf("option not on the first line taken: %+v %v", o, err)
	}
	for _, bad := range []string{"-- clink: rows=0", "-- clink: duration=soon", "-- clink: nope=1", "-- clink: chart=line x=a", "-- clink: x=a", "-- clink: rows"} {
		if _, err := parseOptions(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

var cols = []column{{"name", arrow.BinaryTypes.String}, {"n", arrow.PrimitiveTypes.Int64}}

func TestRenderText(t *testing.T) {
	rows := [][]cellValue{{{s: "a\nb"}, {s: "5"}}, {{s: "NULL", null: true}, {s: "12345"}}, {{s: "NULL"}, {s: "0"}}}
	got := renderText(cols, rows, "3 rows, finished")
	// SQL NULL bare, the string 'NULL' quoted; the footer without parentheses.
	want := "name   | n\n-------+------\na\\nb   |     5\nNULL   | 12345\n'NULL' |     0\n3 rows, finished"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestRenderHTMLEscapes(t *testing.T) {
	c := []column{{"<x>", arrow.BinaryTypes.String}}
	got := renderHTML(c, [][]cellValue{{{s: `<script>&"`}}, {{s: "NULL", null: true}}, {{s: "NULL"}}}, "3 rows & more")
	for _, want := range []string{"&lt;x&gt;", "&lt;script&gt;&amp;&#34;", `<span class="null">NULL</span>`, "<td>NULL</td>", "3 rows &amp; more"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in %s", want, got)
		}
	}
	if strings.Contains(got, "<script>") {
		t.Fatal("unescaped value")
	}
}

func TestChartSpecKeepsJSONValid(t *testing.T) {
	c := []column{{"x", arrow.PrimitiveTypes.Int64}, {"y", arrow.PrimitiveTypes.Float64}}
	rows := [][]cellValue{{{s: "1"}, {s: "NaN"}}, {{s: "2"}, {s: "+Inf"}}, {{s: "3"}, {s: "2.5"}}, {{s: "4"}, {null: true}}}
	s := chartJSON(t, c, rows, cellOptions{chart: "line", x: "X", y: "y"})
	if !strings.Contains(s, `{"x":1,"y":null}`) || !strings.Contains(s, `{"x":3,"y":2.5}`) || !strings.Contains(s, `"quantitative"`) {
		t.Fatalf("spec %s", s)
	}
	if _, err := chartSpec(c, rows, cellOptions{chart: "line", x: "x", y: "nope"}); err == nil || !strings.Contains(err.Error(), "columns: x, y") {
		t.Fatalf("missing column: %v", err)
	}
}

// A bar chart keeps the result's row order on its discrete axis (a top-n
// stays in rank order); a quantitative axis has no sort to set.
func TestChartSpecKeepsRowOrderOnDiscreteAxis(t *testing.T) {
	rows := [][]cellValue{{{s: "b"}, {s: "9"}}, {{s: "a"}, {s: "3"}}}
	s := chartJSON(t, cols, rows, cellOptions{chart: "bar", x: "name", y: "n"})
	if !strings.Contains(s, `"x":{"field":"name","sort":null,"type":"nominal"}`) {
		t.Fatalf("x axis not in row order: %s", s)
	}
	if strings.Index(s, `"name":"b"`) > strings.Index(s, `"name":"a"`) {
		t.Fatalf("values reordered: %s", s)
	}
	num := []column{{"x", arrow.PrimitiveTypes.Int64}, {"y", arrow.PrimitiveTypes.Int64}}
	spec, err := chartSpec(num, [][]cellValue{{{s: "1"}, {s: "2"}}}, cellOptions{chart: "line", x: "x", y: "y"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := spec["encoding"].(map[string]any)["x"].(map[string]any)["sort"]; ok {
		t.Fatalf("quantitative axis given a sort: %v", spec["encoding"])
	}
}

// chartJSON is the spec chartSpec builds, as the JSON the kernel sends.
func chartJSON(t *testing.T, c []column, rows [][]cellValue, o cellOptions) string {
	t.Helper()
	spec, err := chartSpec(c, rows, o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func tables() []engine.TableInfo {
	bid := arrow.NewSchema([]arrow.Field{{Name: "auction", Type: arrow.PrimitiveTypes.Int64}, {Name: "price", Type: arrow.PrimitiveTypes.Int64}}, nil)
	person := arrow.NewSchema([]arrow.Field{{Name: "name", Type: arrow.BinaryTypes.String}}, nil)
	return []engine.TableInfo{{Name: "bid", Kind: "table", Schema: bid}, {Name: "person", Kind: "table", Schema: person}}
}

// TestCompleteRequest: complete_request goes to the shared completer
// (package complete tests its cases) with the protocol's cursor, absent
// meaning the end; inside a quoted path no keyword is offered.
func TestCompleteRequest(t *testing.T) {
	pos := func(n int) *int { return &n }
	for _, c := range []struct {
		code   string
		cursor *int
		want   string
		start  int
	}{
		{"SELECT * FROM b", nil, "bid", 14},
		{"SELECT na FROM person", pos(9), "name,nanosecond,natural", 7},
		{"SELECT bid.p", pos(99), "bid.price", 7},
	} {
		got := complete.Complete(c.code, cursorPos(c.cursor), tables())
		if strings.Join(got.Matches, ",") != c.want || got.Start != c.start {
			t.Errorf("%q: got %v from %d, want %s from %d", c.code, got.Matches, got.Start, c.want, c.start)
		}
	}
	t.Chdir(t.TempDir())
	if got := complete.Complete("SELECT * FROM 'sel", cursorPos(nil), tables()); len(got.Matches) != 0 || got.Start != 15 {
		t.Errorf("in a quoted path of an empty directory: %v from %d, want nothing from 15", got.Matches, got.Start)
	}
}

// inspectEngine has the test tables, and file statistics for bid.price.
type inspectEngine struct{ fakeEngine }

func (inspectEngine) Tables() []engine.TableInfo { return tables() }

func (inspectEngine) ColumnStats(t engine.TableInfo, col int) (ColumnStats, bool) {
	switch {
	case t.Name == "bid" && t.Kind == "table" && col == 1:
		return ColumnStats{Rows: 1234, Min: int64(1), Max: int64(99), HasRange: true}, true
	case t.Name == "data/bids.parquet" && t.Kind == "file" && col == 0:
		return ColumnStats{Rows: 77, Min: int64(5), Max: int64(6), HasRange: true}, true
	}
	return ColumnStats{}, false
}

// FileTable opens data/bids.parquet (one column, amount), as the kernel's
// session opens a quoted path.
func (inspectEngine) FileTable(path string) (engine.TableInfo, bool) {
	if path != "data/bids.parquet" {
		return engine.TableInfo{}, false
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "amount", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return engine.TableInfo{Name: path, Kind: "file", Schema: schema, Bounded: true}, true
}

func TestInspect(t *testing.T) {
	k := New(&inspectEngine{}, &fakeTransport{}, log.New(io.Discard, "", 0))
	for _, c := range []struct {
		code   string
		cursor int
		want   []string // in text/plain
	}{
		// A table: its kind and DESCRIBE's table (the fake engine answers
		// every statement with its text, so the statement shows).
		{"SELECT * FROM bid", 16, []string{"bid (table, unbounded)", `<DESCRIBE "bid">`}},
		// A column, qualified or of a table the cell names: type and stats.
		{"SELECT bid.price FROM bid", 13, []string{"bid.price BIGINT", "1,234 rows; min 1, max 99"}},
		{"SELECT price FROM bid", 9, []string{"bid.price BIGINT"}},
		{"SELECT auction FROM bid", 9, []string{"bid.auction BIGINT"}},
		{"SELECT name FROM person WHERE", 9, []string{"person.name VARCHAR"}},
		// The qualifier itself is the table.
		{"SELECT bid.price FROM bid", 8, []string{"bid (table"}},
		// An alias of FROM resolves to its table, in a statement that
		// parses and in one still being typed.
		{"SELECT b.price FROM bid b", 10, []string{"bid.price BIGINT", "1,234 rows; min 1, max 99"}},
		{"SELECT b.price FROM bid AS b WHERE b.", 10, []string{"bid.price BIGINT", "1,234 rows"}},
		{"SELECT p.name, b.price FROM person p JOIN bid b ON", 10, []string{"person.name VARCHAR"}},
		// The alias itself is its table.
		{"SELECT p.name, b.price FROM person p JOIN bid b ON", 8, []string{"person (table"}},
		{"SELECT p.name, b.price FROM person p JOIN bid b ON", 17, []string{"bid.price BIGINT"}},
		// A column of a quoted path in FROM: its type and its files'
		// statistics, plain or through an alias or read_parquet.
		{"SELECT amount FROM 'data/bids.parquet'", 9, []string{"'data/bids.parquet'.amount BIGINT", "77 rows; min 5, max 6"}},
		{"SELECT x.amount FROM 'data/bids.parquet' x WHERE", 11, []string{"'data/bids.parquet'.amount BIGINT", "77 rows"}},
		{"SELECT amount FROM read_parquet('data/bids.parquet') r", 9, []string{"'data/bids.parquet'.amount", "77 rows"}},
		// A quoted path: DESCRIBE 'path'.
		{"SELECT * FROM 'data/x.parquet' WHERE", 20, []string{"data/x.parquet (file)", "<DESCRIBE 'data/x.parquet'>"}},
		// A function: every signature and what it does.
		{"SELECT count(*)", 8, []string{"count(* | x) -> BIGINT", "number of rows"}},
		{"SELECT coalesce(a, b)", 10, []string{"coalesce("}},
	} {
		d, ok := k.inspectCode(c.code, c.cursor)
		if !ok {
			t.Errorf("%q at %d: not found", c.code, c.cursor)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(d["text/plain"].(string), w) {
				t.Errorf("%q at %d: %q lacks %q", c.code, c.cursor, d["text/plain"], w)
			}
		}
		if _, ok := d["text/html"].(string); !ok {
			t.Errorf("%q: no HTML", c.code)
		}
	}
	if d, _ := k.inspectCode("SELECT auction FROM bid", 9); strings.Contains(d["text/plain"].(string), "rows") {
		t.Errorf("statistics for a column without: %q", d["text/plain"])
	}
	if _, ok := k.inspectCode("SELECT zz", -1); ok {
		t.Fatal("found unknown")
	}
}

func TestExplainBundles(t *testing.T) {
	text := explainBundles("[1] Scan bid <x>\n", nil)
	if len(text) != 1 || !strings.Contains(text[0]["text/html"].(string), "Scan bid &lt;x&gt;") {
		t.Fatalf("text plan: %v", text)
	}
	doc := `{"version":1,"analyze":true,"root":1,"stages":[{"id":0,"operator":"Scan","kind":"scan","emits":"born-columnar","parallelism":1,"runtime":{"rows_out":7}},{"id":1,"operator":"Filter","kind":"filter","inputs":[0],"emits":"rows","parallelism":1,"gate":{"columnar":false,"reason":"consumer-ingests-rows","cause":"Sink"}}]}`
	var parsed explain.Document
	if err := json.Unmarshal([]byte(doc), &parsed); err != nil {
		t.Fatal(err)
	}
	// The JSON text alone, or a text plan with its document (plain EXPLAIN):
	// both draw the table and the diagram.
	for name, b := range map[string][]map[string]any{"json": explainBundles(doc, nil), "text+doc": explainBundles("[1] Filter\n", &parsed)} {
		if len(b) != 2 {
			t.Fatalf("%s: %d bundles", name, len(b))
		}
		html := b[0]["text/html"].(string)
		for _, want := range []string{"<td>Filter</td>", "consumer-ingests-rows: Sink", `<td class="num">7</td>`} {
			if !strings.Contains(html, want) {
				t.Errorf("%s: table lacks %q: %s", name, want, html)
			}
		}
		// No renderer claims the document, so it cannot outrank the HTML.
		if _, ok := b[0]["application/json"]; ok {
			t.Errorf("%s: plan sent as application/json", name)
		}
		var back explain.Document
		if raw, ok := b[0][planMIME].(json.RawMessage); !ok || json.Unmarshal(raw, &back) != nil || len(back.Stages) != 2 {
			t.Errorf("%s: document not under %s: %v", name, planMIME, b[0][planMIME])
		}
		mm := b[1]["text/vnd.mermaid"].(string)
		if !strings.HasPrefix(mm, "flowchart BT\n") || !strings.Contains(mm, "s0 --> s1") {
			t.Fatalf("%s: mermaid: %s", name, mm)
		}
		if md := b[1]["text/markdown"].(string); md != "```mermaid\n"+mm+"```\n" {
			t.Errorf("%s: markdown %q", name, md)
		}
	}
}

// TestScanFromItems: a statement being typed (not yet valid SQL) still
// gives its FROM and JOIN lists, aliases and quoted paths; a keyword after
// a table is not its alias.
func TestScanFromItems(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{"SELECT b.price FROM bid b WHERE b.", "bid as b"},
		{"SELECT * FROM bid AS b, person p, auction WHERE", "bid as b, person as p, auction"},
		{"SELECT * FROM 'data/x.parquet' x JOIN bid ON x.", "'data/x.parquet' as x, bid"},
		{"SELECT * FROM db.bid LEFT JOIN \"Person\" pp ON", "bid, Person as pp"},
		{"SELECT * FROM", ""},
	} {
		var got []string
		for _, it := range scanFromItems(c.code) {
			s := it.name
			if it.path {
				s = "'" + s + "'"
			}
			if it.alias != "" {
				s += " as " + it.alias
			}
			got = append(got, s)
		}
		if strings.Join(got, ", ") != c.want {
			t.Errorf("%q: %q, want %q", c.code, strings.Join(got, ", "), c.want)
		}
	}
	// A statement that parses is walked: a subquery's table counts too.
	items := fromItems("SELECT * FROM (SELECT price FROM bid) b2 JOIN read_json('e.json') e ON true")
	if len(items) != 2 || items[0].name != "bid" || items[1].name != "e.json" || !items[1].path || items[1].alias != "e" {
		t.Errorf("parsed: %+v", items)
	}
}
