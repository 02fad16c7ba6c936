package engine

import (
	"context"
	"fmt"
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

// Every chain shape of pass-through operators (none, Filter, Filter and
// Project, UNION ALL, and the Exchange parallelism 2 adds) between each
// operator that can emit born columnar in streaming mode (StreamJoin,
// WindowAggregate) and each row-only consumer (UpdatingAggregate,
// UpdatingTopN): the gate sees the consumer through the chain, so no
// stage materialises a batch it was handed.
func TestNoMaterialisationThroughPassThroughChains(t *testing.T) {
	emitters := map[string]string{
		"StreamJoin": "SELECT B.channel AS g, B.price - A.reserve AS v FROM bids B JOIN auctions A ON B.auction = A.id",
		"WindowAggregate": "SELECT channel AS g, SUM(price) AS v FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(`dateTime`), INTERVAL '1' SECOND)) " +
			"GROUP BY channel, window_start, window_end",
	}
	chains := map[string]string{
		"none":           "SELECT g, v FROM (%[1]s) e",
		"Filter":         "SELECT g, v FROM (%[1]s) e WHERE v > 0",
		"Filter+Project": "SELECT upper(g) AS g, v * 2 AS v FROM (%[1]s) e WHERE v > 0",
		"UnionAll":       "SELECT g, v FROM (%[1]s) e WHERE v > 0 UNION ALL SELECT g, v FROM (%[1]s) e2 WHERE v <= 0",
	}
	consumers := map[string]string{
		"UpdatingAggregate": "SELECT g, COUNT(*) AS n, SUM(v) AS s FROM (%s) c GROUP BY g",
		// An updating top-n only reads an unbounded input; the outer LIMIT
		// ends the query.
		"UpdatingTopN": "SELECT * FROM (SELECT g, v FROM (%s) c ORDER BY v DESC LIMIT 5) t LIMIT 20",
	}
	for _, parallelism := range []int{1, 2} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
		eventTables(t, s, 5000, parallelism)
		mustExec(t, s, "SET 'execution.runtime-mode' = 'streaming'",
			"CREATE TABLE ubids WITH ('connector' = 'nexmark', 'table' = 'bid', 'batch.size' = '100')",
			"CREATE TABLE uauctions WITH ('connector' = 'nexmark', 'table' = 'auction', 'batch.size' = '100')")
		for en, e := range emitters {
			for cn, c := range chains {
				for un, u := range consumers {
					name := fmt.Sprintf("p%d/%s/%s/%s", parallelism, en, cn, un)
					q := "EXPLAIN ANALYZE " + fmt.Sprintf(u, fmt.Sprintf(c, e))
					if un == "UpdatingTopN" {
						q = strings.NewReplacer("bids", "ubids", "auctions", "uauctions").Replace(q)
					}
					o, err := s.Execute(context.Background(), q, nil, ExecOptions{})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					doc := o.Explain
					if docStage(doc, en) == nil || docStage(doc, un) == nil {
						t.Fatalf("%s: not the plan under test:\n%s", name, o.Text)
					}
					var emitted int64
					for _, st := range doc.Stages {
						if st.Operator == en {
							if g := st.Gate; g == nil || g.Columnar || !strings.HasPrefix(g.Cause, un) {
								t.Errorf("%s: %s gate %+v, want held back by the %s", name, en, g, un)
							}
							emitted += st.Runtime.RowsOut
						}
						if st.Runtime.BatchesMaterialized != 0 {
							t.Errorf("%s: %s materialised %d batches:\n%s", name, st.Operator, st.Runtime.BatchesMaterialized, o.Text)
						}
					}
					if emitted == 0 {
						t.Errorf("%s: the %s emitted nothing: the case proves nothing", name, en)
					}
				}
			}
		}
		s.Close()
		mem.AssertSize(t, 0)
	}
}
