package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/sql"
)

// namesWriter records a result's column names.
type namesWriter struct{ names []string }

func (w *namesWriter) Columns(s *arrow.Schema, bounded bool) error {
	for _, f := range s.Fields() {
		w.names = append(w.names, f.Name)
	}
	return nil
}
func (w *namesWriter) Batch(*exec.Batch) error { return nil }

// TestColumnHeaders: a result column is named by its alias, the column it
// reads, or the expression's own text as written; never an internal name.
func TestColumnHeaders(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s, "CREATE TABLE t (a INT, b VARCHAR)", "INSERT INTO t VALUES (1, 'x')")
	for q, want := range map[string]string{
		"SELECT concat('a', 'b'), 1 + 2 AS x, t.a, \"b\" FROM t":                           "concat('a', 'b')|x|a|b",
		"SELECT count(*), sum(a) FILTER (WHERE a > 0) FROM t":                              "count(*)|sum(a) FILTER (WHERE a > 0)",
		"SELECT CAST(a AS BIGINT), a::DOUBLE, EXTRACT(YEAR FROM DATE '2024-01-02') FROM t": "CAST(a AS BIGINT)|a::DOUBLE|EXTRACT(YEAR FROM DATE '2024-01-02')",
		"SELECT b, row_number() OVER (ORDER BY a) FROM t":                                  "b|row_number() OVER (ORDER BY a)",
		"SELECT * FROM (VALUES (1, 2)) v":                                                  "column1|column2",
		"SELECT a + 1 FROM t GROUP BY a + 1":                                               "a + 1",
	} {
		w := &namesWriter{}
		if _, err := s.Execute(context.Background(), q, w, ExecOptions{}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := strings.Join(w.names, "|"); got != want {
			t.Errorf("%s: columns %q, want %q", q, got, want)
		}
	}
}

// TestBindErrorsArePositioned: what the binder refuses is an *sql.Error at
// the construct, with the construct named, never an internal name.
func TestBindErrorsArePositioned(t *testing.T) {
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s, "CREATE TABLE t (a INT, b VARCHAR)", "CREATE TABLE u (a INT, c INT)")
	for _, c := range []struct {
		q         string
		line, col int
		msg       string
	}{
		{"SELECT nope FROM t", 1, 8, "column 'nope' not found"},
		{"SELECT a FROM t, u", 1, 8, "column reference 'a' is ambiguous"},
		{"SELECT b FROM t GROUP BY a", 1, 8, "column 'b' must appear in the GROUP BY clause"},
		{"SELECT a FROM t WHERE count(*) > 1", 1, 23, "aggregate functions are not allowed in WHERE"},
		{"SELECT a FROM t WHERE row_number() OVER () > 1", 1, 23, "window functions are not allowed in WHERE"},
		{"SELECT a FROM missing", 1, 15, "table or view 'missing' not found"},
		{"SELECT (SELECT a, c FROM u) FROM t", 1, 8, "subquery must return only one column"},
		{"SELECT a FROM t\nWHERE b + 1 > 0", 2, 7, "cannot apply '+'"},
		{"SELECT a FROM t ORDER BY 3", 1, 26, "ORDER BY position 3 is not in select list"},
		{"SELECT a, sum(sum(a)) FROM t GROUP BY a", 1, 15, "aggregate function calls cannot be nested"},
		{"SELECT a FROM t JOIN u USING (b)", 1, 31, "column 'b' in USING is not in the right input"},
		{"SELECT rank() FROM t", 1, 8, "window function rank requires an OVER clause"},
		{"SELECT a FROM t INTERSECT SELECT a, c FROM u", 1, 27, "each INTERSECT query must have the same number of columns"},
		{"WITH x AS (SELECT 1), x AS (SELECT 2) SELECT * FROM x", 1, 23, "WITH query name 'x' specified more than once"},
		{"SELECT a FROM t LIMIT -1", 1, 23, "LIMIT must be a non-negative integer"},
	} {
		_, err := s.Execute(context.Background(), c.q, nil, ExecOptions{})
		var se *sql.Error
		if !errors.As(err, &se) {
			t.Errorf("%q: %v, want a positioned error", c.q, err)
			continue
		}
		if se.Line != c.line || se.Column != c.col || !strings.Contains(se.Msg, c.msg) || strings.Contains(se.Msg, "__") {
			t.Errorf("%q: line %d, column %d: %s; want line %d, column %d: %s", c.q, se.Line, se.Column, se.Msg, c.line, c.col, c.msg)
		}
	}
}
