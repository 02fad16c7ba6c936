package kafka_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/kafka"
	"github.com/clink-sql/clink/engine"
	clexec "github.com/clink-sql/clink/exec"
)

func TestFranzProducedQueriesMatchParquet(t *testing.T) {
	e := startBroker(t, "bids:3")
	rec, lines := bids(t, 5000)
	produce(t, e.Addr(), "bids", 3, lines)
	s := newSession(t)
	exec1(t, s, kafkaDDL("kbids", e.Addr(), "bids"))
	sameQueries(t, s, "kbids", writeParquet(t, rec))
}

func TestKcatProducedQueriesMatchParquet(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatalf("kcat is required (apt-get install kcat): %v", err)
	}
	e := startBroker(t, "kcatbids:2")
	rec, lines := bids(t, 3000)
	file := filepath.Join(t.TempDir(), "bids.json")
	if err := os.WriteFile(file, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kcat, "-b", e.Addr(), "-t", "kcatbids", "-P", "-l", file).CombinedOutput()
	if err != nil {
		t.Fatalf("kcat: %v\n%s", err, out)
	}
	s := newSession(t)
	exec1(t, s, kafkaDDL("kbids", e.Addr(), "kcatbids"))
	sameQueries(t, s, "kbids", writeParquet(t, rec))
}

func TestOnErrorModes(t *testing.T) {
	e := startBroker(t, "mixed")
	rec, lines := bids(t, 200)
	var values [][]byte
	for i, l := range lines {
		values = append(values, l)
		switch i {
		case 10:
			values = append(values, []byte(`{"auction": 1, "price": `)) // offset 11
		case 50:
			values = append(values, []byte(`{"auction": "not a number"}`))
		case 120:
			values = append(values, []byte(`[1, 2, 3]`))
		}
	}
	produce(t, e.Addr(), "mixed", 1, values)
	s := newSession(t)

	exec1(t, s, kafkaDDL("failing", e.Addr(), "mixed"))
	_, err := s.Execute(context.Background(), "SELECT count(*) FROM failing", &rowsWriter{}, engine.ExecOptions{})
	if err == nil || !strings.Contains(err.Error(), "topic 'mixed' partition 0 offset 11") {
		t.Fatalf("on-error = fail: want an error naming topic, partition and offset 11, got %v", err)
	}

	// Skipping: exactly the good records, none lost or duplicated, on the
	// columnar path (bad records rolled back in place) and the row path.
	path := writeParquet(t, rec)
	for i, opt := range []string{"'on-error' = 'skip'", "'json.ignore-parse-errors' = 'true'"} {
		for _, columnar := range []string{"true", "false"} {
			name := fmt.Sprintf("skipping_%d_%s", i, columnar)
			exec1(t, s, kafkaDDL(name, e.Addr(), "mixed", opt, "'json.columnar-decode' = '"+columnar+"'"))
			before := clexec.Global.SkippedRecords.Load()
			got := query(t, s, "SELECT * FROM "+name)
			want := query(t, s, "SELECT * FROM '"+path+"'")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s columnar=%s: %d rows, want the %d good ones", opt, columnar, len(got), len(want))
			}
			if d := clexec.Global.SkippedRecords.Load() - before; d != 3 {
				t.Fatalf("skipped %d records, want 3", d)
			}
		}
	}
}

func TestStartupTimestamp(t *testing.T) {
	e := startBroker(t, "ts")
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	base := time.UnixMilli(1_600_000_000_000)
	var rs []*kgo.Record
	for i := 0; i < 20; i++ {
		rs = append(rs, &kgo.Record{Topic: "ts", Timestamp: base.Add(time.Duration(i) * time.Minute), Value: []byte(fmt.Sprintf(`{"id": %d}`, i))})
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	s := newSession(t)
	exec1(t, s, fmt.Sprintf("CREATE TABLE ts (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'ts', 'properties.bootstrap.servers' = '%s', "+
		"'format' = 'json', 'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '%d', 'scan.bounded.mode' = 'latest-offset')",
		e.Addr(), base.Add(15*time.Minute).UnixMilli()))
	if got := query(t, s, "SELECT min(id), count(*) FROM ts"); len(got) != 1 || got[0] != "15 | 5" {
		t.Fatalf("from minute 15: got %v", got)
	}
}

func TestGroupOffsetsNeverAheadOfEmitted(t *testing.T) {
	e := startBroker(t, "seq")
	produce(t, e.Addr(), "seq", 1, idValues(100))
	s := newSession(t)
	ddl := "CREATE TABLE seq (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'seq', 'properties.bootstrap.servers' = '%s', " +
		"'format' = 'json', 'properties.group.id' = 'g1', 'scan.startup.mode' = 'group-offsets', 'scan.batch-size' = '10'%s)"
	exec1(t, s, fmt.Sprintf(ddl, e.Addr(), ""))
	first := query(t, s, "SELECT id FROM seq LIMIT 25")
	if len(first) != 25 {
		t.Fatalf("LIMIT 25 gave %d rows", len(first))
	}
	committed := committedOffsets(t, e.Addr(), "g1", "seq")
	if committed > 25 || committed < 10 {
		t.Fatalf("committed offset %d: must not be ahead of the 25 emitted rows (and batches of 10 were emitted)", committed)
	}
	exec1(t, s, "DROP TABLE seq")
	exec1(t, s, fmt.Sprintf(ddl, e.Addr(), ", 'scan.bounded.mode' = 'latest-offset'"))
	second := query(t, s, "SELECT id FROM seq")
	seen := map[string]bool{}
	for _, r := range append(first, second...) {
		seen[r] = true
	}
	for i := 0; i < 100; i++ {
		if !seen[fmt.Sprint(i)] {
			t.Fatalf("record %d was skipped (first run %d rows, second run %d rows from offset %d)", i, len(first), len(second), committed)
		}
	}
	if got := committedOffsets(t, e.Addr(), "g1", "seq"); got != 100 {
		t.Fatalf("after the bounded run the group is at %d, want 100", got)
	}
}

func TestCancelUnboundedQuery(t *testing.T) {
	e := startBroker(t, "idle:2")
	s := newSession(t)
	exec1(t, s, fmt.Sprintf("CREATE TABLE idle (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'idle', "+
		"'properties.bootstrap.servers' = '%s', 'format' = 'json', 'scan.startup.mode' = 'latest-offset')", e.Addr()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Execute(ctx, "SELECT id FROM idle", &rowsWriter{}, engine.ExecOptions{})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil || !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "cancel") {
			t.Fatalf("want a cancellation error, got %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the unbounded query did not stop after cancellation")
	}
}

// A broker restart (kfake with a data dir) in the middle of an unbounded
// query loses nothing: rows produced before and after arrive exactly once
// each... at least once: the query sees every id.
func TestBrokerRestartLosesNothing(t *testing.T) {
	dir := t.TempDir()
	e, err := kafka.StartEmbedded(context.Background(), kafka.EmbeddedOptions{DataDir: dir, Topics: []string{"r:2"}})
	if err != nil {
		t.Fatal(err)
	}
	addr := e.Addr()
	defer func() { e.Close() }()
	ids := func(lo, hi int) [][]byte {
		var v [][]byte
		for i := lo; i < hi; i++ {
			v = append(v, []byte(fmt.Sprintf(`{"id": %d}`, i)))
		}
		return v
	}
	produce(t, addr, "r", 2, ids(0, 500))
	s := newSession(t)
	exec1(t, s, fmt.Sprintf("CREATE TABLE r (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'r', "+
		"'properties.bootstrap.servers' = '%s', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset')", addr))
	var seenHalf atomic.Bool
	halfway := make(chan struct{})
	w := &rowsWriter{onRow: func(n int) error {
		if n >= 500 && !seenHalf.Swap(true) {
			close(halfway)
		}
		return nil
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.Execute(ctx, "SELECT id FROM r LIMIT 1000", w, engine.ExecOptions{})
		done <- err
	}()
	select {
	case <-halfway:
	case err := <-done:
		t.Fatalf("query ended early: %v", err)
	}
	e.Close()
	e, err = kafka.StartEmbedded(context.Background(), kafka.EmbeddedOptions{DataDir: dir, Listen: addr})
	if err != nil {
		t.Fatal(err)
	}
	produce(t, addr, "r", 2, ids(500, 1000))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range w.rows {
		seen[r] = true
	}
	for i := 0; i < 1000; i++ {
		if !seen[fmt.Sprint(i)] {
			t.Fatalf("id %d lost across the broker restart (%d rows)", i, len(w.rows))
		}
	}
}

// The source read directly: metadata columns, per-partition order, the
// watermark, no leaks.
func TestSourceMetadataAndWatermark(t *testing.T) {
	mem := checkedMem(t)
	e := startBroker(t, "meta:2")
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	base := time.UnixMilli(1_700_000_000_000)
	var rs []*kgo.Record
	for i := 0; i < 40; i++ {
		rs = append(rs, &kgo.Record{Topic: "meta", Partition: int32(i % 2), Key: []byte(fmt.Sprintf("k%d", i)),
			Timestamp: base.Add(time.Duration(i) * time.Second), Value: []byte(fmt.Sprintf(`{"v": %d, "s": "x%d"}`, i, i))})
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	declared := arrow.NewSchema([]arrow.Field{
		{Name: "part", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "off", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	tbl, err := kafka.NewTable(map[string]string{"connector": "kafka", "topic": "meta", "properties.bootstrap.servers": e.Addr(),
		"format": "json", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset",
		"metadata.part": "partition", "metadata.off": "offset", "metadata.ts": "timestamp", "metadata.k": "key"}, declared)
	if err != nil {
		t.Fatal(err)
	}
	src, err := tbl.WithAllocator(mem).OpenSource(connectors.ScanSpec{Columns: []int{5, 0, 2, 1, 3, 4}, BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if err := src.Run(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.rows) != 40 {
		t.Fatalf("got %d rows", len(rec.rows))
	}
	lastOff := map[int32]int64{0: -1, 1: -1}
	for _, r := range rec.rows {
		s, part, off, v, ts, k := r[0].(string), r[1].(int32), r[2].(int64), r[3].(int64), r[4].(arrow.Timestamp), r[5].(string)
		if int32(v%2) != part || off != v/2 || s != fmt.Sprintf("x%d", v) || k != fmt.Sprintf("k%d", v) ||
			int64(ts) != base.Add(time.Duration(v)*time.Second).UnixMilli() {
			t.Fatalf("row %v: metadata does not match the record", r)
		}
		if off <= lastOff[part] {
			t.Fatalf("partition %d out of order: %d after %d", part, off, lastOff[part])
		}
		lastOff[part] = off
	}
	if n := len(rec.wms); n < 2 || rec.wms[n-1] != clexec.MaxWatermark {
		t.Fatalf("watermarks %v: want progress and a final MaxWatermark", rec.wms)
	}
	// Finite watermarks rise and stay within the records' timestamps (the
	// min over partitions of each one's max).
	for i, w := range rec.wms[:len(rec.wms)-1] {
		if (i > 0 && w <= rec.wms[i-1]) || w < base.UnixMicro() || w > base.Add(39*time.Second).UnixMicro() {
			t.Fatalf("watermarks %v: not rising within the record timestamps", rec.wms)
		}
	}
	if st := src.Stats(); st.Records != 40 || st.ColumnarBatches == 0 {
		t.Fatalf("stats %+v", st)
	}
}

type recorder struct {
	rows []clexec.Row
	wms  []int64
}

func (r *recorder) Emit(_ context.Context, b *clexec.Batch) error {
	if b.IsColumnar() {
		r.rows = append(r.rows, clexec.DecodeRows(b.Record())...)
	} else {
		r.rows = append(r.rows, b.Rows()...)
	}
	return nil
}

func (r *recorder) EmitWatermark(_ context.Context, wm int64) error {
	r.wms = append(r.wms, wm)
	return nil
}

func TestInsertIntoKafkaSink(t *testing.T) {
	e := startBroker(t)
	rec, _ := bids(t, 2000)
	path := writeParquet(t, rec)
	s := newSession(t)
	exec1(t, s, kafkaDDL("out", e.Addr(), "out", "'sink.partitioner' = 'round-robin'"))
	exec1(t, s, fmt.Sprintf("INSERT INTO out SELECT * FROM '%s'", path))
	sameQueries(t, s, "out", path)
}

// The sink encodes a columnar batch without materialising it.
func TestSinkDoesNotMaterialise(t *testing.T) {
	mem := checkedMem(t)
	e := startBroker(t, "direct")
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	tbl, err := kafka.NewTable(map[string]string{"topic": "direct", "properties.bootstrap.servers": e.Addr(), "format": "json",
		"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}, schema)
	if err != nil {
		t.Fatal(err)
	}
	tbl = tbl.WithAllocator(mem)
	op, err := tbl.OpenSink(connectors.SinkSpec{Name: "direct"})
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewInt64Builder(mem)
	for i := int64(0); i < 100; i++ {
		b.Append(i)
	}
	col := b.NewArray()
	b.Release()
	batch := clexec.NewColumnarBatch(array.NewRecordBatch(schema, []arrow.Array{col}, 100))
	col.Release()
	ctx := context.Background()
	if _, err := clexec.Dispatch(ctx, op, true, 0, batch, nil); err != nil {
		t.Fatal(err)
	}
	if batch.Materialized() {
		t.Fatal("the sink materialised a columnar batch")
	}
	batch.Release()
	if err := op.Finish(ctx, 0, nil); err != nil {
		t.Fatal(err)
	}
	op.Close()
	src, err := tbl.OpenSource(connectors.ScanSpec{})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	if err := src.Run(ctx, r); err != nil {
		t.Fatal(err)
	}
	if len(r.rows) != 100 || r.rows[99][0] != int64(99) {
		t.Fatalf("read back %d rows", len(r.rows))
	}
}

// Pretty-printed messages (indented JSON over several lines, as a producer
// that formats its documents sends them) give the same answers as Parquet
// and stay on the columnar decode: the walk, which ends an NDJSON record
// at a newline, walks such a document again with its newlines as tabs
// instead of sending the batch to the row decode.
func TestPrettyPrintedMessages(t *testing.T) {
	e := startBroker(t, "pretty:2")
	rec, lines := bids(t, 2000)
	pretty := make([][]byte, len(lines))
	for i, l := range lines {
		var b bytes.Buffer
		if err := json.Indent(&b, l, "", "  "); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			b.WriteString("\r\n") // and a line end after the document
		}
		pretty[i] = b.Bytes()
	}
	if !bytes.Contains(pretty[0], []byte("\n  \"")) {
		t.Fatalf("not pretty-printed: %q", pretty[0])
	}
	produce(t, e.Addr(), "pretty", 2, pretty)
	s := newSession(t)
	exec1(t, s, kafkaDDL("kpretty", e.Addr(), "pretty"))
	before := clexec.Global.DecodeFallbacks.Load()
	sameQueries(t, s, "kpretty", writeParquet(t, rec))
	if d := clexec.Global.DecodeFallbacks.Load() - before; d != 0 {
		t.Fatalf("%d batches of pretty-printed messages fell back to the row decode", d)
	}
}
