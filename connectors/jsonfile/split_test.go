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
		var got []int64
		progress := &exec.Progress{}
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
			got = append(got, c.ids...)
		}
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%d splits: read %d lines, want %d, each once", n, len(got), len(want))
		}
		if r := progress.BytesRead.Load(); r != int64(sb.Len()) {
			t.Fatalf("%d splits: progress says %d bytes read of %d", n, r, sb.Len())
		}
	}
}
