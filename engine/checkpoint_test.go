package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/clink-sql/clink/connectors/kafka"
	"github.com/clink-sql/clink/exec"
)

// produceSeqRecords writes {"seq": from..to-1} to topic round-robin.
func produceSeqRecords(t *testing.T, addr, topic string, from, to int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"seq": %d}`, i)})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// topicSeqs counts each seq in topic (read to its current end).
func topicSeqs(t *testing.T, addr, topic string) map[int64]int {
	t.Helper()
	adm, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	ends, err := kadm.NewClient(adm).ListEndOffsets(context.Background(), topic)
	adm.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	got := map[int64]int{}
	if len(want) == 0 {
		return got
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v", topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			var v struct{ Seq int64 }
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Errorf("record %s: %v", r.Value, err)
			}
			got[v.Seq]++
			if r.Offset+1 >= want[r.Partition] {
				delete(want, r.Partition)
			}
		})
	}
	return got
}

// latestCheckpointID is the highest complete checkpoint's id in dir.
func latestCheckpointID(dir string) int64 {
	m, _ := filepath.Glob(filepath.Join(dir, "chk-*", "manifest.json"))
	var id int64
	for _, p := range m {
		var n int64
		if _, err := fmt.Sscanf(filepath.Base(filepath.Dir(p)), "chk-%d", &n); err == nil {
			id = max(id, n)
		}
	}
	return id
}

func completeCheckpoints(dir string) int {
	m, _ := filepath.Glob(filepath.Join(dir, "chk-*", "manifest.json"))
	return len(m)
}

// A Kafka -> Kafka INSERT checkpointing every 200 ms, cancelled mid-copy
// and started again with the same pipeline name, resumes from its latest
// checkpoint (it says so) and, with the records produced meanwhile, leaves
// every record in the sink; it re-reads only what followed the checkpoint,
// not the topic from its 'earliest-offset' start.
func TestCheckpointedKafkaInsertResumes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	broker, err := kafka.StartEmbedded(ctx, kafka.EmbeddedOptions{Topics: []string{"in:2", "out:2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	produceSeqRecords(t, broker.Addr(), "in", 0, 5000)
	// Input keeps arriving while run 1 copies: 200 records every 10 ms.
	var produced int
	pctx, pstop := context.WithCancel(ctx)
	pdone := make(chan struct{})
	go func() {
		defer close(pdone)
		for produced = 5000; pctx.Err() == nil; produced += 200 {
			produceSeqRecords(t, broker.Addr(), "in", produced, produced+200)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	ckDir := t.TempDir()
	pipeDir := filepath.Join(ckDir, "copy")

	var mu sync.Mutex
	var notices []string
	opts := ExecOptions{Notice: func(m string) {
		mu.Lock()
		notices = append(notices, m)
		mu.Unlock()
	}}
	session := func() *Session {
		s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
		mustExec(t, s,
			"SET 'parallelism' = '1'",
			"SET 'execution.checkpointing.interval' = '200 ms'",
			fmt.Sprintf("SET 'state.checkpoints.dir' = '%s'", ckDir),
			"SET 'pipeline.name' = 'copy'",
			fmt.Sprintf(`CREATE TABLE src (seq BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '%s', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset', 'scan.batch-size' = '500')`, broker.Addr()),
			fmt.Sprintf(`CREATE TABLE dst (seq BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out',
  'properties.bootstrap.servers' = '%s', 'format' = 'json')`, broker.Addr()))
		return s
	}
	// run starts the INSERT and cancels it once until() holds.
	run := func(until func() bool) (Outcome, error) {
		s := session()
		defer s.Close()
		qctx, qcancel := context.WithCancel(ctx)
		defer qcancel()
		type res struct {
			o   Outcome
			err error
		}
		done := make(chan res, 1)
		go func() {
			o, err := s.Execute(qctx, "INSERT INTO dst SELECT seq FROM src", nil, opts)
			done <- res{o, err}
		}()
		deadline := time.Now().Add(2 * time.Minute)
		for !until() {
			select {
			case r := <-done:
				t.Fatalf("the INSERT ended by itself: %v", r.err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("the INSERT made no progress in 2 minutes")
			}
			time.Sleep(20 * time.Millisecond)
		}
		qcancel()
		r := <-done
		return r.o, r.err
	}

	// Run 1: stopped once some output and two checkpoints exist.
	o, err := run(func() bool {
		return completeCheckpoints(pipeDir) >= 2 && len(topicSeqs(t, broker.Addr(), "out")) > 0
	})
	pstop()
	<-pdone
	n := produced
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run 1: %v", err)
	}
	t.Logf("run 1: %s", o.Message)
	if !strings.Contains(o.Message, "resumes from checkpoint") {
		t.Errorf("the cancelled INSERT does not say where the next run resumes: %q", o.Message)
	}
	first := len(topicSeqs(t, broker.Addr(), "out"))
	if len(notices) != 0 {
		t.Fatalf("a first run resumed: %v", notices)
	}

	// Run 2 resumes; more input arrives meanwhile.
	produceSeqRecords(t, broker.Addr(), "in", n, n+1000)
	if _, err := run(func() bool { return len(topicSeqs(t, broker.Addr(), "out")) >= n+1000 }); !errors.Is(err, context.Canceled) {
		t.Fatalf("run 2: %v", err)
	}
	mu.Lock()
	got := strings.Join(notices, "\n")
	mu.Unlock()
	if !strings.Contains(got, "resumed from checkpoint ") {
		t.Fatalf("run 2 did not say it resumed: %q", got)
	}
	seqs := topicSeqs(t, broker.Addr(), "out")
	dup := 0
	for i := int64(0); i < int64(n+1000); i++ {
		if seqs[i] == 0 {
			t.Fatalf("seq %d lost", i)
		}
		dup += seqs[i] - 1
	}
	t.Logf("run 1 copied %d distinct records; after run 2: %d records, %d duplicated (re-read after the checkpoint); %s", first, n+1000, dup, got)
	if dup >= first {
		t.Fatalf("%d duplicates of %d records copied by run 1: run 2 read from the start, not from the checkpoint", dup, first)
	}
	if k := completeCheckpoints(pipeDir); k > 3 {
		t.Errorf("%d checkpoints kept, want at most 3 ('state.checkpoints.num-retained' default)", k)
	}
}

// A checkpoint directory that cannot be written fails the statement at its
// start with the path and the cause.
func TestCheckpointDirNotWritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewSession(SessionOptions{})
	defer s.Close()
	mustExec(t, s,
		"SET 'execution.runtime-mode' = 'streaming'",
		"SET 'execution.checkpointing.interval' = '1s'",
		fmt.Sprintf("SET 'state.checkpoints.dir' = '%s'", file),
		"CREATE TABLE b (auction BIGINT) WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '1000')")
	_, err := s.Execute(context.Background(), "SELECT auction FROM b", nil, ExecOptions{})
	if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("err = %v, want the path and the cause", err)
	}
}

// With checkpoints on, a streaming plan whose sink cannot take part (the
// Parquet sink publishes its file only at the end) is refused at its
// start, naming it; a bounded query in batch mode runs without
// checkpoints.
func TestCheckpointRefusesUncheckpointableState(t *testing.T) {
	s := NewSession(SessionOptions{})
	defer s.Close()
	dir := t.TempDir()
	mustExec(t, s,
		"SET 'execution.checkpointing.interval' = '1s'",
		fmt.Sprintf("SET 'state.checkpoints.dir' = '%s'", dir),
		"CREATE TABLE b (auction BIGINT) WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '1000')",
		fmt.Sprintf("CREATE TABLE pq (auction BIGINT) WITH ('connector' = 'filesystem', 'format' = 'parquet', 'path' = '%s/out.parquet')", dir))
	// Batch mode, bounded: no checkpoints, the batch aggregate runs.
	mustExec(t, s, "SELECT COUNT(*) FROM b")
	mustExec(t, s, "SET 'execution.runtime-mode' = 'streaming'")
	_, err := s.Execute(context.Background(), "INSERT INTO pq SELECT auction FROM b", nil, ExecOptions{})
	if err == nil || !strings.Contains(err.Error(), "parquet-sink") {
		t.Fatalf("err = %v, want a refusal naming the Parquet sink", err)
	}
	// Without the interval it runs.
	mustExec(t, s, "SET 'execution.checkpointing.interval' = '0'", "INSERT INTO pq SELECT auction FROM b")
}

// syncRows is a ResultWriter safe to read while the query runs.
type syncRows struct {
	mu   sync.Mutex
	rows []string
}

func (w *syncRows) Columns(*arrow.Schema, bool) error { return nil }
func (w *syncRows) Batch(b *exec.Batch) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rows = append(w.rows, canon(b.Rows())...)
	return nil
}

// A windowed aggregate checkpointing every 100 ms, cancelled mid-stream and
// started again with the same pipeline name, restores its open windows: the
// windows of both runs together are exactly the uninterrupted run's, each
// with the same count and sum (a window fired in both runs, between the
// checkpoint and the cancel, has the same values twice).
func TestCheckpointedWindowAggregateResumes(t *testing.T) {
	ddl := strings.Replace(windowBidDDL, "'events.num' = '150000'", "'events.num' = '150000', 'first-event.rate' = '50000'", 1)
	q := "SELECT window_start, COUNT(*), SUM(price) FROM TABLE(TUMBLE(TABLE b, DESCRIPTOR(`dateTime`), INTERVAL '0.1' SECOND)) GROUP BY window_start, window_end"
	ref := NewSession(SessionOptions{NoDemoCatalog: true})
	defer ref.Close()
	mustExec(t, ref, "SET 'execution.runtime-mode' = 'streaming'", "SET 'parallelism' = '1'", ddl)
	want := canon(runRows(t, ref, q))
	sort.Strings(want)

	ckDir := t.TempDir()
	var notices []string
	var mu sync.Mutex
	opts := ExecOptions{Notice: func(m string) { mu.Lock(); notices = append(notices, m); mu.Unlock() }}
	session := func() *Session {
		s := NewSession(SessionOptions{NoDemoCatalog: true})
		mustExec(t, s, "SET 'execution.runtime-mode' = 'streaming'", "SET 'parallelism' = '1'",
			"SET 'execution.checkpointing.interval' = '100 ms'",
			fmt.Sprintf("SET 'state.checkpoints.dir' = '%s'", ckDir), "SET 'pipeline.name' = 'win'", ddl)
		return s
	}
	s1 := session()
	defer s1.Close()
	w1 := &syncRows{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s1.Execute(ctx, q, w1, opts)
		done <- err
	}()
	// Half the stream (1.5 s of 3): some windows fired, some open.
	for latestCheckpointID(filepath.Join(ckDir, "win")) < 15 {
		select {
		case err := <-done:
			t.Fatalf("run 1 ended before 15 checkpoints: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("run 1: %v", err)
	}
	s2 := session()
	defer s2.Close()
	w2 := &syncRows{}
	if _, err := s2.Execute(context.Background(), q, w2, opts); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(notices) != 1 || !strings.Contains(notices[0], "resumed from checkpoint") {
		t.Fatalf("notices %q", notices)
	}
	mu.Unlock()
	seen := map[string]bool{}
	var got []string
	for _, r := range append(w1.rows, w2.rows...) {
		if !seen[r] {
			seen[r] = true
			got = append(got, r)
		}
	}
	sort.Strings(got)
	t.Logf("run 1: %d windows, run 2 (%s): %d windows, uninterrupted: %d", len(w1.rows), notices[0], len(w2.rows), len(want))
	if len(w1.rows) == 0 || len(w2.rows) >= len(want) {
		t.Errorf("run 1 fired %d windows, run 2 %d of %d: want both runs to fire some, run 2 not all", len(w1.rows), len(w2.rows), len(want))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the two runs' windows differ from the uninterrupted run's:\ngot  %d %v\nwant %d %v", len(got), firstFew(got), len(want), firstFew(want))
	}
}

func firstFew(s []string) []string { return s[:min(len(s), 5)] }

// EXPLAIN ANALYZE of a checkpointed run reports its checkpoints, and the
// process-wide counters behind /metrics include them.
func TestCheckpointsInExplainAnalyze(t *testing.T) {
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s, "SET 'execution.runtime-mode' = 'streaming'", "SET 'parallelism' = '1'",
		"SET 'execution.checkpointing.interval' = '50 ms'",
		fmt.Sprintf("SET 'state.checkpoints.dir' = '%s'", t.TempDir()),
		strings.Replace(windowBidDDL, "'events.num' = '150000'", "'events.num' = '30000', 'first-event.rate' = '50000'", 1))
	o, err := s.Execute(context.Background(), "EXPLAIN ANALYZE SELECT auction FROM b", nil, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tot := o.Explain.Totals
	if tot == nil || tot.Checkpoints == nil || tot.Checkpoints.Completed < 1 || tot.Checkpoints.LastSizeBytes <= 0 {
		t.Fatalf("totals %+v", tot)
	}
	// The process-wide counters /metrics publishes count them too.
	if n := exec.Global.Checkpoints.Load(); n < tot.Checkpoints.Completed {
		t.Errorf("exec.Global.Checkpoints = %d, want at least %d", n, tot.Checkpoints.Completed)
	}
	want := fmt.Sprintf("Checkpoints: %d completed; the last, %d,", tot.Checkpoints.Completed, tot.Checkpoints.LastID)
	if !strings.Contains(o.Text, want) {
		t.Fatalf("EXPLAIN ANALYZE does not say %q:\n%s", want, o.Text)
	}
}
