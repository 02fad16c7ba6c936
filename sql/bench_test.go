package sql

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clink-sql/clink/sql/ast"
)

// largeInputs are flat statements of about 400 KB: parsing them is linear
// in their length (the precedence climbing loops over a flat operator
// chain instead of recursing), and so is printing them.
func largeInputs() map[string]string {
	list := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, "")
	}
	return map[string]string{
		"sum":         "SELECT " + strings.Repeat("1+", 200_000) + "1",
		"or":          "SELECT * FROM t WHERE " + list(50_000, func(i int) string { return fmt.Sprintf("a%d OR ", i%10) }) + "b",
		"in-list":     "SELECT * FROM t WHERE a IN (" + list(50_000, func(i int) string { return fmt.Sprintf("%d, ", i) }) + "0)",
		"select-list": "SELECT " + list(50_000, func(i int) string { return fmt.Sprintf("c%d, ", i) }) + "c FROM t",
		"union":       list(20_000, func(int) string { return "SELECT 1 UNION ALL " }) + "SELECT 1",
	}
}

// TestParseLarge parses and prints each large input. The bound is
// generous (the benchmark reports the real figure, tens of milliseconds):
// it only catches a parser gone quadratic.
func TestParseLarge(t *testing.T) {
	for name, text := range largeInputs() {
		start := time.Now()
		st, err := Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		elapsed := time.Since(start)
		out := st.String()
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("%s: the printed form does not parse: %v", name, err)
		}
		if back.String() != out {
			t.Errorf("%s: print is not a fixpoint", name)
		}
		if elapsed > 5*time.Second {
			t.Errorf("%s: %d bytes took %v to parse", name, len(text), elapsed)
		}
	}
}

func benchParse(b *testing.B, text string) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseLarge: the 400 KB flat statements.
func BenchmarkParseLarge(b *testing.B) {
	inputs := largeInputs()
	for _, name := range []string{"sum", "or", "in-list", "select-list", "union"} {
		b.Run(name, func(b *testing.B) { benchParse(b, inputs[name]) })
	}
}

// BenchmarkParse measures whole statements: nexmark q5 (two HOP window
// functions, a join, subqueries) and the nexmark source DDL.
func BenchmarkParse(b *testing.B) {
	read := func(name string) []string {
		data, err := os.ReadFile(filepath.Join("testdata", "nexmark", name+".sql"))
		if err != nil {
			b.Fatal(err)
		}
		var out []string
		for _, p := range Split(nexmarkVars.Replace(string(data))) {
			out = append(out, p.Text)
		}
		return out
	}
	q5 := read("q5")
	b.Run("nexmark-q5", func(b *testing.B) { benchParse(b, q5[len(q5)-1]) })
	b.Run("nexmark-ddl", func(b *testing.B) { benchParse(b, read("ddl_gen")[0]) })
	var tpch []string
	files := queryFiles("tpch")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range Split(string(data)) {
			tpch = append(tpch, p.Text)
		}
	}
	b.Run("tpch-all", func(b *testing.B) {
		n := 0
		for _, q := range tpch {
			n += len(q)
		}
		b.SetBytes(int64(n))
		b.ReportAllocs()
		for b.Loop() {
			for _, q := range tpch {
				if _, err := Parse(q); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkPrint measures String on a parsed TPC-H Q2 (subquery, joins,
// ORDER BY, LIMIT).
func BenchmarkPrint(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "tpch", "queries", "q02.sql"))
	if err != nil {
		b.Fatal(err)
	}
	st, err := Parse(string(data))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var out string
	for b.Loop() {
		out = st.(*ast.Query).String()
	}
	b.SetBytes(int64(len(out)))
}
