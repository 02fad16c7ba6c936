package complete

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/engine"
)

func tables() []engine.TableInfo {
	bid := arrow.NewSchema([]arrow.Field{{Name: "auction", Type: arrow.PrimitiveTypes.Int64}, {Name: "price", Type: arrow.PrimitiveTypes.Int64}}, nil)
	person := arrow.NewSchema([]arrow.Field{{Name: "name", Type: arrow.BinaryTypes.String}}, nil)
	return []engine.TableInfo{
		{Name: "bid", Kind: "table", Schema: bid},
		{Name: "person", Kind: "table", Schema: person},
		{Name: "hot_items", Kind: "view"},
	}
}

func TestComplete(t *testing.T) {
	cases := []struct {
		code   string
		cursor int
		want   string
		start  int
	}{
		// Keyword prefix, in the prefix's case.
		{"SELEC", -1, "SELECT", 0},
		{"select * fr", -1, "from", 9},
		{"SELECT * FROM b", -1, "bid", 14},
		{"SELECT * FROM h", -1, "hot_items", 14},                  // views too
		{"SELECT pr", -1, "preceding,precision,price,primary", 7}, // all tables' columns (none named)
		{"SELECT na FROM person", 9, "name,nanosecond,natural", 7},
		{"SELECT na FROM bid", 9, "nanosecond,natural", 7}, // only the named table's columns, and keywords
		{"SELECT bid.p", -1, "bid.price", 7},
		{"SELECT bid.", -1, "bid.auction,bid.price", 7},
		{"SELECT 'ü' FROM pe", -1, "person", 16}, // code points, not bytes
		{"SELECT PR", 99, "PRECEDING,PRECISION,PRIMARY,price", 7},
		{"SELECT upp", -1, "upper", 7},
		// From the function registry: built-ins and count_char, a UDF.
		{"SELECT count_c", -1, "count_char", 7},
		{"SELECT regexp_ex", -1, "regexp_extract", 7},
		// Nothing inside a quoted identifier or a comment.
		{`SELECT "pr`, -1, "", 10},
		{"SELECT 1 -- pr", -1, "", 14},
	}
	for _, c := range cases {
		got := Complete(c.code, c.cursor, tables())
		if strings.Join(got.Matches, ",") != c.want || got.Start != c.start {
			t.Errorf("%q: got %v from %d, want %s from %d", c.code, got.Matches, got.Start, c.want, c.start)
		}
	}
}

// TestCompletePathInQuotes: inside a string the completer lists files (the
// working directory's, or the typed directory's), never SQL keywords.
func TestCompletePathInQuotes(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"data/bids.parquet", "data/bids2.json", "data/people.csv", "data/.hidden", "select.sql"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	cases := []struct {
		code  string
		want  string
		start int
	}{
		{"SELECT * FROM 'da", "data/", 15},
		{"SELECT * FROM 'data/b", "data/bids.parquet,data/bids2.json", 15},
		{"SELECT * FROM 'data/", "data/bids.parquet,data/bids2.json,data/people.csv", 15},
		{"SELECT * FROM 'data/.", "data/.hidden", 15},
		// "sel" would be SELECT outside quotes; inside it is a file name.
		{"DESCRIBE 'sel", "select.sql", 10},
		{"SELECT * FROM 'nope/x", "", 15},
		{"SELECT 'ü', 'data/p", "data/people.csv", 13}, // code points
		{"SELECT * FROM '" + dir + "/data/pe", dir + "/data/people.csv", 15},
	}
	for _, c := range cases {
		got := Complete(c.code, -1, tables())
		if strings.Join(got.Matches, ",") != c.want || got.Start != c.start || got.End != len([]rune(c.code)) {
			t.Errorf("%q: got %v from %d to %d, want %s from %d", c.code, got.Matches, got.Start, got.End, c.want, c.start)
		}
	}
}

func TestWordAt(t *testing.T) {
	for _, c := range []struct {
		code   string
		cursor int
		want   string
	}{
		{"SELECT * FROM bid", -1, "bid"},
		{"SELECT * FROM bid", 15, "bid"},
		{"SELECT count(*)", 8, "count"},
		{"SELECT ", -1, ""},
	} {
		if got := WordAt(c.code, c.cursor); got != c.want {
			t.Errorf("WordAt(%q, %d) = %q, want %q", c.code, c.cursor, got, c.want)
		}
	}
}

func TestNameAt(t *testing.T) {
	for _, c := range []struct {
		code       string
		cursor     int
		qual, name string
	}{
		{"SELECT bid.price FROM bid", 13, "bid", "price"},
		{"SELECT bid.price FROM bid", 16, "bid", "price"},
		{"SELECT bid.price FROM bid", 8, "", "bid"},
		{"SELECT price FROM bid", 9, "", "price"},
		{"SELECT 1.5", -1, "", "5"},
		{"SELECT .x", -1, "", "x"},
	} {
		if q, n := NameAt(c.code, c.cursor); q != c.qual || n != c.name {
			t.Errorf("NameAt(%q, %d) = %q, %q; want %q, %q", c.code, c.cursor, q, n, c.qual, c.name)
		}
	}
}
