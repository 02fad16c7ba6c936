package jsonfmt

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/nexmark"
	"github.com/clink-sql/clink/exec"
)

// lineCollector encodes every emitted batch as JSON lines.
type lineCollector struct {
	enc   *Encoder
	lines [][]byte
}

func (c *lineCollector) Emit(_ context.Context, b *exec.Batch) error {
	rec := b.Record()
	if c.enc == nil {
		c.enc = NewEncoder(rec.Schema())
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		c.lines = append(c.lines, c.enc.AppendRow(nil, rec, i))
	}
	return nil
}

func (c *lineCollector) EmitWatermark(context.Context, int64) error { return nil }

// bidLines generates n nexmark bids as JSON lines.
func bidLines(tb testing.TB, n int) ([][]byte, *arrow.Schema) {
	tb.Helper()
	tbl, err := nexmark.NewTable(map[string]string{"table": "bid", "events.num": strconv.Itoa(n * 50 / 46)}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	src, err := tbl.OpenSource(connectors.ScanSpec{})
	if err != nil {
		tb.Fatal(err)
	}
	c := &lineCollector{}
	if err := src.Run(context.Background(), c); err != nil {
		tb.Fatal(err)
	}
	// One contiguous buffer, as a file chunk or a fetch response is.
	var all []byte
	for _, l := range c.lines {
		all = append(all, l...)
		all = append(all, '\n')
	}
	out := make([][]byte, len(c.lines))
	off := 0
	for i, l := range c.lines {
		out[i] = all[off : off+len(l)]
		off += len(l) + 1
	}
	return out, src.Schema()
}

// BenchmarkDecodeBids decodes nexmark bid lines in 8192-record batches;
// it reports records/s on one core. "price" decodes only the price column,
// as SELECT COUNT(*), SUM(price) does: the other six fields are skipped
// ("price") or, as the sources now decode, validated without being built
// ("price-checked").
// Compare with
//
//	CLINK_WRITE_BIDS=/tmp/bids.json go test -run TestWriteBids ./connectors/jsonfmt
//	/root/bin/duckpeer -threads 1 "SELECT count(*), sum(price) FROM read_json('/tmp/bids.json', ...)"
func BenchmarkDecodeBids(b *testing.B) {
	for _, mode := range []string{"columnar", "columnar-norecycle", "row", "price", "price-checked"} {
		b.Run(mode, func(b *testing.B) {
			lines, schema := bidLines(b, 1<<16)
			recycleOn = mode != "columnar-norecycle"
			defer func() { recycleOn = true }()
			var d *Decoder
			var err error
			price := schema.FieldIndices("price")[0]
			switch mode {
			case "price": // the other fields skipped by their syntax alone
				d, err = NewDecoder(memory.NewGoAllocator(), arrow.NewSchema([]arrow.Field{schema.Field(price)}, nil), Options{})
			case "price-checked": // as the sources decode: the others validated, not built
				d, err = NewProjectedDecoder(memory.NewGoAllocator(), schema, []int{price}, Options{})
			default:
				d, err = NewDecoder(memory.NewGoAllocator(), schema, Options{RowOnly: mode == "row"})
			}
			if err != nil {
				b.Fatal(err)
			}
			var bytesTotal int
			for _, l := range lines {
				bytesTotal += len(l) + 1
			}
			const batch = 8192
			b.SetBytes(int64(bytesTotal))
			cpu0 := cpuTime()
			b.ResetTimer()
			recs := 0
			for i := 0; i < b.N; i++ {
				for off := 0; off < len(lines); off += batch {
					res, err := d.Decode(lines[off:min(off+batch, len(lines))])
					if err != nil {
						b.Fatal(err)
					}
					if res.Rec != nil {
						res.Rec.Release()
					}
					recs += res.N
				}
			}
			b.ReportMetric(float64(recs)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(recs), "ns/record")
			// CPU time (all threads, GC included) is steadier than wall time
			// on a shared machine.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(recs), "cpu-ns/record")
		})
	}
}

func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestWriteBids writes bid lines for the DuckDB comparison when asked.
func TestWriteBids(t *testing.T) {
	path := os.Getenv("CLINK_WRITE_BIDS")
	if path == "" {
		t.Skip("set CLINK_WRITE_BIDS=file to write nexmark bid lines")
	}
	n, _ := strconv.Atoi(os.Getenv("CLINK_WRITE_BIDS_N"))
	if n == 0 {
		n = 4 << 20
	}
	lines, _ := bidLines(t, n)
	if err := os.WriteFile(path, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
