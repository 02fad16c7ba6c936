package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// The benchmarks run SQL end to end over a nexmark-shaped Parquet file
// (bid columns) that they generate once. Compare with DuckDB on the same
// file: CLINK_BENCH_FILE=path keeps the file (written when missing), so
// ../shared/tools/duckpeer can run the same query on it (see README,
// "Performance").

// benchBids is the rows of the generated file: 2M, or CLINK_BENCH_ROWS
// (e.g. 10000000 to see how fixed per-query costs amortise).
var benchBids = func() int {
	if n, err := strconv.Atoi(os.Getenv("CLINK_BENCH_ROWS")); err == nil && n > 0 {
		return n
	}
	return 2_000_000
}()

var (
	benchOnce sync.Once
	benchPath string
	benchErr  error
)

func benchFile(b *testing.B) string {
	benchOnce.Do(func() {
		benchPath = os.Getenv("CLINK_BENCH_FILE")
		if benchPath == "" {
			dir, err := os.MkdirTemp("", "clink-bench")
			if err != nil {
				benchErr = err
				return
			}
			benchPath = filepath.Join(dir, "bid.parquet")
		}
		if _, err := os.Stat(benchPath); err == nil {
			return
		}
		benchErr = writeBidParquet(benchPath, benchBids)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchPath
}

// writeBidParquet writes n nexmark bids with the generator (snappy, 1M-row
// row groups, dictionary on: what other writers do by default).
// CLINK_BENCH_ROWGROUP=rows sets another row group size, e.g. 500000 for
// four equal row groups, two per core at parallelism 2.
func writeBidParquet(path string, n int) error {
	rg := int64(1 << 20)
	if v := os.Getenv("CLINK_BENCH_ROWGROUP"); v != "" {
		r, err := strconv.ParseInt(v, 10, 64)
		if err != nil || r <= 0 {
			return fmt.Errorf("CLINK_BENCH_ROWGROUP=%q: want a positive number of rows", v)
		}
		rg = r
	}
	f, ok := connectors.Lookup("nexmark")
	if !ok {
		return fmt.Errorf("no nexmark connector")
	}
	// bids are 46 of every 50 events
	events := (n/46 + 1) * 50
	tbl, err := f(map[string]string{"table": "bid", "events.num": fmt.Sprint(events)}, nil)
	if err != nil {
		return err
	}
	src, err := tbl.Open(connectors.ScanSpec{})
	if err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer out.Close()
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rg), parquet.WithCompression(compress.Codecs.Snappy))
	w, err := pqarrow.NewFileWriter(tbl.Schema(), out, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	em := &writeEmitter{w: w, left: n}
	if err := src.Run(context.Background(), em); err != nil {
		return err
	}
	return w.Close()
}

type writeEmitter struct {
	w    *pqarrow.FileWriter
	left int
}

func (e *writeEmitter) Emit(ctx context.Context, b *exec.Batch) error {
	if e.left <= 0 {
		return exec.ErrStop
	}
	rec := b.Record()
	if int(rec.NumRows()) > e.left {
		rec = rec.NewSlice(0, int64(e.left))
		defer rec.Release()
	}
	e.left -= int(rec.NumRows())
	return e.w.WriteBuffered(rec)
}

func (e *writeEmitter) EmitWatermark(context.Context, int64) error { return nil }

type discardWriter struct{ rows int64 }

func (w *discardWriter) Columns(*arrow.Schema, bool) error { return nil }
func (w *discardWriter) Batch(b *exec.Batch) error         { w.rows += int64(b.Len()); return nil }

func benchQuery(b *testing.B, query string) {
	TuneRuntime() // the collector settings clinksh and the kernel run with
	path := benchFile(b)
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	// One thread by default, to compare with DuckDB at threads = 1.
	par := os.Getenv("CLINK_BENCH_PARALLELISM")
	if par == "" {
		par = "1"
	}
	if _, err := s.Execute(context.Background(), "SET 'parallelism' = '"+par+"'", nil, ExecOptions{}); err != nil {
		b.Fatal(err)
	}
	q := fmt.Sprintf(query, path)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Execute(context.Background(), q, &discardWriter{}, ExecOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchBids)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkFullScan reads every column of every row.
func BenchmarkFullScan(b *testing.B) {
	benchQuery(b, "SELECT COUNT(*), SUM(price), MAX(bidder), MAX(auction), MAX(channel), MAX(url), MAX(dateTime), MAX(extra) FROM '%s'")
}

// BenchmarkScanFilterAggregate is the scan + filter + aggregate.
func BenchmarkScanFilterAggregate(b *testing.B) {
	benchQuery(b, "SELECT channel, COUNT(*), SUM(price) FROM '%s' WHERE price > 1000 GROUP BY channel")
}

// BenchmarkGroupByString groups on url (~10k values, dictionary codes
// from the scan).
func BenchmarkGroupByString(b *testing.B) {
	benchQuery(b, "SELECT url, COUNT(*), MAX(price) FROM '%s' GROUP BY url")
}

// BenchmarkGroupByHighCardinality groups on the auction id.
func BenchmarkGroupByHighCardinality(b *testing.B) {
	benchQuery(b, "SELECT auction, COUNT(*), MAX(price) FROM '%s' GROUP BY auction")
}

// BenchmarkGroupByShuffled groups on the auction id with AVG, which has no
// two-phase plan: at parallelism > 1 every scanned row crosses the keyed
// exchange (the other GROUP BY benchmarks ship only partial aggregates).
func BenchmarkGroupByShuffled(b *testing.B) {
	benchQuery(b, "SELECT auction, COUNT(*), AVG(price) FROM '%s' GROUP BY auction")
}
