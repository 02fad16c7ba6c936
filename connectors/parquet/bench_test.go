package parquet

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/clink-sql/clink/connectors"
	cexec "github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

const benchRows = 2_000_000

var bidSchema = arrow.NewSchema([]arrow.Field{
	{Name: "auction", Type: arrow.PrimitiveTypes.Int64},
	{Name: "bidder", Type: arrow.PrimitiveTypes.Int64},
	{Name: "price", Type: arrow.PrimitiveTypes.Int64},
	{Name: "channel", Type: arrow.BinaryTypes.String},
	{Name: "url", Type: arrow.BinaryTypes.String},
	{Name: "dateTime", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
	{Name: "extra", Type: arrow.BinaryTypes.String},
}, nil)

// writeBids writes a nexmark-bid-shaped file (arrow-go writer, snappy,
// 128k-row groups, dictionary where it pays, as a typical writer would).
func writeBids(b *testing.B, path string, n int) {
	mem := memory.NewGoAllocator()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	props := pq.NewWriterProperties(pq.WithCompression(compress.Codecs.Snappy), pq.WithMaxRowGroupLength(128*1024))
	w, err := pqarrow.NewFileWriter(bidSchema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(7))
	channels := []string{"Google", "Facebook", "Baidu", "Apple"}
	letters := "abcdefghijklmnopqrstuvwxyz"
	randStr := func(n int) string {
		buf := make([]byte, n)
		for i := range buf {
			buf[i] = letters[rng.Intn(len(letters))]
		}
		return string(buf)
	}
	bld := array.NewRecordBuilder(mem, bidSchema)
	defer bld.Release()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i := 0; i < n; i++ {
		bld.Field(0).(*array.Int64Builder).Append(1000 + int64(rng.Intn(10000)))
		bld.Field(1).(*array.Int64Builder).Append(1000 + int64(rng.Intn(100000)))
		bld.Field(2).(*array.Int64Builder).Append(int64(rng.Intn(10_000_000)))
		ch := channels[rng.Intn(4)]
		if rng.Intn(10) == 0 {
			ch = "channel-" + strconv.Itoa(rng.Intn(10000))
		}
		bld.Field(3).(*array.StringBuilder).Append(ch)
		bld.Field(4).(*array.StringBuilder).Append("https://www.nexmark.com/" + randStr(5) + "/" + randStr(5) + "/" + randStr(5) + "/item.htm?query=1&channel_id=" + strconv.Itoa(rng.Intn(1<<30)))
		bld.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(base + int64(i)))
		bld.Field(6).(*array.StringBuilder).Append(randStr(rng.Intn(40)))
		if (i+1)%65536 == 0 || i == n-1 {
			rec := bld.NewRecordBatch()
			if err := w.WriteBuffered(rec); err != nil {
				b.Fatal(err)
			}
			rec.Release()
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// bidTable opens the benchmarks' 2M-row bid file: CLINK_BENCH_BID names
// a file to keep between runs (for profiling), written when missing; else
// one in the benchmark's temporary directory.
func bidTable(b *testing.B) (string, *Table) {
	path := os.Getenv("CLINK_BENCH_BID")
	if path == "" {
		path = filepath.Join(b.TempDir(), "bid.parquet")
	}
	if _, err := os.Stat(path); err != nil {
		writeBids(b, path, benchRows)
	}
	tbl, err := Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	return path, tbl
}

// aggregator computes count(*), sum(price), max(length(url)) over batches
// of (price, url), as the DuckDB query does, straight from Arrow.
type aggregator struct {
	count, sum int64
	maxLen     int
}

func (a *aggregator) Emit(_ context.Context, b *cexec.Batch) error {
	rec := b.Record()
	a.count += rec.NumRows()
	for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
		a.sum += v
	}
	offs := rec.Column(1).(*array.String).ValueOffsets()
	for i := 1; i < len(offs); i++ {
		if l := int(offs[i] - offs[i-1]); l > a.maxLen {
			a.maxLen = l // the URLs are ASCII: bytes = characters
		}
	}
	return nil
}

func (a *aggregator) EmitWatermark(context.Context, int64) error { return nil }

// channelSummer sums price and the byte length of channel over batches
// of (price, channel), reading channel as whatever the scan made it: a
// plain string column (offsets) or a dictionary array (codes into the
// chunk's dictionary). Both forms must give the same sums; it also counts
// the dictionary batches, so a variant cannot pass without producing them.
type channelSummer struct {
	rows, sum, chars int64
	dictBatches      int
}

func (a *channelSummer) Emit(_ context.Context, b *cexec.Batch) error {
	rec := b.Record()
	a.rows += rec.NumRows()
	for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
		a.sum += v
	}
	switch ch := rec.Column(1).(type) {
	case *array.String:
		offs := ch.ValueOffsets()
		a.chars += int64(offs[len(offs)-1] - offs[0])
	case *array.Dictionary:
		a.dictBatches++
		offs := ch.Dictionary().(*array.String).ValueOffsets()
		for _, x := range ch.Indices().(*array.Int32).Int32Values() {
			a.chars += int64(offs[x+1] - offs[x])
		}
	default:
		return fmt.Errorf("channel column is %T", ch)
	}
	return nil
}

func (a *channelSummer) EmitWatermark(context.Context, int64) error { return nil }

type discard struct{ rows int64 }

func (d *discard) Emit(_ context.Context, b *cexec.Batch) error {
	d.rows += int64(b.Len())
	return nil
}
func (d *discard) EmitWatermark(context.Context, int64) error { return nil }

// BenchmarkScan scans a 2M-row nexmark bid file single-threaded: the
// columns of the DuckDB comparison query (price, url) with its aggregates,
// and all seven columns. With duckpeer on PATH it also times
// `duckpeer -threads 1` on the same query and file and reports the ratio.
//
//	go test ./connectors/parquet/ -run XXX -bench BenchmarkScan -benchtime 5x
func BenchmarkScan(b *testing.B) {
	path, tbl := bidTable(b)
	// Warm up (page cache, allocator) and drop the generator's garbage so
	// the first sub-benchmark is not charged for them.
	if src, err := tbl.NewSource(connectors.ScanSpec{}); err == nil {
		src.Run(context.Background(), &discard{})
	}
	runtime.GC()
	var clinkRate float64
	var want aggregator
	for _, bs := range []int{1024, 8192, 32768} {
		b.Run(fmt.Sprintf("price_url/batch%d", bs), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				src, err := tbl.NewSource(connectors.ScanSpec{Columns: []int{2, 4}, BatchSize: bs})
				if err != nil {
					b.Fatal(err)
				}
				var a aggregator
				if err := src.Run(context.Background(), &a); err != nil {
					b.Fatal(err)
				}
				if a.count != benchRows {
					b.Fatalf("%d rows", a.count)
				}
				want = a
			}
			rate := float64(benchRows) * float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(rate, "rows/s")
			if bs == DefaultBatchSize {
				clinkRate = rate
			}
		})
	}
	// price + channel, the columns of the string GROUP BY, as plain strings
	// and as dictionary arrays (the codes the file already has).
	price, channel := tbl.Schema().FieldIndices("price"), tbl.Schema().FieldIndices("channel")
	if len(price) != 1 || len(channel) != 1 {
		b.Fatalf("%s has no price or channel column", path)
	}
	var plainSums channelSummer
	for _, dict := range []bool{false, true} {
		name := "price_channel/plain"
		if dict {
			name = "price_channel/dict"
		}
		b.Run(name, func(b *testing.B) {
			var a channelSummer
			for i := 0; i < b.N; i++ {
				src, err := tbl.NewSource(connectors.ScanSpec{Columns: []int{price[0], channel[0]}})
				if err != nil {
					b.Fatal(err)
				}
				if dict {
					src.SetDictionaryColumns([]int{1})
				}
				a = channelSummer{}
				if err := src.Run(context.Background(), &a); err != nil {
					b.Fatal(err)
				}
			}
			rows := a.rows
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows*int64(b.N)), "ns/row")
			if !dict {
				plainSums = a
				return
			}
			if a.dictBatches == 0 {
				b.Fatal("no dictionary batch from a dictionary-encoded channel column")
			}
			if a.sum != plainSums.sum || a.chars != plainSums.chars || a.rows != plainSums.rows {
				b.Fatalf("dictionary scan: %+v, plain scan: %+v", a, plainSums)
			}
		})
	}
	b.Run("all_columns", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			src, _ := tbl.NewSource(connectors.ScanSpec{})
			var d discard
			if err := src.Run(context.Background(), &d); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	duck, err := exec.LookPath("duckpeer")
	if err != nil {
		b.Log("duckpeer not on PATH: no DuckDB comparison")
		return
	}
	b.Run("duckdb_threads1", func(b *testing.B) {
		q := fmt.Sprintf("SELECT count(*), sum(price), max(length(url)) FROM '%s'", path)
		re := regexp.MustCompile(`query 1: \d+ rows in ([0-9.]+)s`)
		best := 0.0
		for i := 0; i < b.N; i++ {
			out, err := exec.Command(duck, "-threads", "1", q).CombinedOutput()
			if err != nil {
				b.Fatalf("duckpeer: %v\n%s", err, out)
			}
			m := re.FindSubmatch(out)
			if m == nil {
				b.Fatalf("no timing in %s", out)
			}
			sec, _ := strconv.ParseFloat(string(m[1]), 64)
			if best == 0 || sec < best {
				best = sec
			}
			if i == 0 {
				wantLine := fmt.Sprintf("%d,%d,%d", want.count, want.sum, want.maxLen)
				if !regexp.MustCompile(regexp.QuoteMeta(wantLine)).Match(out) {
					b.Errorf("DuckDB answered %s, clink %s", out, wantLine)
				}
			}
		}
		duckRate := float64(benchRows) / best
		b.ReportMetric(duckRate, "duck_rows/s")
		if clinkRate > 0 {
			b.ReportMetric(clinkRate/duckRate, "clink/duck")
		}
	})
}

// BenchmarkScanLate scans every column of the 2M-row bid file with a
// predicate on one column pushed into the scan: late materialisation
// decodes the other six columns only at the rows that pass. "off" is the
// same scan without it (ScanSpec.RowGroupsOnly), which decodes every row
// and leaves the predicate to the Filter above. The passing row counts
// must agree (rows the late scan hands on unchecked are counted by
// evaluating the predicate on what it emits).
//
//	go test ./connectors/parquet/ -run XXX -bench BenchmarkScanLate -benchtime 5x
func BenchmarkScanLate(b *testing.B) {
	_, tbl := bidTable(b)
	price := expr.Col(2, arrow.PrimitiveTypes.Int64, "price")
	mod, err := expr.NewBinary("%", price, expr.Lit(int64(100), arrow.PrimitiveTypes.Int64))
	if err != nil {
		b.Fatal(err)
	}
	onePct, err := expr.NewBinary("=", mod, expr.Lit(int64(7), arrow.PrimitiveTypes.Int64))
	if err != nil {
		b.Fatal(err)
	}
	url := expr.Col(4, arrow.BinaryTypes.String, "url")
	rare, err := expr.NewLike(url, expr.Lit("%/abc%", arrow.BinaryTypes.String), false)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []struct {
		name string
		pred connectors.Conjunct
	}{
		{"price_mod_100", connectors.Conjunct{Expr: onePct, Columns: []int{2}}},
		{"url_like", connectors.Conjunct{Expr: rare, Columns: []int{4}}},
	} {
		want := int64(-1)
		for _, off := range []bool{false, true} {
			name := p.name + "/late"
			if off {
				name = p.name + "/off"
			}
			b.Run(name, func(b *testing.B) {
				var got int64
				for i := 0; i < b.N; i++ {
					spec := connectors.ScanSpec{Predicate: []connectors.Conjunct{p.pred}, RowGroupsOnly: off}
					src, err := tbl.NewSource(spec)
					if err != nil {
						b.Fatal(err)
					}
					c := &passCounter{pred: p.pred.Expr}
					if err := src.Run(context.Background(), c); err != nil {
						b.Fatal(err)
					}
					got = c.rows
				}
				if want >= 0 && got != want {
					b.Fatalf("%d rows pass, %d with late materialisation", got, want)
				}
				want = got
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(benchRows*int64(b.N)), "ns/row")
				b.ReportMetric(float64(got), "passing")
			})
		}
	}
}

// passCounter counts the rows of its batches where pred is TRUE.
type passCounter struct {
	pred expr.Expr
	rows int64
}

func (c *passCounter) Emit(_ context.Context, b *cexec.Batch) error {
	mask, err := expr.EvalPredicate(memory.DefaultAllocator, c.pred, b.Record())
	if err != nil {
		return err
	}
	defer mask.Release()
	c.rows += int64(len(expr.SelectionVector(mask, nil)))
	return nil
}

func (c *passCounter) EmitWatermark(context.Context, int64) error { return nil }
