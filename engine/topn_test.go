package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ORDER BY ... LIMIT over an unbounded input is a continuously updated
// top-n: a changelog (-D, +I, row kind first) whose application after each
// batch is the top-n of the rows read so far.
//
// Deterministic without timing: the generator is seeded, so a bounded
// table with the same seed yields the same bids in the same order. The
// reference walks those bids one by one and records every state its top-3
// passes through; the changelog's states, taken at its batch boundaries (a
// batch's changes are its -D rows then its +I rows, so a -D after a +I
// starts the next batch), must be such states, in the same order. An outer
// LIMIT ends the unbounded query; its last group may be cut and is not
// checked.
func TestUnboundedOrderByLimitIsATopNChangelog(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	ctx := context.Background()
	for _, q := range []string{
		// Small batches: more batch boundaries, more states to check.
		"CREATE TABLE bf WITH ('connector' = 'nexmark', 'table' = 'bid', 'batch.size' = '50')",
		"CREATE TABLE bb WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '100000')",
		"SET 'parallelism' = '1'",
	} {
		if _, err := s.Execute(ctx, q, nil, ExecOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w := &collectWriter{}
	if _, err := s.Execute(ctx, "SELECT * FROM (SELECT auction, price FROM bf ORDER BY price DESC LIMIT 3) t LIMIT 40", w, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := w.schema.Field(0).Name; got != "op" {
		t.Fatalf("first column %q, want op", got)
	}

	// The reference: every state of the top-3 (price DESC, ties in
	// arrival order) over the bounded copy, in order.
	ref := &collectWriter{}
	if _, err := s.Execute(ctx, "SELECT auction, price FROM bb", ref, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	price := func(row string) int64 {
		p, err := strconv.ParseInt(row[strings.LastIndex(row, " | ")+3:], 10, 64)
		if err != nil {
			t.Fatalf("row %q: %v", row, err)
		}
		return p
	}
	stateIndex := map[string]int{} // state -> the first bid after which it holds
	var top []string
	for i, r := range ref.rows {
		p := price(r)
		if len(top) == 3 && p <= price(top[2]) {
			continue
		}
		at := len(top)
		for at > 0 && price(top[at-1]) < p {
			at--
		}
		top = slices.Insert(top, at, r)
		top = top[:min(len(top), 3)]
		if _, ok := stateIndex[stateKey(top)]; !ok {
			stateIndex[stateKey(top)] = i
		}
	}

	applied := map[string]int{}
	last, checked := -1, 0
	for i, r := range w.rows {
		op, row, _ := strings.Cut(r, " | ")
		if i > 0 && op == "-D" && strings.HasPrefix(w.rows[i-1], "+I") {
			// A batch boundary: the state so far is a top-3 of a prefix.
			cur := appliedRows(applied)
			at, ok := stateIndex[stateKey(cur)]
			if !ok {
				t.Fatalf("before change %d: applied changelog %v is no top-3 of the first %d bids", i, cur, len(ref.rows))
			}
			if at <= last {
				t.Fatalf("before change %d: state %v goes back in time (bid %d, then %d)", i, cur, last, at)
			}
			last = at
			checked++
		}
		switch op {
		case "+I":
			applied[row]++
		case "-D":
			if applied[row] == 0 {
				t.Fatalf("change %d: -D of %q, which is not in the result", i, row)
			}
			applied[row]--
		default:
			t.Fatalf("change %d: unexpected row kind %q", i, op)
		}
		if n := len(appliedRows(applied)); n > 3+3 {
			t.Fatalf("change %d: %d rows applied", i, n)
		}
	}
	t.Logf("%d batch states checked, the last after bid %d of %d", checked, last, len(ref.rows))
	if len(w.rows) != 40 || checked < 5 {
		t.Fatalf("%d changes, %d batch states checked", len(w.rows), checked)
	}

	var out Outcome
	out, err := s.Execute(ctx, "EXPLAIN SELECT auction, price FROM bf ORDER BY price DESC LIMIT 3", nil, ExecOptions{})
	if err != nil || !strings.Contains(out.Text, "UpdatingTopN price DESC LIMIT 3") || !strings.Contains(out.Text, "changelog-output") {
		t.Fatalf("EXPLAIN does not show the updating top-n: %v\n%s", err, out.Text)
	}
	if _, err := s.Execute(ctx, "SELECT auction, price FROM bf ORDER BY price DESC", &collectWriter{}, ExecOptions{}); err == nil || !strings.Contains(err.Error(), "needs a LIMIT") {
		t.Fatalf("ORDER BY without LIMIT over an unbounded input: %v", err)
	}
}

func appliedRows(applied map[string]int) []string {
	var rows []string
	for r, n := range applied {
		for range n {
			rows = append(rows, r)
		}
	}
	return rows
}

// stateKey names a multiset of rows independent of their order.
func stateKey(rows []string) string {
	s := slices.Clone(rows)
	slices.Sort(s)
	return fmt.Sprint(s)
}

// ORDER BY ... LIMIT over an updating result (a streaming GROUP BY): the
// top-n's changelog, applied, ends as the batch answer of the same query,
// and a group whose count rises past another's replaces it (retractions
// reach the top-n, which keeps every group to promote the next best).
func TestTopNOverUpdatingResult(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	ctx := context.Background()
	mustExec(t, s,
		"CREATE TABLE bb WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '20000', 'batch.size' = '100')",
		"SET 'parallelism' = '2'")
	for _, q := range []string{
		"SELECT channel, COUNT(*) AS n FROM bb GROUP BY channel ORDER BY n DESC, channel LIMIT 3",
		"SELECT auction, MAX(price) AS p FROM bb GROUP BY auction ORDER BY p DESC, auction LIMIT 5 OFFSET 2",
		"SELECT bidder, COUNT(*) AS n FROM bb WHERE price > 1000 GROUP BY bidder ORDER BY n, bidder LIMIT 4",
	} {
		batch := &collectWriter{}
		if _, err := s.Execute(ctx, q, batch, ExecOptions{}); err != nil {
			t.Fatal(err)
		}
		mustExec(t, s, "SET 'execution.runtime-mode' = 'streaming'")
		w := &collectWriter{}
		if _, err := s.Execute(ctx, q, w, ExecOptions{}); err != nil {
			t.Fatalf("%s (streaming): %v", q, err)
		}
		mustExec(t, s, "SET 'execution.runtime-mode' = 'batch'")
		if got := w.schema.Field(0).Name; got != "op" {
			t.Fatalf("%s: first column %q, want op", q, got)
		}
		applied := map[string]int{}
		deletes := 0
		for _, r := range w.rows {
			op, row, _ := strings.Cut(r, " | ")
			switch op {
			case "+I":
				applied[row]++
			case "-D":
				if applied[row] == 0 {
					t.Fatalf("%s: -D of a row not in the result: %s", q, row)
				}
				applied[row]--
				deletes++
			default:
				t.Fatalf("%s: row kind %q", q, op)
			}
		}
		got, want := appliedRows(applied), slices.Clone(batch.rows)
		slices.Sort(got)
		slices.Sort(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the applied changelog ends as\n%s\nwant the batch answer\n%s", q, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if deletes == 0 {
			t.Errorf("%s: no row ever left the top-n (%d changes): the test does not exercise retractions", q, len(w.rows))
		}
	}
}
