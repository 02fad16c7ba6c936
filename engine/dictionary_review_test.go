package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Only VARCHAR keys can travel as dictionary codes (the scan ignores the
// others): EXPLAIN must not name a BIGINT key as dictionary-encoded.
// duckdb_groups.parquet: k is VARCHAR, late is BIGINT.
func TestDictionaryOnlyVarcharKeys(t *testing.T) {
	const f = "../testdata/parquet/duckdb_groups.parquet"
	cases := []struct{ q, want string }{
		{"SELECT late, COUNT(*) FROM '" + f + "' GROUP BY late", ""},
		{"SELECT late, COUNT(*), SUM(v) FROM '" + f + "' WHERE v > 5 GROUP BY late", ""},
		{"SELECT k, late, COUNT(*) FROM '" + f + "' GROUP BY k, late", "dictionary codes to GROUP BY keys and MIN/MAX: k ("},
	}
	ctx := context.Background()
	for _, c := range cases {
		for _, par := range []string{"1", "2"} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
			if _, err := s.Execute(ctx, "SET 'parallelism' = '"+par+"'", nil, ExecOptions{}); err != nil {
				t.Fatal(err)
			}
			o, err := s.Execute(ctx, "EXPLAIN ANALYZE "+c.q, nil, ExecOptions{})
			if err != nil {
				t.Fatalf("%s: %v", c.q, err)
			}
			got := ""
			for _, l := range strings.Split(o.Text, "\n") {
				if i := strings.Index(l, "dictionary codes"); i >= 0 {
					got = l[i:]
				}
			}
			if c.want == "" && got != "" || c.want != "" && !strings.HasPrefix(got, c.want) {
				t.Errorf("%s (parallelism %s): %q, want %q:\n%s", c.q, par, got, c.want, o.Text)
			}
			mem.AssertSize(t, 0)
		}
	}
}
