package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// column is one column visible to name resolution.
type column struct {
	qual string // table name or alias ("" when none)
	name string
	typ  arrow.DataType
	// use, when set, records a reference (projection pushdown's first pass).
	use func()
	// rowtime: an event-time attribute. Every row still to come has a
	// value at or after the current watermark (a WATERMARK column, a
	// window's end), so a join can expire state by it.
	rowtime bool
}

// scope is the columns of a relation, in its schema order.
type scope struct {
	cols []column
	// changelog: the relation is an updating result whose first column
	// "op" holds each row's kind (+I, -U, +U, -D). Only operators that
	// treat rows one by one (projections, filters, LIMIT, UNION ALL, the
	// sink) and a top-n (ORDER BY ... LIMIT) may consume it yet.
	changelog bool
}

func scopeOf(qual string, s *arrow.Schema) *scope {
	sc := &scope{}
	for _, f := range s.Fields() {
		sc.cols = append(sc.cols, column{qual: qual, name: f.Name, typ: f.Type})
	}
	return sc
}

// resolve finds qual.name (qual may be empty). Names compare
// case-insensitively, like Flink's default.
func (s *scope) resolve(qual, name string) (int, error) {
	found := -1
	for i, c := range s.cols {
		if !strings.EqualFold(c.name, name) {
			continue
		}
		if qual != "" && !strings.EqualFold(c.qual, qual) {
			continue
		}
		if found >= 0 {
			return -1, fmt.Errorf("column reference '%s' is ambiguous", dotted(qual, name))
		}
		found = i
	}
	if found < 0 {
		return -1, fmt.Errorf("column '%s' not found", dotted(qual, name))
	}
	if u := s.cols[found].use; u != nil {
		u()
	}
	return found, nil
}

// hasQualifier reports whether some column is qualified by q.
func (s *scope) hasQualifier(q string) bool {
	for _, c := range s.cols {
		if strings.EqualFold(c.qual, q) {
			return true
		}
	}
	return false
}

func (s *scope) schema() *arrow.Schema {
	fs := make([]arrow.Field, len(s.cols))
	for i, c := range s.cols {
		fs[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
	}
	return arrow.NewSchema(fs, nil)
}

func join(a, b *scope) *scope {
	out := &scope{changelog: a.changelog || b.changelog}
	out.cols = append(append(out.cols, a.cols...), b.cols...)
	return out
}

func dotted(q, n string) string {
	if q == "" {
		return n
	}
	return q + "." + n
}
