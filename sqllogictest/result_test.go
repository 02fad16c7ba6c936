package sqllogictest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// select1.test's `SELECT e FROM t1 ORDER BY 1` is given as "30 values
// hashing to 41762f74ba25ab0f9b0448f319f2f292". The values are the e
// column of its 30 INSERTs, sorted (all three digits, so text order is
// numeric order), read off the file by hand.
var select1E = []string{
	"103", "109", "110", "117", "120", "126", "132", "135", "144", "146",
	"152", "157", "162", "165", "173", "177", "180", "189", "192", "197",
	"204", "209", "210", "219", "221", "227", "230", "237", "242", "246",
}

const select1EHash = "30 values hashing to 41762f74ba25ab0f9b0448f319f2f292"

func TestHashAgreesWithTheCorpus(t *testing.T) {
	if got := hashLine(select1E); got != select1EHash {
		t.Errorf("hash of select1's e column: %s, want %s", got, select1EHash)
	}
	// The line is in the corpus as written above (when it is here).
	if data, err := os.ReadFile(filepath.Join(corpusDir(t, false), "select1.test")); err == nil {
		if !strings.Contains(string(data), "SELECT e\n  FROM t1\n ORDER BY 1\n----\n"+select1EHash+"\n") {
			t.Error("select1.test does not have the hash line this test copies")
		}
	}
	if got := hashValues(nil); got != "d41d8cd98f00b204e9800998ecf8427e" {
		t.Errorf("hash of no values: %s, want MD5 of nothing", got)
	}
}

func TestSortModes(t *testing.T) {
	// rowsort compares value by value: "9" after "10", and a value that is
	// a prefix of another first. Comparing the rows as joined strings
	// would put ("a b", "c") before ("a", "z").
	vals := []string{"9", "x", "a b", "c", "10", "y", "a", "z"}
	sortValues(vals, 2, RowSort)
	want := []string{"10", "y", "9", "x", "a", "z", "a b", "c"}
	if !slices.Equal(vals, want) {
		t.Errorf("rowsort: %q, want %q", vals, want)
	}
	vals = []string{"9", "x", "10", "y"}
	sortValues(vals, 2, ValueSort)
	if want := []string{"10", "9", "x", "y"}; !slices.Equal(vals, want) {
		t.Errorf("valuesort: %q, want %q", vals, want)
	}
	vals = []string{"b", "a"}
	sortValues(vals, 1, NoSort)
	if want := []string{"b", "a"}; !slices.Equal(vals, want) {
		t.Errorf("nosort: %q, want %q", vals, want)
	}
	vals = []string{"b", "a", "c"}
	sortValues(vals, 2, RowSort) // not whole rows: left alone
	if want := []string{"b", "a", "c"}; !slices.Equal(vals, want) {
		t.Errorf("rowsort of a partial row: %q, want %q", vals, want)
	}
}

func TestCompareResult(t *testing.T) {
	rec := func(types string, mode SortMode, expected ...string) *Record {
		return &Record{Kind: Query, Types: types, Sort: mode, HasResult: true, Expected: expected}
	}
	cases := []struct {
		name string
		r    *Record
		got  []string
		ok   bool
	}{
		{"one value per line", rec("II", NoSort, "1", "2", "3", "4"), []string{"1", "2", "3", "4"}, true},
		{"a row per line", rec("II", NoSort, "1 2", "3 4"), []string{"1", "2", "3", "4"}, true},
		{"a row per line, tabs", rec("TT", NoSort, "a b\tc", "d\te"), []string{"a b", "c", "d", "e"}, true},
		{"text with a space, one per line", rec("TT", NoSort, "a b", "c d"), []string{"a b", "c d"}, true},
		{"order matters in nosort", rec("I", NoSort, "1", "2"), []string{"2", "1"}, false},
		{"rowsort sorts both sides", rec("IT", RowSort, "2 b", "1 a"), []string{"2", "b", "1", "a"}, true},
		{"rowsort keeps rows together", rec("IT", RowSort, "1", "b", "2", "a"), []string{"1", "a", "2", "b"}, false},
		{"valuesort", rec("IT", ValueSort, "1", "2", "a", "b"), []string{"b", "2", "a", "1"}, true},
		{"a missing row", rec("I", NoSort, "1", "2"), []string{"1"}, false},
		{"an extra row", rec("I", NoSort, "1"), []string{"1", "2"}, false},
		{"empty expected", rec("I", NoSort), nil, true},
		{"empty expected, rows got", rec("I", NoSort), []string{"1"}, false},
		{"hash", rec("I", ValueSort, select1EHash), slices.Clone(select1E), true},
		{"hash after sorting", rec("I", ValueSort, select1EHash), []string{"246", "103", "109", "110", "117", "120", "126", "132", "135", "144", "146",
			"152", "157", "162", "165", "173", "177", "180", "189", "192", "197",
			"204", "209", "210", "219", "221", "227", "230", "237", "242"}, true},
		{"wrong hash", rec("I", NoSort, select1EHash), select1E[1:], false},
		{"no ---- line: only has to run", &Record{Kind: Query, Types: "I"}, []string{"7"}, true},
	}
	for _, c := range cases {
		res := compareResult(c.r, c.got, DefaultHashThreshold)
		if res.ok != c.ok {
			t.Errorf("%s: ok=%v, want %v (%s)", c.name, res.ok, c.ok, res.detail)
		}
		if !res.ok && res.detail == "" {
			t.Errorf("%s: a failure without a detail", c.name)
		}
	}
	// A wrong result over the threshold shows its hash, as the file
	// would have it, and the values.
	res := compareResult(rec("I", NoSort, "1"), slices.Clone(select1E), DefaultHashThreshold)
	if !strings.Contains(res.detail, select1EHash) || !strings.Contains(res.detail, "246") {
		t.Errorf("detail does not show the hash and the values:\n%s", res.detail)
	}
}

func TestLabelHash(t *testing.T) {
	r := &Record{Kind: Query, Types: "I", Sort: ValueSort, Label: "l", HasResult: true, Expected: select1E}
	if h, ok := labelHash(r); !ok || h != select1EHash {
		t.Errorf("label hash of listed values: %s %v", h, ok)
	}
	r.Expected = []string{select1EHash}
	if h, ok := labelHash(r); !ok || h != select1EHash {
		t.Errorf("label hash of a hash line: %s %v", h, ok)
	}
	r.HasResult, r.Expected = false, nil
	if _, ok := labelHash(r); ok {
		t.Error("a record without results gave a label hash")
	}
}
