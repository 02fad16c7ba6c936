package nexmark

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// collector keeps what a source emits. It stops the source with
// exec.ErrStop after stopAfter batches when stopAfter > 0.
type collector struct {
	recs      []arrow.RecordBatch
	wms       []int64
	stopAfter int
	onBatch   func(b *exec.Batch) // called on every batch, before it is kept
}

func (c *collector) Emit(_ context.Context, b *exec.Batch) error {
	if !b.IsColumnar() {
		panic("nexmark source emitted a row batch")
	}
	if c.onBatch != nil {
		c.onBatch(b)
	}
	rec := b.Record()
	rec.Retain()
	c.recs = append(c.recs, rec)
	if c.stopAfter > 0 && len(c.recs) >= c.stopAfter {
		return exec.ErrStop
	}
	return nil
}

func (c *collector) EmitWatermark(_ context.Context, wm int64) error {
	c.wms = append(c.wms, wm)
	return nil
}

func (c *collector) release() {
	for _, r := range c.recs {
		r.Release()
	}
	c.recs = nil
}

// rows decodes every collected batch into one row list.
func (c *collector) rows() []exec.Row {
	var out []exec.Row
	for _, r := range c.recs {
		out = append(out, exec.DecodeRows(r)...)
	}
	return out
}

func (c *collector) numRows() int {
	n := 0
	for _, r := range c.recs {
		n += int(r.NumRows())
	}
	return n
}

func newTestTable(t testing.TB, mem memory.Allocator, opts map[string]string, declared *arrow.Schema) *Table {
	t.Helper()
	tab, err := NewTable(opts, declared)
	if err != nil {
		t.Fatalf("NewTable(%v): %v", opts, err)
	}
	return tab.WithAllocator(mem)
}

// scan runs a bounded table to the end and returns what it emitted; the
// caller releases the collector.
func scan(t testing.TB, tab *Table, spec connectors.ScanSpec) *collector {
	t.Helper()
	src, err := tab.OpenSource(spec)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	c := &collector{}
	if err := src.Run(context.Background(), c); err != nil {
		c.release()
		t.Fatalf("Run: %v", err)
	}
	return c
}

// scanRows is scan that decodes and releases.
func scanRows(t testing.TB, tab *Table, spec connectors.ScanSpec) []exec.Row {
	t.Helper()
	c := scan(t, tab, spec)
	defer c.release()
	return c.rows()
}
