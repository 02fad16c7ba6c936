package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// GROUP BY over an unbounded input is a changelog: each group's first
// result is +I, each later change a -U of the row emitted before and a +U
// of the new one; the row kind is the first column. Operators that would
// read retractions as data refuse such an input.
func TestUnboundedGroupByIsAChangelog(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE bf WITH ('connector' = 'nexmark', 'table' = 'bid')",
		"SET 'parallelism' = '1'",
	} {
		if _, err := s.Execute(ctx, q, nil, ExecOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w := &collectWriter{}
	if _, err := s.Execute(ctx, "SELECT channel, COUNT(*) AS n FROM bf WHERE channel IN ('Google', 'Apple', 'Baidu') GROUP BY channel LIMIT 30", w, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := w.schema.Field(0).Name; got != "op" {
		t.Fatalf("first column %q, want op", got)
	}
	last := map[string]string{} // channel -> its current row
	inserts, updates := 0, 0
	for i := 0; i < len(w.rows); i++ {
		f := strings.Split(w.rows[i], " | ")
		op, key, row := f[0], f[1], strings.Join(f[1:], " | ")
		switch op {
		case "+I":
			if _, dup := last[key]; dup {
				t.Fatalf("row %d: +I for %s twice", i, key)
			}
			last[key] = row
			inserts++
		case "-U":
			if last[key] != row {
				t.Fatalf("row %d: -U %s retracts %q, the current row is %q", i, key, row, last[key])
			}
			if i+1 >= len(w.rows) {
				continue // LIMIT cut the pair
			}
			next := strings.Split(w.rows[i+1], " | ")
			if next[0] != "+U" || next[1] != key {
				t.Fatalf("row %d: -U not followed by +U of the same group: %s", i, w.rows[i+1])
			}
			last[key] = strings.Join(next[1:], " | ")
			updates++
			i++
		default:
			t.Fatalf("row %d: unexpected row kind %q", i, op)
		}
	}
	if inserts != 3 || updates == 0 {
		t.Fatalf("%d inserts and %d updates in %d rows", inserts, updates, len(w.rows))
	}
	if _, err := s.Execute(ctx, "SELECT COUNT(*) FROM (SELECT channel, COUNT(*) AS n FROM bf GROUP BY channel) t", &collectWriter{}, ExecOptions{}); err == nil || !strings.Contains(err.Error(), "updating result") {
		t.Fatalf("an aggregate over an updating result: want an error naming it, got %v", err)
	}
	// A join over an updating result reads its retractions: the result is
	// a changelog whose -U rows retract pairs emitted before.
	w = &collectWriter{}
	if _, err := s.Execute(ctx, "SELECT * FROM (SELECT channel, COUNT(*) AS n FROM bf WHERE channel = 'Apple' GROUP BY channel) a "+
		"JOIN (SELECT channel, auction FROM bf WHERE auction < 1001) b ON a.channel = b.channel LIMIT 2000", w, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	if w.schema.Field(0).Name != "op" || w.schema.NumFields() != 5 {
		t.Fatalf("join over a changelog: columns %v, want op first then 4", w.schema)
	}
	kinds := map[string]int{}
	for _, r := range w.rows {
		kinds[strings.Split(r, " | ")[0]]++
	}
	if kinds["-U"] == 0 || kinds["+U"] == 0 {
		t.Fatalf("join over a changelog: row kinds %v, want retractions (-U) and updates (+U)", kinds)
	}
	var out Outcome
	out, err := s.Execute(ctx, "EXPLAIN SELECT channel, COUNT(*) FROM bf GROUP BY channel", nil, ExecOptions{})
	if err != nil || !strings.Contains(out.Text, "changelog-output") || !strings.Contains(out.Text, "UpdatingAggregate") {
		t.Fatalf("EXPLAIN does not show the changelog: %v\n%s", err, out.Text)
	}
	// A LIMIT makes the input finite: one final answer, no changelog.
	w = &collectWriter{}
	if _, err := s.Execute(ctx, "SELECT COUNT(*) FROM (SELECT auction FROM bf LIMIT 100) t", w, ExecOptions{}); err != nil || strings.Join(w.rows, ";") != "100" {
		t.Fatalf("bounded by LIMIT: %v %v", w.rows, err)
	}
}
