package engine

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// LIMIT stops the scan early: a 1M-event bounded source feeding LIMIT 5
// produces a batch or two, not the whole table.
func TestLimitStopsScanEarly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	ctx := context.Background()
	if _, err := s.Execute(ctx, "CREATE TABLE nx WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '1000000')", nil, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := sql.Parse("SELECT auction, price FROM nx WHERE price > 0 LIMIT 5")
	if err != nil {
		t.Fatal(err)
	}
	var got int
	sink := ops.NewCollect(func(_ context.Context, b *exec.Batch) error { got += b.Len(); return nil })
	p, err := s.prepare(st.(*ast.Query), "SELECT auction, price FROM nx WHERE price > 0 LIMIT 5", sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Graph.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got != 5 {
		t.Fatalf("got %d rows, want 5", got)
	}
	var scanned int64
	for _, st := range p.Stages {
		if st.Source != nil {
			for _, in := range st.Instances {
				scanned += in.Stats.RowsOut.Load()
			}
		}
	}
	if scanned == 0 || scanned > 3*8192*int64(len(p.Stages[0].Instances)) {
		t.Fatalf("the scan produced %d rows for LIMIT 5: it did not stop early", scanned)
	}
}
