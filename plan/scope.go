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
	// hidden: reachable only qualified and never by * (a USING join's
	// per-side copies of its merged columns).
	hidden bool
	// proctime: a processing-time attribute (PROCTIME()), which windows
	// and temporal joins read as the wall clock.
	proctime bool
}

// scope is the columns of a relation, in its schema order, and the scope
// of the query it is nested in (correlated subqueries resolve there).
type scope struct {
	cols []column
	// changelog: the relation is an updating result whose first column
	// "op" holds each row's kind (+I, -U, +U, -D). Only operators that
	// treat rows one by one (projections, filters, LIMIT, UNION ALL, the
	// sink), a join and a top-n may consume it.
	changelog bool
	outer     *scope
}

func scopeOf(qual string, s *arrow.Schema) *scope {
	sc := &scope{}
	for _, f := range s.Fields() {
		sc.cols = append(sc.cols, column{qual: qual, name: f.Name, typ: f.Type})
	}
	return sc
}

// errNotFound is a name that resolves nowhere.
type errNotFound struct{ name string }

func (e errNotFound) Error() string { return fmt.Sprintf("column '%s' not found", e.name) }

// resolve finds qual.name in this scope only (qual may be empty). Names
// compare case-insensitively, quoted or not, as in DuckDB.
func (s *scope) resolve(qual, name string) (int, error) {
	found := -1
	for i, c := range s.cols {
		if !strings.EqualFold(c.name, name) {
			continue
		}
		if qual != "" && !strings.EqualFold(c.qual, qual) {
			continue
		}
		if qual == "" && c.hidden {
			continue
		}
		if found >= 0 {
			return -1, fmt.Errorf("column reference '%s' is ambiguous", dotted(qual, name))
		}
		found = i
	}
	if found < 0 {
		return -1, errNotFound{dotted(qual, name)}
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

// requalify gives every column the qualifier q (a relation's alias).
func (s *scope) requalify(q string) *scope {
	out := &scope{changelog: s.changelog, outer: s.outer}
	for _, c := range s.cols {
		c.qual = q
		out.cols = append(out.cols, c)
	}
	return out
}

func joinScopes(a, b *scope) *scope {
	out := &scope{changelog: a.changelog || b.changelog, outer: a.outer}
	out.cols = append(append(out.cols, a.cols...), b.cols...)
	return out
}

func dotted(q, n string) string {
	if q == "" {
		return n
	}
	return q + "." + n
}
