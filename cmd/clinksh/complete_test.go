package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestCompleteLine: what Tab appends (readline's suffixes) for a line and
// the statement typed before it, over the fake session's catalog.
func TestCompleteLine(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"bids.csv", "sub/x.sql"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	tables := newFake(memory.NewGoAllocator()).Tables()
	cases := []struct {
		pending, line string
		want          string // suffixes joined by |
		length        int
	}{
		{"", "SELEC", "T", 5},                  // keyword
		{"", "selec", "t", 5},                  // in the case typed
		{"", "SELECT * FROM b", "id", 1},       // table
		{"", "SELECT bid.pr", "ice", 6},        // column after t.
		{"", "SELECT upp", "er", 3},            // function
		{"", "SELECT * FROM 'bi", "ds.csv", 2}, // path in quotes, not BIGINT
		{"", "SELECT * FROM 's", "ub/", 1},
		{"SELECT *", "FROM 's", "ub/", 1},
		{"SELECT pri", "FROM bid WHERE pri", "ce|mary", 3}, // column and keyword
		{"", `\i b`, "ids.csv", 1},
		{"", `\d v`, "", 1},
		{"", `\df upp`, "er", 3},
		{"", "SELECT 1 -- sel", "", 0},
	}
	for _, c := range cases {
		got, n := completeLine(c.pending, []rune(c.line), len([]rune(c.line)), tables)
		var s []string
		for _, r := range got {
			s = append(s, string(r))
		}
		if strings.Join(s, "|") != c.want || n != c.length {
			t.Errorf("%q after %q: got %q, %d; want %q, %d", c.line, c.pending, s, n, c.want, c.length)
		}
	}
	// Tab on nothing offers the few tables after FROM, not every keyword.
	if got, _ := completeLine("", []rune("SELECT "), 7, tables); len(got) != 0 {
		t.Errorf("Tab after SELECT offered %d candidates", len(got))
	}
	if got, _ := completeLine("", []rune("SELECT * FROM "), 14, tables); len(got) != 2 {
		t.Errorf("Tab after FROM: %q, want the two tables", got)
	}
}
