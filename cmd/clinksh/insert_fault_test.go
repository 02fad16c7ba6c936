package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceSeqs writes records {"seq": 0..n-1} to topic, round-robin over
// its partitions, and waits for every acknowledgement.
func produceSeqs(t *testing.T, addr, topic string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	errc := make(chan error, 1)
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Value: fmt.Appendf(nil, `{"seq": %d}`, i)}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errc <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}
}

// endOffset is the sum of topic's end offsets.
func endOffset(t *testing.T, addr, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	if err != nil {
		return 0
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			n += o.Offset
		}
	})
	return n
}

// groupOffset is the sum of the offsets group has committed for topic.
func groupOffset(t *testing.T, addr, group, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return 0 // nothing committed yet
	}
	if err != nil {
		t.Fatalf("fetching group %s offsets: %v", group, err)
	}
	var n int64
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil && o.At > 0 {
			n += o.At
		}
	})
	return n
}

// insertScript is the pass-through INSERT of issue 18: a group-offsets
// source to a sink topic; bounded reads to the end and stops.
func insertScript(addr string, bounded bool, extra string) string {
	b := ""
	if bounded {
		b = ", 'scan.bounded.mode' = 'latest-offset'"
	}
	return fmt.Sprintf(`CREATE TABLE src (seq BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '%[1]s', 'format' = 'json', 'properties.group.id' = 'copier',
  'scan.startup.mode' = 'group-offsets', 'properties.auto.offset.reset' = 'earliest'%[2]s%[3]s);
CREATE TABLE dst (seq BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out',
  'properties.bootstrap.servers' = '%[1]s', 'format' = 'json');
INSERT INTO dst SELECT seq FROM src;`, addr, b, extra)
}

// startInsert starts the INSERT as its own clinksh process.
func startInsert(t *testing.T, script string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(clinkshBinary(t), "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CLINK_HISTORY=")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// stopAfter picks how many more output records a round waits for before it
// stops the INSERT: a random moment within the first half of what is left
// to copy, so the stop lands mid-copy however fast the machine is (a
// random delay let a fast run copy everything before it).
func stopAfter(left int64) int64 {
	return 1 + rand.Int64N(max(left/2, 1))
}

// waitOutput waits until topic has at least min records.
func waitOutput(t *testing.T, addr, topic string, min int64, cmd *exec.Cmd, out *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for endOffset(t, addr, topic) < min {
		if time.Now().After(deadline) {
			t.Fatalf("no output in %s after 2 minutes; clinksh said:\n%s", topic, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// drainAndCount runs the INSERT once more over a bounded source (the same
// group) to copy what is left, then counts each sequence number in the
// sink topic as kcat (librdkafka, an outside reader) sees it.
func drainAndCount(t *testing.T, addr string, n int) (missing, duplicated int) {
	t.Helper()
	r := runClinksh(t, "", "-c", insertScript(addr, true, ""))
	if r.code != 0 {
		t.Fatalf("the draining INSERT failed (exit %d): %s%s", r.code, r.stdout, r.stderr)
	}
	got := map[int64]int{}
	for _, seq := range kcatCommitted(t, addr, "out") {
		got[int64(seq)]++
	}
	for i := 0; i < n; i++ {
		switch c := got[int64(i)]; {
		case c == 0:
			missing++
		case c > 1:
			duplicated += c - 1
		}
	}
	if len(got) > n {
		t.Fatalf("the sink topic has %d distinct sequence numbers, more than the %d written", len(got), n)
	}
	return missing, duplicated
}

const faultRecords = 500_000

var cancelledRe = regexp.MustCompile(`Cancelled: (\d+) row\(s\) delivered to 'dst'; the source offsets are committed up to the last row delivered\.`)

// Issue 18's repro: 500k sequence-numbered records copied by INSERT INTO a
// Kafka sink; the INSERT (its own process) is stopped with SIGINT shortly
// after its first output, twice, then drained by a bounded run with the
// same group. The cancelled INSERT flushed what it had produced before
// committing the offsets, so each round committed exactly as many input
// records as it added to the sink (a pass-through pushes a batch to the
// sink whole or not at all), and after the drain nothing is missing or
// twice.
func TestE2EKafkaInsertSIGINTLosesNothing(t *testing.T) {
	b := startBrokerProc(t, "--listen", "127.0.0.1:0", "--topic", "in:2", "--topic", "out:2")
	produceSeqs(t, b.addr, "in", faultRecords)
	for round := 0; round < 2; round++ {
		inBefore, outBefore := groupOffset(t, b.addr, "copier", "in"), endOffset(t, b.addr, "out")
		if inBefore == faultRecords {
			t.Logf("round %d: everything was copied already", round)
			break
		}
		cmd, out := startInsert(t, insertScript(b.addr, false, ""))
		waitOutput(t, b.addr, "out", outBefore+stopAfter(faultRecords-inBefore), cmd, out)
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
			t.Fatalf("round %d: the interrupted INSERT exited with %d (%v), want %d; it said:\n%s", round, code, err, exitInterrupted, out)
		}
		in, outN := groupOffset(t, b.addr, "copier", "in")-inBefore, endOffset(t, b.addr, "out")-outBefore
		t.Logf("round %d: SIGINT after %d records delivered, %d input offsets committed", round, outN, in)
		if in != outN {
			t.Errorf("round %d: the cancelled INSERT delivered %d records but committed %d input offsets", round, outN, in)
		}
		// What it reported is what the broker holds and what it committed.
		m := cancelledRe.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("round %d: the cancelled INSERT did not report what it committed:\n%s", round, out)
		}
		if reported, _ := strconv.ParseInt(m[1], 10, 64); reported != outN {
			t.Errorf("round %d: the INSERT reported %d rows delivered, the sink topic grew by %d", round, reported, outN)
		}
	}
	missing, dup := drainAndCount(t, b.addr, faultRecords)
	t.Logf("SIGINT x2 then drain: %d records, missing %d, duplicated %d", faultRecords, missing, dup)
	if missing > 0 || dup > 0 {
		t.Fatalf("%d records lost, %d duplicated", missing, dup)
	}
}

// The same copy killed with SIGKILL at random moments, three times, with
// offsets committed every 200 ms while it runs: what was committed had
// been acknowledged by the sink's broker, so after the drain nothing is
// missing (at-least-once: records re-read after a kill appear twice).
func TestE2EKafkaInsertKill9LosesNothing(t *testing.T) {
	b := startBrokerProc(t, "--listen", "127.0.0.1:0", "--topic", "in:2", "--topic", "out:2")
	produceSeqs(t, b.addr, "in", faultRecords)
	extra := ", 'properties.auto.commit.interval.ms' = '200'"
	for round := 0; round < 3; round++ {
		if groupOffset(t, b.addr, "copier", "in") == faultRecords {
			t.Logf("round %d: everything was copied and committed already", round)
			break
		}
		cmd, out := startInsert(t, insertScript(b.addr, false, extra))
		waitOutput(t, b.addr, "out", endOffset(t, b.addr, "out")+stopAfter(faultRecords-groupOffset(t, b.addr, "copier", "in")), cmd, out)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Logf("round %d: %d records in the sink after kill -9", round, endOffset(t, b.addr, "out"))
	}
	missing, dup := drainAndCount(t, b.addr, faultRecords)
	t.Logf("kill -9 x3 then drain: %d records, missing %d, duplicated %d", faultRecords, missing, dup)
	if missing > 0 {
		t.Fatalf("%d records lost", missing)
	}
}

// A Kafka sink whose broker cannot be reached fails the INSERT within
// 'sink.delivery-timeout', naming the address and the cause (issue 18:
// it printed "Table 'd' created." and hung forever).
func TestE2EKafkaSinkUnreachableFailsInTime(t *testing.T) {
	dead := freeAddr(t)
	script := fmt.Sprintf(`CREATE TABLE d (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'd',
  'properties.bootstrap.servers' = '%s', 'format' = 'json', 'sink.delivery-timeout' = '2 s');
INSERT INTO d VALUES (1), (2), (3);`, dead)
	start := time.Now()
	r := runClinksh(t, "", "-c", script)
	took := time.Since(start)
	t.Logf("failed after %v: %s", took.Round(time.Millisecond), strings.TrimSpace(r.stderr))
	if r.code == 0 {
		t.Fatalf("the INSERT into an unreachable broker succeeded: %s", r.stdout)
	}
	for _, want := range []string{dead, "connection refused", "sink.delivery-timeout"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the error does not say %q:\n%s", want, r.stderr)
		}
	}
	if took > time.Minute {
		t.Errorf("it took %v to fail with a 2 s delivery timeout", took)
	}
}

// latestCheckpoint is the highest complete checkpoint id under dir (0:
// none).
func latestCheckpoint(dir string) int64 {
	m, _ := filepath.Glob(filepath.Join(dir, "chk-*", "manifest.json"))
	var id int64
	for _, p := range m {
		n, err := strconv.ParseInt(strings.TrimPrefix(filepath.Base(filepath.Dir(p)), "chk-"), 10, 64)
		if err == nil && n > id {
			id = n
		}
	}
	return id
}

// The copy with checkpoints every 200 ms, killed with SIGKILL at random
// moments three times (each after a checkpoint of its own completed) and
// started again with the same pipeline name: each restart says it resumed
// from the latest checkpoint, and the group's offsets, committed only when
// a checkpoint completes, never pass what the sink's broker acknowledged
// (the sink flushes at every barrier). After a drain from the group's
// offsets nothing is missing; the duplicates are what each restart re-read
// after its checkpoint and what the drain re-read after the group's
// offsets, which lag the checkpoint when a kill came before the commit.
func TestE2EKafkaInsertCheckpointedKill9LosesNothing(t *testing.T) {
	b := startBrokerProc(t, "--listen", "127.0.0.1:0", "--topic", "in:2", "--topic", "out:2")
	produceSeqs(t, b.addr, "in", faultRecords)
	ckDir := t.TempDir()
	sets := fmt.Sprintf("SET 'execution.checkpointing.interval' = '200 ms';\nSET 'state.checkpoints.dir' = '%s';\nSET 'pipeline.name' = 'copier';\n", ckDir)
	pipe := filepath.Join(ckDir, "copier")
	for round := 0; round < 3; round++ {
		before := latestCheckpoint(pipe)
		cmd, out := startInsert(t, sets+insertScript(b.addr, false, ""))
		// Killed at a random moment after a checkpoint of its own (a
		// round with nothing left to copy still checkpoints: an idle
		// source injects its barrier).
		deadline := time.Now().Add(2 * time.Minute)
		for latestCheckpoint(pipe) <= before {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no checkpoint completed in 2 minutes; clinksh said:\n%s", round, out)
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(300 * time.Millisecond))))
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if round > 0 {
			want := fmt.Sprintf("resumed from checkpoint %d", before)
			if !strings.Contains(out.String(), want) {
				t.Fatalf("round %d: the restarted INSERT did not say %q:\n%s", round, want, out)
			}
		}
		sink, group := endOffset(t, b.addr, "out"), groupOffset(t, b.addr, "copier", "in")
		t.Logf("round %d: %d records in the sink after kill -9; latest checkpoint %d, group offsets at %d", round,
			sink, latestCheckpoint(pipe), group)
	}
	missing, dup := drainAndCount(t, b.addr, faultRecords)
	t.Logf("checkpointed kill -9 x3 then drain: %d records, missing %d, duplicated %d", faultRecords, missing, dup)
	if missing > 0 {
		t.Fatalf("%d records lost", missing)
	}
}
