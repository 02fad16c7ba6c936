package sql

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzRegressions are inputs the fuzzer found (each fixed), kept as seeds.
var fuzzRegressions = []string{}

// FuzzParse: no input panics or reports an internal error; an error is
// an *Error inside the text; and every input that parses prints to a
// text that parses to the same tree and prints the same again. The
// splitter agrees: a statement that parses is one piece of Split.
func FuzzParse(f *testing.F) {
	t := &testing.T{}
	var seeds []string
	for _, c := range repoCorpus(t) {
		seeds = append(seeds, c.text)
	}
	files, _ := filepath.Glob(filepath.Join(nexmarkDir, "*.sql"))
	for _, file := range files {
		for _, c := range scriptStatements(t, file, nexmarkVars) {
			seeds = append(seeds, c.text)
		}
	}
	for _, d := range sltCorpusDirs() {
		for _, pat := range []string{"*.test", filepath.Join("evidence", "*.test")} {
			fs, _ := filepath.Glob(filepath.Join(d, pat))
			for _, file := range fs {
				for _, c := range sltRecords(t, file, nil) {
					seeds = append(seeds, c.text)
				}
			}
		}
	}
	seeds = append(seeds, walkExtra...)
	for _, c := range printCases {
		seeds = append(seeds, c.in)
	}
	for _, c := range precedenceCases {
		seeds = append(seeds, "SELECT "+c.in)
	}
	seeds = append(seeds, fuzzRegressions...)
	seeds = append(seeds, "SELECT ((((", "SELECT '", "SELECT `", `SELECT "`, "CAST(", "SELECT CAST(a AS",
		"TABLE(TUMBLE(", "SELECT E'\\", "EXECUTE STATEMENT SET BEGIN", "SELECT INTERVAL '1' DAY TO",
		"SELECT x::ARRAY<ARRAY<INT>>", "SET a.b-c = d", "EXPLAIN (", "SELECT 1 -- c\n;")
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkParse(t, text)
	})
}

func checkParse(t *testing.T, text string) {
	st, err := Parse(text)
	if err != nil {
		checkError(t, "Parse", text, err)
	} else {
		out := st.String()
		st2, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) prints %q, which does not parse: %v", text, out, err)
		}
		if out2 := st2.String(); out2 != out {
			t.Fatalf("Parse(%q): print is no fixpoint:\n  %s\n  %s", text, out, out2)
		}
		if !equalTrees(st, st2) {
			t.Fatalf("Parse(%q): %q parses to another tree", text, out)
		}
		pieces := Split(text)
		if len(pieces) != 1 {
			t.Fatalf("Parse(%q) reads one statement, Split %d", text, len(pieces))
		}
		if _, err := Parse(pieces[0].Text); err != nil {
			t.Fatalf("Parse(%q) reads it, but not Split's piece %q: %v", text, pieces[0].Text, err)
		}
	}
	if e, err := ParseExpr(text); err != nil {
		checkError(t, "ParseExpr", text, err)
	} else {
		out := e.String()
		e2, err := ParseExpr(out)
		if err != nil || e2.String() != out {
			t.Fatalf("ParseExpr(%q) prints %q, which reads back as %v, %v", text, out, e2, err)
		}
	}
	if _, err := ParseType(text); err != nil {
		checkError(t, "ParseType", text, err)
	}
	Complete(text)
}

func checkError(t *testing.T, fn, text string, err error) {
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("%s(%q) error %T %v is not an *Error", fn, text, err, err)
	}
	if strings.Contains(pe.Msg, "internal error") {
		t.Fatalf("%s(%q): %v", fn, text, err)
	}
	if pe.Line > 0 {
		if pe.Offset < 0 || pe.Offset > len(text) {
			t.Fatalf("%s(%q): offset %d outside the text", fn, text, pe.Offset)
		}
		if l, c := lineCol(text, pe.Offset); l != pe.Line || c != pe.Column {
			t.Fatalf("%s(%q): line %d column %d, but offset %d is %d:%d", fn, text, pe.Line, pe.Column, pe.Offset, l, c)
		}
	}
}

// TestFuzzRegressions runs the fuzzer's finds without the fuzzer.
func TestFuzzRegressions(t *testing.T) {
	for _, s := range fuzzRegressions {
		checkParse(t, s)
	}
}
