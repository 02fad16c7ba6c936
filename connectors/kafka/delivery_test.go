package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/kafka"
	"github.com/clink-sql/clink/engine"
	clexec "github.com/clink-sql/clink/exec"
)

var idSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)

func idTable(t *testing.T, addr, topic string, extra map[string]string) *kafka.Table {
	t.Helper()
	opts := map[string]string{"topic": topic, "properties.bootstrap.servers": addr, "format": "json",
		"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}
	for k, v := range extra {
		opts[k] = v
	}
	tbl, err := kafka.NewTable(opts, idSchema)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// idBatch is a columnar batch of ids lo..hi-1.
func idBatch(mem memory.Allocator, lo, hi int64) *clexec.Batch {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := lo; i < hi; i++ {
		b.Append(i)
	}
	col := b.NewArray()
	defer col.Release()
	return clexec.NewColumnarBatch(array.NewRecordBatch(idSchema, []arrow.Array{col}, hi-lo))
}

// idValues is n JSON records {"id": 0..n-1}.
func idValues(n int) [][]byte {
	values := make([][]byte, n)
	for i := range values {
		values[i] = fmt.Appendf(nil, `{"id": %d}`, i)
	}
	return values
}

// endOffsets sums topic's end offsets.
func endOffsets(t *testing.T, addr, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

// committedOffsets sums group's committed offsets for topic; 0 when the
// group has committed nothing.
func committedOffsets(t *testing.T, addr, group, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	offs, err := kadm.NewClient(cl).FetchOffsets(context.Background(), group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.At > 0 {
			n += o.At
		}
	})
	return n
}

type flusher interface {
	Flush(ctx context.Context) error
}

// Flush returns only once the broker holds every record given before it
// (read back through the end offsets, with no wait); Close of a statement
// that never reached Finish (a cancelled one) delivers what it was given
// instead of dropping it.
func TestSinkFlushAndCloseDeliver(t *testing.T) {
	mem := checkedMem(t)
	e := startBroker(t, "fl:3")
	op, err := idTable(t, e.Addr(), "fl", nil).WithAllocator(mem).OpenSink(connectors.SinkSpec{Name: "fl"})
	if err != nil {
		t.Fatal(err)
	}
	f, ok := op.(flusher)
	if !ok {
		t.Fatalf("the kafka sink %T has no Flush", op)
	}
	ctx := context.Background()
	for i := int64(0); i < 10; i++ {
		b := idBatch(mem, i*1000, (i+1)*1000)
		if _, err := clexec.Dispatch(ctx, op, true, 0, b, nil); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	if err := f.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := endOffsets(t, e.Addr(), "fl"); n != 10_000 {
		t.Fatalf("after Flush the topic holds %d records, want 10000", n)
	}
	b := idBatch(mem, 10_000, 20_000)
	if _, err := clexec.Dispatch(ctx, op, true, 0, b, nil); err != nil {
		t.Fatal(err)
	}
	b.Release()
	op.Close() // no Finish: the statement was cancelled
	if err := f.Flush(ctx); err != nil {
		t.Fatalf("Close's flush failed: %v", err)
	}
	if n := endOffsets(t, e.Addr(), "fl"); n != 20_000 {
		t.Fatalf("after Close the topic holds %d records, want 20000", n)
	}
	seen := map[string]int{}
	for _, r := range readIDs(t, e.Addr(), "fl", nil) {
		seen[r]++
	}
	for i := 0; i < 20_000; i++ {
		if seen[fmt.Sprint(i)] != 1 {
			t.Fatalf("id %d read %d times", i, seen[fmt.Sprint(i)])
		}
	}
}

// readIDs reads topic to its end through a clink source.
func readIDs(t *testing.T, addr, topic string, extra map[string]string) []string {
	t.Helper()
	src, err := idTable(t, addr, topic, extra).OpenSource(connectors.ScanSpec{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := &recorder{}
	if err := src.Run(ctx, r); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(r.rows))
	for i, row := range r.rows {
		out[i] = fmt.Sprint(row[0])
	}
	return out
}

// A read_committed source skips aborted transactions and, bounded, ends at
// the last stable offset past the transaction markers; read_uncommitted
// reads the aborted records too and still ends.
func TestReadCommittedSource(t *testing.T) {
	e := startBroker(t, "tx")
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Addr()), kgo.TransactionalID("delivery-test"), kgo.DefaultProduceTopic("tx"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	txn := func(lo, hi int, end kgo.TransactionEndTry) {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := lo; i < hi; i++ {
			cl.Produce(ctx, &kgo.Record{Value: fmt.Appendf(nil, `{"id": %d}`, i)}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, end); err != nil {
			t.Fatal(err)
		}
	}
	txn(0, 50, kgo.TryCommit)
	txn(50, 100, kgo.TryAbort)
	txn(100, 150, kgo.TryCommit)

	committed := readIDs(t, e.Addr(), "tx", map[string]string{"properties.isolation.level": "read_committed"})
	want := map[string]bool{}
	for i := 0; i < 150; i++ {
		if i < 50 || i >= 100 {
			want[fmt.Sprint(i)] = true
		}
	}
	if len(committed) != len(want) {
		t.Fatalf("read_committed read %d records, want %d", len(committed), len(want))
	}
	for _, id := range committed {
		if !want[id] {
			t.Fatalf("read_committed read id %s of the aborted transaction", id)
		}
	}
	if all := readIDs(t, e.Addr(), "tx", nil); len(all) != 150 {
		t.Fatalf("read_uncommitted read %d records, want all 150", len(all))
	}
	if _, err := kafka.NewTable(map[string]string{"topic": "tx", "properties.bootstrap.servers": e.Addr(), "format": "json",
		"properties.isolation.level": "serializable"}, idSchema); err == nil || !strings.Contains(err.Error(), "read_committed") {
		t.Fatalf("an unknown isolation level: got %v", err)
	}
}

// The source commits nothing by itself: its runner commits the position
// it marks, once the sink has delivered (engine's runGraph).
func TestSourceCommitsOnlyMarkedPosition(t *testing.T) {
	e := startBroker(t, "mk:2")
	produce(t, e.Addr(), "mk", 2, idValues(100))
	src, err := idTable(t, e.Addr(), "mk", map[string]string{"properties.group.id": "mk",
		"scan.startup.mode": "group-offsets"}).OpenSource(connectors.ScanSpec{BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	commit, ended := src.MarkPosition()
	if ended {
		t.Fatal("the source says it ended before it ran")
	}
	if err := commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := committedOffsets(t, e.Addr(), "mk", "mk"); n != 0 {
		t.Fatalf("an empty mark committed %d", n)
	}
	if err := src.Run(ctx, &recorder{}); err != nil {
		t.Fatal(err)
	}
	if n := committedOffsets(t, e.Addr(), "mk", "mk"); n != 0 {
		t.Fatalf("the source committed %d offsets by itself", n)
	}
	commit, ended = src.MarkPosition()
	if !ended {
		t.Fatal("the bounded source read its end but its mark does not say so")
	}
	if err := commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := committedOffsets(t, e.Addr(), "mk", "mk"); n != 100 {
		t.Fatalf("after the mark's commit the group is at %d, want 100", n)
	}
}

// A cancelled unbounded query commits its group offsets when its plan
// keeps no state (what it emitted reached the result writer) and not when
// it aggregates: the aggregate's state dies with the query, so the next
// run must read those records again. The 50 ms commit interval runs the
// periodic commits too, which a stateful plan must not make either.
func TestCancelCommitsOnlyStatelessPlans(t *testing.T) {
	e := startBroker(t, "cq")
	produce(t, e.Addr(), "cq", 1, idValues(100))
	s := newSession(t)
	for _, c := range []struct {
		group, query string
		want         int64
	}{
		{"stateless", "SELECT id FROM cq_stateless WHERE id >= 0", 100},
		{"stateful", "SELECT id % 3, count(*) FROM cq_stateful GROUP BY id % 3", 0},
	} {
		exec1(t, s, fmt.Sprintf("CREATE TABLE cq_%s (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'cq', "+
			"'properties.bootstrap.servers' = '%s', 'format' = 'json', 'properties.group.id' = '%s', "+
			"'scan.startup.mode' = 'group-offsets', 'properties.auto.commit.interval.ms' = '50')", c.group, e.Addr(), c.group))
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan struct{})
		var once bool
		w := &rowsWriter{onRow: func(int) error {
			if !once {
				once = true
				close(got)
			}
			return nil
		}}
		done := make(chan error, 1)
		go func() {
			_, err := s.Execute(ctx, c.query, w, engine.ExecOptions{})
			done <- err
		}()
		select {
		case <-got:
		case err := <-done:
			t.Fatalf("%s: the query ended before any row: %v", c.query, err)
		case <-time.After(time.Minute):
			t.Fatalf("%s: no row in a minute", c.query)
		}
		// Every record is read in one batch of 100; let the query reach
		// its idle wait for more before cancelling.
		time.Sleep(300 * time.Millisecond)
		cancel()
		if err := <-done; err == nil {
			t.Fatalf("%s: the cancelled query reported success", c.query)
		}
		if n := committedOffsets(t, e.Addr(), c.group, "cq"); n != c.want {
			t.Errorf("%s cancelled: the group committed %d, want %d", c.query, n, c.want)
		}
	}
}

// 'sink.delivery-guarantee' takes Flink's values; exactly-once is refused
// with the reason until checkpoints exist.
func TestDeliveryGuaranteeOption(t *testing.T) {
	for v, wantErr := range map[string]string{
		"none": "", "at-least-once": "", "exactly-once": "needs checkpointing", "maybe": "want 'none' or 'at-least-once'",
	} {
		_, err := kafka.NewTable(map[string]string{"topic": "x", "properties.bootstrap.servers": "127.0.0.1:1", "format": "json",
			"sink.delivery-guarantee": v}, idSchema)
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("'%s': %v", v, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("'%s': got %v, want an error saying %q", v, err, wantErr)
		}
	}
}
