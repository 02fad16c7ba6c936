package jsonfile_test

import (
	"context"
	"os"
	osexec "os/exec"
	"regexp"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/jsonfile"
	"github.com/clink-sql/clink/exec"
)

var bidSchema = arrow.NewSchema([]arrow.Field{
	{Name: "auction", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "bidder", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "price", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "channel", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "url", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "dateTime", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "extra", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// sumPrice is count(*), sum(price) over the price column of each batch.
type sumPrice struct {
	col      int
	n, sum   int64
	fallback int
}

func (s *sumPrice) Emit(_ context.Context, b *exec.Batch) error {
	s.n += int64(b.Len())
	if !b.IsColumnar() {
		s.fallback++
		for _, r := range b.Rows() {
			s.sum += r[s.col].(int64)
		}
		return nil
	}
	for _, v := range b.Record().Column(s.col).(*array.Int64).Int64Values() {
		s.sum += v
	}
	return nil
}
func (s *sumPrice) EmitWatermark(context.Context, int64) error { return nil }

var duckTime = regexp.MustCompile(`in ([0-9.]+)s`)

// TestCompareDuckDB measures count(*), sum(price) over nexmark bid lines
// against DuckDB's read_json, one thread each, interleaved in one run. It
// reports; it asserts nothing about time. Run with
//
//	CLINK_BIDS_JSON=/tmp/bids.json go test -run CompareDuckDB -v ./connectors/jsonfile
//
// (TestWriteBids in connectors/jsonfmt writes the file.)
func TestCompareDuckDB(t *testing.T) {
	path := os.Getenv("CLINK_BIDS_JSON")
	if path == "" {
		t.Skip("set CLINK_BIDS_JSON to a file of nexmark bid lines")
	}
	duck := "/root/bin/duckpeer"
	if _, err := os.Stat(duck); err != nil {
		t.Skip("duckpeer not built")
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	q := "SELECT count(*), sum(price) FROM read_json('" + path + "', format='newline_delimited', columns={auction: 'BIGINT', bidder: 'BIGINT', price: 'BIGINT', channel: 'VARCHAR', url: 'VARCHAR', dateTime: 'TIMESTAMP', extra: 'VARCHAR'})"
	tbl, err := jsonfile.NewTable(map[string]string{"path": path, "format": "json"}, bidSchema)
	if err != nil {
		t.Fatal(err)
	}
	tbl = tbl.WithAllocator(memory.NewGoAllocator())
	best := map[string]time.Duration{}
	cpu := map[string]time.Duration{}
	keep := func(m map[string]time.Duration, k string, d time.Duration) {
		if m[k] == 0 || d < m[k] {
			m[k] = d
		}
	}
	// duckCPU runs a duckpeer query and returns its reported query time and
	// the process's CPU time.
	duckCPU := func(q string) (time.Duration, time.Duration) {
		cmd := osexec.Command(duck, "-threads", "1", q)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("duckpeer: %v\n%s", err, out)
		}
		var wall time.Duration
		if m := duckTime.FindSubmatch(out); m != nil {
			secs, _ := strconv.ParseFloat(string(m[1]), 64)
			wall = time.Duration(secs * float64(time.Second))
		}
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	var n int64
	for round := 0; round < 3; round++ {
		wall, c := duckCPU(q)
		_, c0 := duckCPU("SELECT 1")
		keep(best, "duckdb", wall)
		keep(cpu, "duckdb", c-c0) // minus the process's start-up
		for _, mode := range []string{"price", "all"} {
			cols, col := []int{2}, 0
			if mode == "all" {
				cols, col = nil, 2
			}
			src, err := tbl.OpenSource(connectors.ScanSpec{Columns: cols})
			if err != nil {
				t.Fatal(err)
			}
			s := &sumPrice{col: col}
			c0 := cpuTime()
			start := time.Now()
			if err := src.Run(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			keep(best, mode, time.Since(start))
			keep(cpu, mode, cpuTime()-c0)
			n = s.n
			if s.fallback > 0 {
				t.Errorf("%d batches fell back to rows", s.fallback)
			}
		}
	}
	rate := func(d time.Duration) float64 { return float64(n) / d.Seconds() / 1e6 }
	t.Logf("%d records, best of 3, one thread each (wall | CPU):", n)
	for _, k := range []struct{ key, name string }{{"duckdb", "duckdb read_json          "}, {"price", "clink, projected to price "}, {"all", "clink, all 7 columns      "}} {
		t.Logf("  %s %8v %5.2fM rec/s (%.2fx duckdb) | %8v %5.2fM rec/s (%.2fx duckdb)", k.name,
			best[k.key].Round(time.Millisecond), rate(best[k.key]), best["duckdb"].Seconds()/best[k.key].Seconds(),
			cpu[k.key].Round(time.Millisecond), rate(cpu[k.key]), cpu["duckdb"].Seconds()/cpu[k.key].Seconds())
	}
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
