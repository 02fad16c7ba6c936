package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/explain"
)

// Event time over several partitions, as Flink's per-split watermarks
// define it: the source's watermark is the minimum over its partitions, so
// a partition that has not produced yet holds it back and none of its
// records is dropped as late.

// etRecords is one partition's records: JSON with ts = base + i s for i in
// [0, n), stamped by Kafka with the wall clock (the clock must come from
// the WATERMARK column).
func etRecords(topic string, p int32, n int) []*kgo.Record {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	rs := make([]*kgo.Record, n)
	for i := range rs {
		v := fmt.Sprintf(`{"p": %d, "ts": "%s"}`, p, base.Add(time.Duration(i)*time.Second).Format("2006-01-02 15:04:05.000"))
		rs[i] = &kgo.Record{Topic: topic, Partition: p, Value: []byte(v), Timestamp: time.Now()}
	}
	return rs
}

func etProduce(t *testing.T, addr string, rs []*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func etDDL(addr, topic string, extra ...string) string {
	opts := append([]string{"'connector' = 'kafka'", "'topic' = '" + topic + "'",
		"'properties.bootstrap.servers' = '" + addr + "'", "'format' = 'json'",
		"'scan.startup.mode' = 'earliest-offset'"}, extra...)
	return "CREATE TABLE ev (p INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '4' SECOND) WITH (" +
		strings.Join(opts, ", ") + ")"
}

const etQuery = "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)) " +
	"GROUP BY window_start, window_end"

// The repro: 2 partitions of 60 records each (ts 0..59 s), a
// bounded scan; every one of the 120 rows is counted, in six windows of
// 20, and none is late, however the partitions' fetches interleave.
func TestPartitionWatermarkLosesNothing(t *testing.T) {
	for _, par := range []int{1, 2} {
		t.Run(fmt.Sprintf("parallelism-%d", par), func(t *testing.T) {
			checkedMem(t)
			e := startBroker(t, "ev:2")
			etProduce(t, e.Addr(), append(etRecords("ev", 0, 60), etRecords("ev", 1, 60)...))
			s := newSession(t)
			exec1(t, s, fmt.Sprintf("SET 'parallelism' = '%d'", par))
			exec1(t, s, etDDL(e.Addr(), "ev", "'scan.bounded.mode' = 'latest-offset'"))
			got := query(t, s, etQuery)
			if len(got) != 6 {
				t.Fatalf("%d windows, want 6: %v", len(got), got)
			}
			for _, r := range got {
				if !strings.HasSuffix(r, " | 20") {
					t.Errorf("window %q: want 20 rows (10 s of each partition)", r)
				}
			}
			o, err := s.Execute(context.Background(), "EXPLAIN ANALYZE "+etQuery, nil, engine.ExecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if n := lateDropped(t, o.Explain); n != 0 {
				t.Errorf("%d records dropped as late:\n%s", n, o.Text)
			}
		})
	}
}

// A slow partition: partition 0's minute of records is there when the
// query starts, partition 1's arrive later. Partition 1 holds the
// watermark back until its records come, so none of them is late: the
// five windows the watermark (55 s) closes count 20 each.
func TestSlowPartitionHoldsWatermark(t *testing.T) {
	checkedMem(t)
	e := startBroker(t, "ev:2")
	etProduce(t, e.Addr(), etRecords("ev", 0, 60))
	s := newSession(t)
	exec1(t, s, etDDL(e.Addr(), "ev"))
	st := startStream(t, s, etQuery+" LIMIT 5")
	// Nothing fires while partition 1 has brought nothing (its first
	// records may be the oldest of all). The wait only gives a wrong
	// implementation the chance to fire; it asserts no timing.
	select {
	case r := <-st.rows:
		t.Fatalf("a window fired before partition 1 produced: %s", r)
	case err := <-st.done:
		t.Fatalf("the query ended by itself: %v", err)
	case <-time.After(time.Second):
	}
	etProduce(t, e.Addr(), etRecords("ev", 1, 60))
	for _, r := range st.collect(t, 5) {
		if !strings.HasSuffix(r, " | 20") {
			t.Errorf("window %q: want 20 rows (10 s of each partition)", r)
		}
	}
}

// 'scan.watermark.idle-timeout' is judged on a timer: partition 1 never
// produces, partition 0's minute of records all arrive at once, and then
// nothing arrives anywhere. Once partition 1 has been idle for 500 ms the
// watermark moves to partition 0's clock (59 s - 4 s) and five windows of
// 10 fire, with no record arriving to trigger them.
func TestIdleTimeoutFiresWithoutRecords(t *testing.T) {
	checkedMem(t)
	e := startBroker(t, "ev:2")
	etProduce(t, e.Addr(), etRecords("ev", 0, 60))
	s := newSession(t)
	exec1(t, s, etDDL(e.Addr(), "ev", "'scan.watermark.idle-timeout' = '500 ms'"))
	st := startStream(t, s, etQuery+" LIMIT 5")
	for _, r := range st.collect(t, 5) {
		if !strings.HasSuffix(r, " | 10") {
			t.Errorf("window %q: want 10 rows (partition 0's)", r)
		}
	}
}

// stream is an unbounded query running in the background, its rows
// handed over as they arrive.
type stream struct {
	ctx  context.Context
	rows chan string
	done chan error
}

func startStream(t *testing.T, s *engine.Session, q string) *stream {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	st := &stream{ctx: ctx, rows: make(chan string, 64), done: make(chan error, 1)}
	w := &rowsWriter{}
	sent := 0
	w.onRow = func(n int) error { // after each batch, with n rows so far
		for ; sent < n; sent++ {
			st.rows <- w.rows[sent]
		}
		return nil
	}
	go func() {
		_, err := s.Execute(ctx, q, w, engine.ExecOptions{})
		st.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		<-st.done
	})
	return st
}

// collect waits for n rows, then for the query (with a LIMIT n) to end.
// The 60 s deadline only bounds a failing run.
func (st *stream) collect(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		select {
		case r := <-st.rows:
			got = append(got, r)
		case err := <-st.done:
			// Put it back for the wait below and the cleanup.
			st.done <- err
			for len(st.rows) > 0 { // rows sent before the query ended
				got = append(got, <-st.rows)
			}
			if err != nil || len(got) < n {
				t.Fatalf("the query ended (%v) with %d rows: %v", err, len(got), got)
			}
		case <-st.ctx.Done():
			t.Fatalf("only %d rows within 60 s: %v", len(got), got)
		}
	}
	if err := <-st.done; err != nil {
		t.Fatalf("LIMIT %d must end the query: %v", n, err)
	}
	st.done <- nil // for the cleanup
	return got
}

// lateDropped is the window aggregate's "late records dropped" in an
// EXPLAIN ANALYZE document (failing when there is none).
func lateDropped(t *testing.T, doc *explain.Document) int64 {
	t.Helper()
	for _, st := range doc.Stages {
		if st.Runtime == nil {
			continue
		}
		for _, c := range st.Runtime.Counters {
			if c.Name == "late records dropped" {
				return c.Value
			}
		}
	}
	t.Fatal("no stage counts late records")
	return 0
}
