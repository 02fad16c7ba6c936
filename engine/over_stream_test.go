package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The forms of an OVER over an unbounded input, each run as a stream over
// the bounded generator and compared with the same query in batch mode
// (the bounded window operator, an independent implementation), on
// columns that do not depend on how ties are broken.
func TestStreamRankForms(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s, nexmarkDDL(t, "ddl_gen.sql", "nexmark")...)
	for _, c := range []struct {
		name, sel string
		changelog bool
		plan      string
	}{
		{"top-n, rn < N, rn shown",
			"SELECT auction, price, rn FROM (SELECT auction, price, bidder, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bid) WHERE rn < 4",
			true, "StreamRank Top-3; PARTITION BY auction; ORDER BY price DESC; with the row number"},
		{"top-n without rn",
			"SELECT auction, price FROM (SELECT auction, price, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bid) WHERE rn <= 2",
			true, "StreamRank Top-2; PARTITION BY auction; ORDER BY price DESC; updating"},
		{"rn = 1 by a non-time order, another condition",
			"SELECT bidder, price FROM (SELECT bidder, price, ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY price) AS rn FROM bid) t WHERE t.rn = 1 AND bidder > 1000",
			true, "StreamRank Top-1; PARTITION BY bidder"},
		{"deduplication, first row",
			"SELECT bidder, `dateTime` FROM (SELECT bidder, `dateTime`, ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY `dateTime`) AS rn FROM bid) WHERE rn = 1",
			false, "StreamDedupFirst deduplication keeping the first row; PARTITION BY bidder"},
		{"deduplication, first row with rn",
			"SELECT * FROM (SELECT auction, `dateTime`, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY `dateTime` ASC) AS rn FROM bid) WHERE rn <= 1",
			false, "with the row number; append-only"},
		{"deduplication, last row",
			"SELECT bidder, `dateTime` FROM (SELECT bidder, `dateTime`, ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY `dateTime` DESC) AS rn FROM bid) WHERE rn = 1",
			true, "deduplication keeping the last row"},
	} {
		t.Run(c.name, func(t *testing.T) { streamAgainstBatch(t, s, c.sel, c.changelog, c.plan) })
	}
}

// streamAgainstBatch runs sel in batch mode, then as a stream at
// parallelism 1 and 2: the stream's result, applied when it is updating
// (as changelog says it must be), is the batch one, and its plan names
// plan.
func streamAgainstBatch(t *testing.T, s *Session, sel string, changelog bool, plan string) {
	t.Helper()
	mustExec(t, s, "SET 'execution.runtime-mode' = 'batch'")
	want := canon(runRows(t, s, sel))
	if len(want) == 0 {
		t.Fatal("the batch answer is empty")
	}
	mustExec(t, s, "SET 'execution.runtime-mode' = 'streaming'")
	for _, par := range []string{"1", "2"} {
		mustExec(t, s, "SET 'parallelism' = '"+par+"'")
		w := &rowsWriter{}
		if _, err := s.Execute(context.Background(), sel, w, ExecOptions{}); err != nil {
			t.Fatal(err)
		}
		rows := w.rows
		if got := len(w.names) > 0 && w.names[0] == "op"; got != changelog {
			t.Fatalf("updating = %v (columns %v), want %v", got, w.names, changelog)
		}
		if changelog {
			rows = applyChanges(t, rows)
		}
		diff(t, "p"+par, canon(rows), want)
		text := strings.Join(explainLines(t, s, "EXPLAIN "+sel), "\n")
		if !strings.Contains(text, plan) {
			t.Errorf("the plan has no %q:\n%s", plan, text)
		}
	}
}

// What does not run over an unbounded input fails naming what does.
func TestStreamOverErrors(t *testing.T) {
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s, nexmarkDDL(t, "ddl_gen.sql", "nexmark")...)
	mustExec(t, s, "SET 'execution.runtime-mode' = 'streaming'")
	_, q6 := nexmarkQuery(t, "q6_valid") // runs; with an unbounded frame it cannot
	for sel, want := range map[string]string{
		"SELECT auction, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price) FROM bid":                                             "without a bound on it: over an unbounded input, OVER supports ROW_NUMBER()",
		"SELECT * FROM (SELECT auction, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price) AS rn FROM bid) WHERE rn > 2":          "without a bound on it",
		"SELECT auction, RANK() OVER (PARTITION BY auction ORDER BY price) FROM bid":                                                   "is not supported: over an unbounded input, OVER supports",
		"SELECT * FROM (SELECT auction, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price) AS rn FROM bid) WHERE rn < 1":          "keeps no row",
		strings.Replace(q6, "10 PRECEDING", "UNBOUNDED PRECEDING", 1):                                                                  "over an updating result: only COUNT, SUM, AVG, MIN and MAX OVER (... ROWS BETWEEN n PRECEDING",
		"SELECT auction, SUM(price) OVER (PARTITION BY auction ORDER BY price) FROM bid":                                               "it must be ordered by the input's time attribute",
		"SELECT auction, SUM(price) OVER (PARTITION BY auction ORDER BY `dateTime` ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM bid": "the frame must end at CURRENT ROW",
		"SELECT auction, LAG(price) OVER (PARTITION BY auction ORDER BY `dateTime`) FROM bid":                                          "is not supported: over an unbounded input",
	} {
		_, err := s.Execute(context.Background(), sel, &rowsWriter{}, ExecOptions{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\nerror %v, want one naming %q", sel, err, want)
		}
	}
}

// OVER aggregates ordered by the time attribute as streams, against batch
// mode, on columns that do not depend on the order of rows of one time.
func TestStreamOverAggregates(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s, nexmarkDDL(t, "ddl_gen.sql", "nexmark")...)
	for _, sel := range []string{
		"SELECT auction, `dateTime`, COUNT(*) OVER (PARTITION BY auction ORDER BY `dateTime` ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM bid",
		"SELECT auction, price, " + strings.ReplaceAll("SUM(price) w, AVG(price) w, MAX(price) w, MIN(channel) w, COUNT(*) w", " w",
			" OVER (PARTITION BY auction ORDER BY `dateTime` RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW)") + " FROM bid",
		"SELECT bidder, price, SUM(price) OVER (PARTITION BY bidder ORDER BY `dateTime`) FROM bid",
		"SELECT bidder, `dateTime`, COUNT(price) OVER (PARTITION BY bidder ORDER BY `dateTime` ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM bid",
	} {
		t.Run(sel[:40], func(t *testing.T) { streamAgainstBatch(t, s, sel, false, "StreamOverAggregate") })
	}
}

// Window Top-N and window deduplication after a window table function and
// after a window aggregate: append-only, as streams against batch mode.
func TestStreamWindowRank(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s, nexmarkDDL(t, "ddl_gen.sql", "nexmark")...)
	tumble := "TABLE(TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '1' SECOND))"
	for _, c := range []struct{ sel, plan string }{
		{"SELECT window_start, window_end, auction, price, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, auction ORDER BY price DESC) AS rn FROM " +
			tumble + ") WHERE rn <= 2", "WindowRank window Top-2"},
		{"SELECT window_end, bidder, `dateTime` FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, bidder ORDER BY `dateTime`) AS rn FROM " +
			tumble + ") WHERE rn = 1", "WindowRank window deduplication"},
		{"SELECT window_end, bidder, `dateTime` FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, bidder ORDER BY `dateTime` DESC) AS rn FROM " +
			tumble + ") WHERE rn = 1", "WindowRank window deduplication"},
		{"SELECT window_start, n, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY n DESC) AS rn FROM " +
			"(SELECT window_start, window_end, auction, COUNT(*) AS n FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '1' SECOND, INTERVAL '2' SECOND)) " +
			"GROUP BY window_start, window_end, auction)) WHERE rn <= 3", "WindowRank window Top-3"},
	} {
		// Each query shows only columns that do not depend on the
		// tie-break: the ranked value with its rank, or the kept time.
		t.Run(c.plan, func(t *testing.T) { streamAgainstBatch(t, s, c.sel, false, c.plan) })
	}
}
