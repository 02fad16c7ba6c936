package jsonfile

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

type sumRows struct{ n, sum int64 }

func (c *sumRows) Emit(_ context.Context, b *exec.Batch) error {
	c.n += int64(b.Len())
	if b.IsColumnar() {
		for _, v := range b.Record().Column(0).(*array.Int64).Int64Values() {
			c.sum += v
		}
	}
	return nil
}
func (c *sumRows) EmitWatermark(context.Context, int64) error { return nil }

// TestShareBalance reads a big NDJSON file (CLINK_BIDS_JSON, the bench's
// bids.json) in CLINK_BALANCE_PARTS parts (default 2) at once, alternating
// static byte ranges with the shared piece queue at each piece size of
// CLINK_BALANCE_PIECES (bytes, comma-separated; default the package's),
// and reports each way's times, process CPU and how long the first part to
// finish waited for the last. It reports; it asserts only that every way
// reads the same rows. The machine's other load moves the times: compare
// the ways within one run.
func TestShareBalance(t *testing.T) {
	path := os.Getenv("CLINK_BIDS_JSON")
	if path == "" {
		t.Skip("set CLINK_BIDS_JSON to a big NDJSON file of nexmark bids")
	}
	parts := 2
	if v := os.Getenv("CLINK_BALANCE_PARTS"); v != "" {
		parts, _ = strconv.Atoi(v)
	}
	modes := []int64{0} // 0: static ranges
	if v := os.Getenv("CLINK_BALANCE_PIECES"); v != "" {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil || n <= 0 {
				t.Fatalf("CLINK_BALANCE_PIECES: %q", f)
			}
			modes = append(modes, n)
		}
	} else {
		modes = append(modes, pieceBytes)
	}
	sch := arrow.NewSchema([]arrow.Field{{Name: "price", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	tbl, err := NewTable(map[string]string{"path": path, "format": "json"}, sch)
	if err != nil {
		t.Fatal(err)
	}
	type result struct{ times, cpus, gaps []time.Duration }
	res := make([]result, len(modes))
	var rows int64
	defer func(old int64) { pieceBytes = old }(pieceBytes)
	for r := 0; r < 8; r++ {
		for k := range modes {
			m := (k + r) % len(modes) // rotate the order: no way always runs first
			var share *connectors.Share
			if modes[m] > 0 {
				share, pieceBytes = &connectors.Share{}, modes[m]
			}
			var wg sync.WaitGroup
			ends := make([]time.Time, parts)
			counts := make([]sumRows, parts)
			cpu0, start := cpuTime(), time.Now()
			for i := 0; i < parts; i++ {
				src, err := tbl.OpenSource(connectors.ScanSpec{Split: i, Splits: parts, Share: share})
				if err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := src.Run(context.Background(), &counts[i]); err != nil {
						t.Error(err)
					}
					ends[i] = time.Now()
				}()
			}
			wg.Wait()
			res[m].times = append(res[m].times, time.Since(start))
			res[m].cpus = append(res[m].cpus, cpuTime()-cpu0)
			res[m].gaps = append(res[m].gaps, slices.MaxFunc(ends, time.Time.Compare).Sub(slices.MinFunc(ends, time.Time.Compare)))
			var n int64
			for _, c := range counts {
				n += c.n
			}
			if rows == 0 {
				rows = n
			} else if n != rows {
				t.Fatalf("%d rows read one way, %d another", rows, n)
			}
		}
	}
	ms := func(ds []time.Duration) string {
		var s []string
		for _, d := range ds {
			s = append(s, strconv.FormatInt(d.Milliseconds(), 10))
		}
		sorted := slices.Sorted(slices.Values(ds))
		return fmt.Sprintf("[%s] median %d", strings.Join(s, " "), sorted[len(sorted)/2].Milliseconds())
	}
	for m, r := range res {
		name := "static"
		if modes[m] > 0 {
			name = fmt.Sprintf("pieces of %d MB", modes[m]>>20)
		}
		t.Logf("%s, %d parts: wall ms %s; CPU ms %s; finish gap ms %s", name, parts, ms(r.times), ms(r.cpus), ms(r.gaps))
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
