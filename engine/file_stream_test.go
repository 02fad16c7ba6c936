package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/clink-sql/clink/connectors/kafka"
	"github.com/clink-sql/clink/exec"
)

// fileStreamQuery counts 10 s windows of a monitored table's rows; LIMIT 2
// ends it after two windows.
const fileStreamQuery = "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)) " +
	"GROUP BY window_start, window_end LIMIT 2"

// monitoredDDL declares ev over dir, read as a stream of files.
func monitoredDDL(dir, format string) string {
	return fmt.Sprintf("CREATE TABLE ev (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', "+
		"'path' = '%s', 'format' = '%s', 'source.monitor-interval' = '50 ms')", dir, format)
}

// startQuery runs q in the background; its rows arrive on the returned
// writer's channel, its end on done. Defer stop before the session's
// Close runs (a failed test leaves the query running).
func startQuery(t *testing.T, s *Session, q string) (w *windowsWriter, done chan error, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	w = &windowsWriter{rows: make(chan exec.Row, 16)}
	done = make(chan error, 1)
	go func() {
		_, err := s.Execute(ctx, q, w, ExecOptions{})
		done <- err
	}()
	return w, done, cancel
}

// nextWindow waits (boundedly) for the next window row: (start ms, count).
func nextWindow(t *testing.T, w *windowsWriter, done chan error) (int64, int64) {
	t.Helper()
	select {
	case r := <-w.rows:
		return int64(r[0].(arrow.Timestamp)), r[1].(int64)
	case err := <-done:
		t.Fatalf("the query ended before its window: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no window within 20 s")
	}
	return 0, 0
}

// tenRows are k = 1 at ts from sec to sec+9 s, as VALUES.
func tenRows(sec int) string {
	var vs []string
	for i := 0; i < 10; i++ {
		vs = append(vs, fmt.Sprintf("(CAST(1 AS BIGINT), TIMESTAMP '2026-01-01 00:00:%02d')", sec+i))
	}
	return strings.Join(vs, ", ")
}

// base is 2026-01-01 00:00:00 in ms.
var fileStreamBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

// A monitored directory is a stream: the files present are read, then
// each new file once it is complete; a window fires when a later file's
// rows move the watermark past it. Files in progress (hidden or '_'
// names) are never read: a copy of the 10..19 s rows left under such a
// name would double that window's count.
func TestFileStreamWindows(t *testing.T) {
	for _, format := range []string{"json", "parquet"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			// The writer: clink's own sink for Parquet (a file per INSERT,
			// published by rename), write-then-rename for NDJSON.
			ws := NewSession(SessionOptions{NoDemoCatalog: true})
			defer ws.Close()
			mustExec(t, ws, fmt.Sprintf("CREATE TABLE out (k BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'parquet')", dir))
			n := 0
			publish := func(sec int) string {
				n++
				if format == "parquet" {
					mustExec(t, ws, "INSERT INTO out VALUES "+tenRows(sec))
					return ""
				}
				var sb strings.Builder
				for i := 0; i < 10; i++ {
					fmt.Fprintf(&sb, "{\"k\": 1, \"ts\": \"2026-01-01 00:00:%02d\"}\n", sec+i)
				}
				tmp := filepath.Join(dir, fmt.Sprintf(".f%d.json.inprogress", n))
				if err := os.WriteFile(tmp, []byte(sb.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				final := filepath.Join(dir, fmt.Sprintf("f%d.json", n))
				if err := os.Rename(tmp, final); err != nil {
					t.Fatal(err)
				}
				return final
			}
			publish(0) // present when the query starts

			rs := NewSession(SessionOptions{NoDemoCatalog: true})
			defer rs.Close()
			mustExec(t, rs, monitoredDDL(dir, format))
			w, done, stop := startQuery(t, rs, fileStreamQuery)
			defer stop()

			second := publish(10)
			if start, cnt := nextWindow(t, w, done); start != fileStreamBase || cnt != 10 {
				t.Fatalf("first window: start %d count %d, want %d and 10", start, cnt, fileStreamBase)
			}
			// An in-progress copy of the 10..19 s rows, never to be read.
			if format == "parquet" {
				files, _ := filepath.Glob(filepath.Join(dir, "part-*.parquet"))
				for _, f := range files {
					b, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					for _, prefix := range []string{"_", "."} {
						if err := os.WriteFile(filepath.Join(dir, prefix+filepath.Base(f)), b, 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
			} else {
				b, err := os.ReadFile(second)
				if err != nil {
					t.Fatal(err)
				}
				for _, name := range []string{".copy.json", "_copy.json"} {
					if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			publish(20)
			if start, cnt := nextWindow(t, w, done); start != fileStreamBase+10_000 || cnt != 10 {
				t.Fatalf("second window: start %d count %d, want %d and 10", start, cnt, fileStreamBase+10_000)
			}
			if err := <-done; err != nil {
				t.Fatalf("the query (LIMIT 2) ended with %v", err)
			}
		})
	}
}

// rawTopic starts an embedded broker holding the topic 'raw' and returns
// its address and a producer of ten JSON rows (k = 1, ts from sec to
// sec+9 s).
func rawTopic(t *testing.T) (addr string, produce func(sec int)) {
	t.Helper()
	ctx := t.Context()
	broker, err := kafka.StartEmbedded(ctx, kafka.EmbeddedOptions{Topics: []string{"raw:1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker.Addr()), kgo.DefaultProduceTopic("raw"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return broker.Addr(), func(sec int) {
		var recs []*kgo.Record
		for i := 0; i < 10; i++ {
			recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"k": 1, "ts": "2026-01-01 00:00:%02d"}`, sec+i)})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// Kafka -> clink -> Parquet files -> clink, live: a query monitoring the
// directory sees each INSERT's rows (read from the topic) as it lands.
func TestFileStreamFromKafkaThroughParquet(t *testing.T) {
	addr, produce := rawTopic(t)
	dir := t.TempDir()
	ws := NewSession(SessionOptions{NoDemoCatalog: true})
	defer ws.Close()
	mustExec(t, ws, fmt.Sprintf("CREATE TABLE raw (k BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'kafka', 'topic' = 'raw', "+
		"'properties.bootstrap.servers' = '%s', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset', "+
		"'scan.bounded.mode' = 'latest-offset')", addr))
	mustExec(t, ws, fmt.Sprintf("CREATE TABLE pq (k BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'parquet')", dir))

	rs := NewSession(SessionOptions{NoDemoCatalog: true})
	defer rs.Close()
	mustExec(t, rs, monitoredDDL(dir, "parquet"))
	w, done, stop := startQuery(t, rs, fileStreamQuery) // the directory is empty yet
	defer stop()

	// Each round moves what the topic gained into a new Parquet file.
	produce(0)
	produce(10)
	mustExec(t, ws, "INSERT INTO pq SELECT k, ts FROM raw")
	if start, cnt := nextWindow(t, w, done); start != fileStreamBase || cnt != 10 {
		t.Fatalf("first window: start %d count %d, want %d and 10", start, cnt, fileStreamBase)
	}
	produce(20)
	mustExec(t, ws, "INSERT INTO pq SELECT k, ts FROM raw WHERE ts >= TIMESTAMP '2026-01-01 00:00:20'")
	if start, cnt := nextWindow(t, w, done); start != fileStreamBase+10_000 || cnt != 10 {
		t.Fatalf("second window: start %d count %d, want %d and 10", start, cnt, fileStreamBase+10_000)
	}
	if err := <-done; err != nil {
		t.Fatalf("the query (LIMIT 2) ended with %v", err)
	}
}

// The same pipeline with one unbounded INSERT: the Parquet sink rolls its
// file every 100 ms ('sink.rolling-policy.rollover-interval'), so the
// monitoring query sees the topic's rows while the INSERT still runs.
func TestFileStreamLiveInsertRolls(t *testing.T) {
	addr, produce := rawTopic(t)
	dir := t.TempDir()
	ws := NewSession(SessionOptions{NoDemoCatalog: true})
	defer ws.Close()
	mustExec(t, ws, fmt.Sprintf("CREATE TABLE raw (k BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'kafka', 'topic' = 'raw', "+
		"'properties.bootstrap.servers' = '%s', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset')", addr))
	mustExec(t, ws, fmt.Sprintf("CREATE TABLE pq (k BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '%s', "+
		"'format' = 'parquet', 'sink.rolling-policy.rollover-interval' = '100 ms')", dir))
	insCtx, stopInsert := context.WithCancel(t.Context())
	inserted := make(chan error, 1)
	go func() {
		_, err := ws.Execute(insCtx, "INSERT INTO pq SELECT k, ts FROM raw", &rowsWriter{}, ExecOptions{})
		inserted <- err
	}()
	defer func() {
		stopInsert()
		<-inserted
	}()

	rs := NewSession(SessionOptions{NoDemoCatalog: true})
	defer rs.Close()
	mustExec(t, rs, monitoredDDL(dir, "parquet"))
	w, done, stop := startQuery(t, rs, fileStreamQuery)
	defer stop()

	produce(0)
	produce(10)
	if start, cnt := nextWindow(t, w, done); start != fileStreamBase || cnt != 10 {
		t.Fatalf("first window: start %d count %d, want %d and 10", start, cnt, fileStreamBase)
	}
	produce(20)
	if start, cnt := nextWindow(t, w, done); start != fileStreamBase+10_000 || cnt != 10 {
		t.Fatalf("second window: start %d count %d, want %d and 10", start, cnt, fileStreamBase+10_000)
	}
	if err := <-done; err != nil {
		t.Fatalf("the query (LIMIT 2) ended with %v", err)
	}
	select {
	case err := <-inserted:
		t.Fatalf("the unbounded INSERT ended by itself: %v", err)
	default:
	}
}
