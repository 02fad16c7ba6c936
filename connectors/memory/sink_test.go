package memory

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// feed runs batches of ids [0,10), [10,25), [25,26) through a new sink of
// tbl, columnar or as row batches, and finishes it. It returns how many
// batches the columnar hook took and how many were materialised.
func feed(t *testing.T, tbl *Table, mem memory.Allocator, columnar bool) (handled int, materialised int64) {
	t.Helper()
	sink, err := tbl.OpenSink(connectors.SinkSpec{Name: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	if caps := sink.Capabilities(); !caps.IngestsColumnar {
		t.Fatal("the sink does not ingest columnar batches")
	}
	before := exec.Global.BatchesMaterialized.Load()
	for _, r := range [][2]int64{{0, 10}, {10, 25}, {25, 26}} {
		rec := makeRecord(mem, r[0], r[1])
		var b *exec.Batch
		if columnar {
			b = exec.NewColumnarBatch(rec)
		} else {
			b = exec.NewRowBatch(testSchema, exec.DecodeRows(rec))
			rec.Release()
		}
		took, err := exec.Dispatch(context.Background(), sink, columnar, 0, b, nil)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
		if took {
			handled++
		}
	}
	materialised = exec.Global.BatchesMaterialized.Load() - before
	if n := tbl.NumRows(); n != 0 {
		t.Errorf("the table shows %d rows before the statement finished", n)
	}
	if err := sink.Finish(context.Background(), 0, nil); err != nil {
		t.Fatal(err)
	}
	return handled, materialised
}

// INSERT's sink keeps columnar batches without materialising them, its
// row path gives the same table, and the rows appear at Finish.
func TestSinkColumnarAndRowPathsAgree(t *testing.T) {
	mem := checked(t)
	var tables [2][]string
	for i, columnar := range []bool{true, false} {
		tbl := NewTable(testSchema, mem)
		handled, mat := feed(t, tbl, mem, columnar)
		if columnar && (handled != 3 || mat != 0) {
			t.Errorf("columnar input: the hook took %d of 3 batches, %d materialised (want 3, 0)", handled, mat)
		}
		if !columnar && handled != 0 {
			t.Errorf("row input went through the columnar hook")
		}
		got := scan(t, tbl, connectors.ScanSpec{})
		tables[i] = got.rows
		tbl.Close()
	}
	if len(tables[0]) != 26 || !slices.Equal(tables[0], tables[1]) {
		t.Fatalf("columnar path %v\nrow path %v", tables[0], tables[1])
	}
	for i, r := range tables[0] {
		if r != wantRow(int64(i)) {
			t.Errorf("row %d = %q, want %q", i, r, wantRow(int64(i)))
		}
	}
}

// A statement that fails part-way adds nothing and keeps no memory.
func TestSinkFailedStatementAddsNothing(t *testing.T) {
	mem := checked(t)
	tbl := NewTable(testSchema, mem)
	defer tbl.Close()
	appendRange(t, tbl, mem, 0, 5)
	sink, err := tbl.NewSink(connectors.SinkSpec{Name: "m"})
	if err != nil {
		t.Fatal(err)
	}
	good := exec.NewColumnarBatch(makeRecord(mem, 5, 9))
	if _, err := exec.Dispatch(context.Background(), sink, true, 0, good, nil); err != nil {
		t.Fatal(err)
	}
	good.Release()
	other := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}}, nil)
	bad := exec.NewRowBatch(other, []exec.Row{{int32(1)}})
	_, err = exec.Dispatch(context.Background(), sink, true, 0, bad, nil)
	if err == nil || !strings.Contains(err.Error(), "memory table 'm'") {
		t.Fatalf("a batch of the wrong schema: error %v", err)
	}
	sink.Close() // the runner closes without Finish after an error
	if n := tbl.NumRows(); n != 5 {
		t.Errorf("the failed statement left %d rows, want 5", n)
	}
}

// Sinks committing concurrently (two INSERTs) lose no rows.
func TestConcurrentSinks(t *testing.T) {
	mem := checked(t)
	tbl := NewTable(testSchema, mem)
	defer tbl.Close()
	done := make(chan error, 2)
	for k := int64(0); k < 2; k++ {
		go func() {
			for i := int64(0); i < 20; i++ {
				sink, err := tbl.NewSink(connectors.SinkSpec{})
				if err != nil {
					done <- err
					return
				}
				lo := (k*20 + i) * 3
				b := exec.NewColumnarBatch(makeRecord(mem, lo, lo+3))
				_, err = exec.Dispatch(context.Background(), sink, true, 0, b, nil)
				b.Release()
				if err == nil {
					err = sink.Finish(context.Background(), 0, nil)
				}
				sink.Close()
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	got := scan(t, tbl, connectors.ScanSpec{})
	slices.Sort(got.rows)
	want := make([]string, 120)
	for i := range want {
		want[i] = wantRow(int64(i))
	}
	slices.Sort(want)
	if !slices.Equal(got.rows, want) {
		t.Errorf("after two concurrent writers the table has %d rows, want 120", len(got.rows))
	}
}
