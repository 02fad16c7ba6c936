package parquet

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// With 'sink.rolling-policy.rollover-interval', a directory sink publishes
// its file once it has been open that long: on the batch that finds it
// due, or on the timer when no batch comes; the statement's end publishes
// the rest and leaves no empty file. Every row is in exactly one file.
func TestSinkRollover(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	tbl, err := parquetFactory(map[string]string{"connector": "filesystem", "path": dir, rolloverOption: "1 s"}, sinkSchema)
	if err != nil {
		t.Fatal(err)
	}
	d := tbl.(*Dataset)
	d.WithAllocator(mem)
	s, err := d.NewSink(connectors.SinkSpec{Name: "out"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var now time.Time
	s.now = func() time.Time { return now }
	at := func(ms int) { now = time.UnixMilli(int64(ms)) }
	published := func() int {
		parts, _ := partFiles(t, dir)
		return len(parts)
	}
	if _, ok := s.NextProcessingTime(); ok {
		t.Fatal("a timer before any file is open")
	}
	at(0)
	mustFeed(t, mem, s, sinkRows(10))
	at(500)
	mustFeed(t, mem, s, sinkRows(10))
	if got := published(); got != 0 {
		t.Fatalf("%d files published before the interval", got)
	}
	if due, ok := s.NextProcessingTime(); !ok || due.UnixMilli() != 1000 {
		t.Fatalf("next timer %v %v, want 1 s", due.UnixMilli(), ok)
	}
	at(1200) // this batch finds the file due: it goes in, then the file is published
	mustFeed(t, mem, s, sinkRows(10))
	if got := published(); got != 1 {
		t.Fatalf("%d files published after the interval, want 1", got)
	}
	at(1500)
	mustFeed(t, mem, s, sinkRows(5))
	at(2400) // the timer comes early: nothing is due until 2.5 s
	if err := s.OnProcessingTime(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := published(); got != 1 {
		t.Fatalf("%d files published before the second interval, want 1", got)
	}
	at(2500) // no batch: the timer publishes
	if err := s.OnProcessingTime(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := published(); got != 2 {
		t.Fatalf("%d files published by the timer, want 2", got)
	}
	if err := s.Finish(context.Background(), 0, nil); err != nil {
		t.Fatal(err)
	}
	parts, others := partFiles(t, dir)
	if len(parts) != 2 || len(others) != 0 {
		t.Fatalf("after Finish: %v published, %v others; want 2 and none (no empty last file)", parts, others)
	}
	src, err := d.Open(connectors.ScanSpec{})
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	if err := src.Run(context.Background(), c); err != nil || c.numRows() != 35 {
		t.Fatalf("read back %d rows, err %v; want 35", c.numRows(), err)
	}
	c.release()
}

func mustFeed(t *testing.T, mem memory.Allocator, s *Sink, rows []exec.Row) {
	t.Helper()
	if err := feed(t, mem, s, rows, true); err != nil {
		t.Fatal(err)
	}
}
