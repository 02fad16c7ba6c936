package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/clink-sql/clink/connectors/kafka"
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
