package jsonfile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

type idCollector struct{ ids []int64 }

func (c *idCollector) Emit(_ context.Context, b *exec.Batch) error {
	c.ids = append(c.ids, b.Record().Column(0).(*array.Int64).Int64Values()...)
	return nil
}
func (c *idCollector) EmitWatermark(context.Context, int64) error { return nil }

// Splits read disjoint byte ranges whose lines, together, are the file:
// no line lost or read twice, whatever the cut points (long lines, a last
// line without a newline, blank lines).
func TestSplitsReadEveryLineOnce(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var sb strings.Builder
	want := []int64{}
	for i := 0; i < 3000; i++ {
		pad := strings.Repeat("x", (i*37)%300) // lines of very different lengths
		fmt.Fprintf(&sb, "{\"id\":%d,\"pad\":\"%s\"}\n", i, pad)
		if i%500 == 0 {
			sb.WriteString("\n") // a blank line
		}
		want = append(want, int64(i))
	}
	sb.WriteString(`{"id":3000,"pad":"last line, no newline"}`)
	want = append(want, 3000)
	path := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tbl, err := NewTable(map[string]string{"path": path, "format": "json"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl = tbl.WithAllocator(mem)
	for _, n := range []int{1, 2, 3, 7, 64} {
		progress := &exec.Progress{}
		got, _ := readSplits(t, tbl, n, progress)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%d splits: read %d lines, want %d, each once", n, len(got), len(want))
		}
		if r := progress.BytesRead.Load(); r != int64(sb.Len()) {
			t.Fatalf("%d splits: progress says %d bytes read of %d", n, r, sb.Len())
		}
	}
}

// Issue 19: a line longer than a read was searched for its end again on
// every read (a 100 MB line took 322 s), and every range inside a long
// line read on to its end. Each byte is now searched at most once or
// twice (a range's tail is the next range's head), and every line is
// still read exactly once, whatever the cut points.
func TestLongLinesAreSplitInLinearTime(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var sb strings.Builder
	var want []int64
	for i := 0; i < 6; i++ {
		pad := strings.Repeat("y", 10)
		if i == 2 || i == 4 {
			pad = strings.Repeat("x", 3<<20) // far longer than a read
		}
		fmt.Fprintf(&sb, "{\"id\":%d,\"pad\":\"%s\"}\n", i, pad)
		want = append(want, int64(i))
	}
	path := filepath.Join(t.TempDir(), "long.json")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tbl, err := NewTable(map[string]string{"path": path, "format": "json"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl = tbl.WithAllocator(mem)
	size := int64(sb.Len())
	for _, n := range []int{1, 2, 5, 16, 64} {
		got, searched := readSplits(t, tbl, n, &exec.Progress{})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%d splits: read ids %v, want %v", n, got, want)
		}
		if searched > 2*size {
			t.Errorf("%d splits: searched %d bytes for line ends in a file of %d", n, searched, size)
		}
	}
}

// readSplits reads tbl's first column (the ids) in n parts, sorted, and
// the bytes the parts searched for line ends.
func readSplits(t *testing.T, tbl *Table, n int, progress *exec.Progress) (ids []int64, searched int64) {
	t.Helper()
	for i := 0; i < n; i++ {
		spec := connectors.ScanSpec{Columns: []int{0}, BatchSize: 100, Progress: progress}
		if n > 1 {
			spec.Split, spec.Splits = i, n
		}
		src, err := tbl.Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		c := &idCollector{}
		if err := src.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ids...)
		searched += src.(*Source).searched
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, searched
}
