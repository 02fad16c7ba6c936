package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/explain"
)

// The repro of issue 19: StreamJoin -> Filter -> Project ->
// UpdatingAggregate in streaming mode. The join's gate saw only the
// Filter (which ingests columnar) and emitted born columnar, and the
// updating aggregate behind the Filter and Project materialised every
// batch. The gate now looks through the pass-through operators to the
// aggregate: the join emits rows, EXPLAIN names the aggregate and the
// operators crossed, and no stage decodes a batch it was handed.
func TestStreamJoinGateSeesThroughPassThrough(t *testing.T) {
	for _, parallelism := range []int{1, 2} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
		eventTables(t, s, 20000, parallelism)
		mustExec(t, s, "SET 'execution.runtime-mode' = 'streaming'")
		q := "EXPLAIN ANALYZE SELECT B.channel, COUNT(*) AS n, SUM(B.price - A.reserve) AS over " +
			"FROM bids B JOIN auctions A ON B.auction = A.id WHERE B.price > A.reserve / 1000 GROUP BY B.channel"
		o, err := s.Execute(context.Background(), q, nil, ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		doc := o.Explain
		join := docStage(doc, "StreamJoin")
		if join == nil || docStage(doc, "UpdatingAggregate") == nil || docStage(doc, "Filter") == nil {
			t.Fatalf("parallelism %d: not the plan under test:\n%s", parallelism, o.Text)
		}
		g := join.Gate
		if g == nil || g.Columnar || g.Reason != "consumer-ingests-rows" || !strings.HasPrefix(g.Cause, "UpdatingAggregate through Filter") {
			t.Errorf("parallelism %d: join gate %+v, want held back by the UpdatingAggregate through the Filter", parallelism, g)
		}
		if !strings.Contains(o.Text, "output held back to rows: consumer-ingests-rows (UpdatingAggregate through Filter") {
			t.Errorf("parallelism %d: EXPLAIN does not name the deciding operator:\n%s", parallelism, o.Text)
		}
		var rows int64
		for _, st := range doc.Stages {
			if st.Runtime == nil {
				t.Fatalf("parallelism %d: stage %s has no counters", parallelism, st.Operator)
			}
			if st.Runtime.BatchesMaterialized != 0 {
				t.Errorf("parallelism %d: %s materialised %d batches (%d rows)", parallelism, st.Operator,
					st.Runtime.BatchesMaterialized, st.Runtime.RowsMaterialized)
			}
			if st.Operator == "StreamJoin" {
				rows += st.Runtime.RowsOut
			}
		}
		if rows == 0 {
			t.Errorf("parallelism %d: the join emitted nothing: the test proves nothing", parallelism)
		}
		s.Close()
		mem.AssertSize(t, 0)
	}
}

// docStage is the first stage of doc running op.
func docStage(doc *explain.Document, op string) *explain.Stage {
	for i := range doc.Stages {
		if doc.Stages[i].Operator == op {
			return &doc.Stages[i]
		}
	}
	return nil
}
