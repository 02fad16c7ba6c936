package sql

import (
	"testing"
)

// BenchmarkParse measures a whole statement through the dialect rewrite and
// sqlparser: nexmark q5 (two HOP window functions, a join, subqueries).
func BenchmarkParse(b *testing.B) {
	var text string
	for _, p := range nexmarkStatements(&testing.T{}, "q5") {
		if len(p.Text) > 6 && p.Text[:6] == "INSERT" {
			text = p.Text
		}
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseCreateTable measures the nexmark source DDL.
func BenchmarkParseCreateTable(b *testing.B) {
	text := nexmarkStatements(&testing.T{}, "ddl_gen")[0].Text
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}
