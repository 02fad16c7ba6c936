package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/clink-sql/clink/connectors/kafka"
	"github.com/clink-sql/clink/exec"
)

// 'scan.watermark.idle-timeout' end to end: a two-partition topic where
// partition 1 brings one early record and then nothing, while partition 0
// keeps bringing records. Without the option partition 1 holds the
// watermark back and no window ever fires; with it, partition 1 stops
// counting once idle and the windows fire with the right counts.

// idleBase is the event time of the first record.
var idleBase = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// idleStep is the event-time distance between partition 0's records; the
// windows are 2 s, so each holds 4 of them, and window 0 also holds
// partition 1's record at 300 ms.
const idleStep = 500 * time.Millisecond

func idleWant(windowStartMs int64) int64 {
	if windowStartMs == idleBase.UnixMilli() {
		return 5
	}
	return 4
}

// idleRecord is one JSON record stamped with the time it is produced, as
// an outside producer (kcat) stamps it: each partition's clock must come
// from the WATERMARK column, not the Kafka timestamps, or partition 1's
// clock would run at today's date, far ahead of these 2024 event times, and
// hold nothing back with or without the option.
func idleRecord(p int32, id int, at time.Time) *kgo.Record {
	v := fmt.Sprintf(`{"id": %d, "ts": "%s"}`, id, at.Format("2006-01-02 15:04:05.000"))
	return &kgo.Record{Topic: "ev", Partition: p, Value: []byte(v), Timestamp: time.Now()}
}

// windowsWriter hands each result row to a channel as it arrives.
type windowsWriter struct{ rows chan exec.Row }

func (w *windowsWriter) Columns(*arrow.Schema, bool) error { return nil }
func (w *windowsWriter) Batch(b *exec.Batch) error {
	for _, r := range b.Rows() {
		w.rows <- r
	}
	return nil
}

func TestWatermarkIdleTimeoutEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name, option string
		parallelism  int
	}{
		{"idle-timeout", ", 'scan.watermark.idle-timeout' = '500 ms'", 1},
		{"idle-timeout-parallel", ", 'scan.watermark.idle-timeout' = '500 ms'", 2},
		{"no-idle-timeout", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			broker, err := kafka.StartEmbedded(ctx, kafka.EmbeddedOptions{Topics: []string{"ev:2"}})
			if err != nil {
				t.Fatal(err)
			}
			defer broker.Close()
			cl, err := kgo.NewClient(kgo.SeedBrokers(broker.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			// Both partitions start; then partition 1 goes quiet.
			if err := cl.ProduceSync(ctx,
				idleRecord(0, 0, idleBase),
				idleRecord(1, 1000, idleBase.Add(300*time.Millisecond)),
			).FirstErr(); err != nil {
				t.Fatal(err)
			}

			s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
			defer s.Close()
			mustExec(t, s, fmt.Sprintf("SET 'parallelism' = '%d'", tc.parallelism))
			mustExec(t, s, fmt.Sprintf("CREATE TABLE ev (id BIGINT, ts TIMESTAMP(3), "+
				"WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'kafka', 'topic' = 'ev', "+
				"'properties.bootstrap.servers' = '%s', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset'%s)",
				broker.Addr(), tc.option))

			// Partition 0 keeps going, a record every 20 ms of wall time,
			// until the test ends.
			defer produceEvery(ctx, t, cl, 20*time.Millisecond, func(i int) *kgo.Record {
				return idleRecord(0, i, idleBase.Add(time.Duration(i)*idleStep))
			})()
			defer cancel()

			w := &windowsWriter{rows: make(chan exec.Row, 16)}
			qctx, qcancel := context.WithCancel(ctx)
			defer qcancel()
			done := make(chan error, 1)
			go func() {
				_, err := s.Execute(qctx, "SELECT window_start, COUNT(*) AS n "+
					"FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND)) "+
					"GROUP BY window_start, window_end LIMIT 3", w, ExecOptions{})
				done <- err
			}()

			if tc.option == "" {
				// Partition 1 holds the watermark: nothing fires, however
				// far partition 0 runs ahead (3 s of wall time is 75
				// records, 37 s of event time, 18 windows' worth).
				select {
				case r := <-w.rows:
					t.Fatalf("a window fired while partition 1 holds the watermark: %v", r)
				case err := <-done:
					t.Fatalf("the query ended by itself: %v", err)
				case <-time.After(3 * time.Second):
				}
				qcancel()
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Fatalf("want context.Canceled, got %v", err)
				}
				return
			}

			// The deadline only bounds a failing run.
			var got []exec.Row
			deadline := time.After(60 * time.Second)
			for len(got) < 3 {
				select {
				case r := <-w.rows:
					got = append(got, r)
				case err := <-done:
					if err != nil {
						t.Fatal(err)
					}
					if len(got) < 3 {
						t.Fatalf("the query ended with %d windows: %v", len(got), got)
					}
				case <-deadline:
					qcancel()
					t.Fatalf("no windows within 60 s with the idle timeout (got %v)", got)
				}
			}
			if err := <-done; err != nil {
				t.Fatalf("LIMIT 3 must end the query: %v", err)
			}
			seen := map[int64]bool{}
			for _, r := range got {
				start := int64(r[0].(arrow.Timestamp))
				if seen[start] {
					t.Errorf("window %v fired twice", r)
				}
				seen[start] = true
				if (start-idleBase.UnixMilli())%2000 != 0 {
					t.Errorf("window start %d is not on a 2 s boundary", start)
				}
				if n := r[1].(int64); n != idleWant(start) {
					t.Errorf("window at %s counted %d records, wrote %d",
						time.UnixMilli(start).UTC().Format(time.TimeOnly), n, idleWant(start))
				}
			}
			if !seen[idleBase.UnixMilli()] {
				t.Errorf("the first window (with partition 1's record) did not fire: %v", got)
			}
		})
	}
}
