package parquet

import (
	"context"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

const fixtures = "../../testdata/parquet/"

// collector is an exec.Emitter that keeps what it is given.
type collector struct {
	batches   []*exec.Batch
	wms       []int64
	stopAfter int // answer ErrStop on this emit (0: never)
	onEmit    func(n int)
}

func (c *collector) Emit(ctx context.Context, b *exec.Batch) error {
	b.Retain()
	c.batches = append(c.batches, b)
	if c.onEmit != nil {
		c.onEmit(len(c.batches))
	}
	if c.stopAfter > 0 && len(c.batches) >= c.stopAfter {
		return exec.ErrStop
	}
	return nil
}

func (c *collector) EmitWatermark(ctx context.Context, wm int64) error {
	c.wms = append(c.wms, wm)
	return nil
}

func (c *collector) rows() []exec.Row {
	var out []exec.Row
	for _, b := range c.batches {
		out = append(out, exec.DecodeRows(b.Record())...)
	}
	return out
}

func (c *collector) numRows() int {
	n := 0
	for _, b := range c.batches {
		n += b.Len()
	}
	return n
}

func (c *collector) release() {
	for _, b := range c.batches {
		b.Release()
	}
	c.batches = nil
}

// scan opens path, runs a scan of spec and returns the collector (the
// caller releases it) and the source.
func scan(t *testing.T, mem memory.Allocator, path string, declared *arrow.Schema, spec connectors.ScanSpec) (*collector, *Source) {
	t.Helper()
	tbl, err := Open(path, declared)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	tbl.WithAllocator(mem)
	src, err := tbl.NewSource(spec)
	if err != nil {
		t.Fatalf("NewSource: %v", err)
	}
	c := &collector{}
	if err := src.Run(context.Background(), c); err != nil {
		c.release()
		t.Fatalf("Run: %v", err)
	}
	return c, src
}

// openWith opens the table at path with allocations from mem.
func openWith(t *testing.T, path string, mem memory.Allocator) *Table {
	t.Helper()
	tbl, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	tbl.WithAllocator(mem)
	return tbl
}

func checkedMem(t *testing.T) *memory.CheckedAllocator {
	return memory.NewCheckedAllocator(memory.NewGoAllocator())
}

// writeRecordFile writes rec to a new Parquet file at path with arrow-go's
// writer (the other tool whose files the scan must read).
func writeRecordFile(t *testing.T, path string, rec arrow.RecordBatch, props *pq.WriterProperties, aprops pqarrow.ArrowWriterProperties) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, props, aprops)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// testRunState is what Run reads a file with, for a test that reads ranges
// itself.
func testRunState(src *Source, mem memory.Allocator, osf *os.File, pf *parquet.File) *runState {
	rs := &runState{mem: mem, readers: make([]colReader, len(src.cols)), hints: make([]sizeHint, len(src.cols)), osf: osf, pf: pf}
	for i := range rs.readers {
		rs.readers[i].name, rs.readers[i].mem, rs.readers[i].counts = src.names[i], mem, &src.pages
	}
	return rs
}
