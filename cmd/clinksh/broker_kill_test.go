package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// brokerProc is a `clinksh kafka-broker` child process on a fixed address,
// so it can be killed and started again where its clients look for it.
type brokerProc struct {
	t    *testing.T
	args []string
	cmd  *exec.Cmd
	addr string
}

// freeAddr is a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startBrokerProc(t *testing.T, args ...string) *brokerProc {
	t.Helper()
	b := &brokerProc{t: t, args: args}
	b.start()
	t.Cleanup(func() { b.kill() })
	return b
}

func (b *brokerProc) start() {
	b.t.Helper()
	cmd := exec.Command(clinkshBinary(b.t), append([]string{"kafka-broker"}, b.args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	b.cmd = cmd
	addrCh := make(chan string, 1)
	var lines []string
	var mu sync.Mutex
	go func() {
		re := regexp.MustCompile(`Kafka broker on (\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addrCh <- m[1]
			}
		}
	}()
	select {
	case b.addr = <-addrCh:
	case <-time.After(60 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		b.t.Fatalf("the broker did not report its address; stderr:\n%s", strings.Join(lines, "\n"))
	}
}

// kill sends SIGKILL: no shutdown code of the broker runs.
func (b *brokerProc) kill() {
	if b.cmd != nil {
		_ = b.cmd.Process.Kill()
		_ = b.cmd.Wait()
		b.cmd = nil
	}
}

// seqProducer produces sequence-numbered records round-robin over topics
// and remembers which ones the broker acknowledged.
type seqProducer struct {
	cl     *kgo.Client
	topics []string
	mu     sync.Mutex
	acked  map[string]map[int64]bool
	errs   int
	err1   error // the first produce error
	next   int64
}

func newSeqProducer(t *testing.T, addr string, topics ...string) *seqProducer {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation(),
		kgo.ProducerLinger(2*time.Millisecond), kgo.RecordRetries(1<<30))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	p := &seqProducer{cl: cl, topics: topics, acked: map[string]map[int64]bool{}}
	for _, tp := range topics {
		p.acked[tp] = map[int64]bool{}
	}
	return p
}

// run produces until ctx ends.
func (p *seqProducer) run(ctx context.Context) {
	for ctx.Err() == nil {
		p.mu.Lock()
		seq := p.next
		p.next++
		p.mu.Unlock()
		topic := p.topics[seq%int64(len(p.topics))]
		r := &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, `{"seq": %d}`, seq)}
		if seq%64 == 0 {
			time.Sleep(time.Millisecond) // a steady stream, not a flood to read back
		}
		p.cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			if err != nil {
				p.errs++
				if p.err1 == nil {
					p.err1 = err
				}
				return
			}
			p.acked[r.Topic][seq] = true
		})
	}
}

// readTopic reads every record of topic (all partitions, from the start to
// the end offsets it sees first) and counts each sequence number.
func readTopic(t *testing.T, addr, topic string) map[int64]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admCl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	ends, err := kadm.NewClient(admCl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("topic %s partition %d: %v", topic, o.Partition, o.Err)
		}
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	got := map[int64]int{}
	if len(want) == 0 {
		return got
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v (partitions left %v)", topic, ctx.Err(), want)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("reading %s partition %d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			var v struct{ Seq int64 }
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("%s offset %d: %q: %v", topic, r.Offset, r.Value, err)
			}
			got[v.Seq]++
			if end, ok := want[r.Partition]; ok && r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
	}
	return got
}

// The durable broker under kill -9 (issue 18): producers keep writing to a
// created topic and an auto-created one while the broker process is killed
// with SIGKILL at random moments and started again on its data directory;
// just before each kill a brand-new topic is auto-created and one record
// acknowledged in it. After the last restart every acknowledged record of
// every topic is there (at-least-once: a record the producer retried after a
// kill may be there twice, and is counted).
func TestE2EKafkaBrokerSurvivesKill9(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerProc(t, "--listen", freeAddr(t), "--data-dir", dir, "--topic", "made:2")
	addr := b.addr
	p := newSeqProducer(t, addr, "made", "auto")
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); p.run(ctx) }()

	const rounds = 4
	fresh := map[string]bool{}
	for r := 0; r < rounds; r++ {
		time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond)
		topic := fmt.Sprintf("fresh%d", r)
		pctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := p.cl.ProduceSync(pctx, &kgo.Record{Topic: topic, Value: []byte(`{"seq": -1}`)}).FirstErr()
		cancel()
		if err != nil {
			t.Fatalf("round %d: producing to the new topic %s: %v", r, topic, err)
		}
		fresh[topic] = true
		b.kill()
		b.start()
	}
	time.Sleep(500 * time.Millisecond)
	stop()
	wg.Wait()
	fctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.cl.Flush(fctx); err != nil {
		t.Fatalf("flushing the producer: %v", err)
	}
	// The state the test checks is itself recovered from a kill -9.
	b.kill()
	b.start()

	adm, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	names, err := kadm.NewClient(adm).ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range append([]string{"made", "auto"}, keys(fresh)...) {
		if !names.Has(tp) {
			t.Errorf("topic %s is gone after the restarts (topics: %v)", tp, names.Names())
		}
	}
	for topic := range fresh {
		if got := readTopic(t, addr, topic); got[-1] < 1 {
			t.Errorf("topic %s: its acknowledged record is gone", topic)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, topic := range []string{"made", "auto"} {
		got := readTopic(t, addr, topic)
		missing, dup := 0, 0
		for seq := range p.acked[topic] {
			if got[seq] == 0 {
				missing++
			}
		}
		for _, n := range got {
			if n > 1 {
				dup += n - 1
			}
		}
		t.Logf("topic %s: %d acknowledged, %d read, missing %d, duplicated %d (%d kills; produce errors %d, first: %v)",
			topic, len(p.acked[topic]), len(got), missing, dup, rounds+1, p.errs, p.err1)
		if len(p.acked[topic]) == 0 {
			t.Errorf("topic %s: nothing was acknowledged: the test proved nothing", topic)
		}
		if missing > 0 {
			t.Errorf("topic %s: %d acknowledged records are missing after kill -9", topic, missing)
		}
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// txnProducer is a transactional producer of sequence-numbered records.
func txnProducer(t *testing.T, addr string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("clink-test-txn"),
		kgo.DefaultProduceTopic("txn"), kgo.AllowAutoTopicCreation(), kgo.RecordRetries(1<<30))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// produceTxn produces seq from..to-1 in one transaction and ends it with
// commit (or abort); with end false the transaction is left open.
func produceTxn(t *testing.T, cl *kgo.Client, from, to int, end bool, commit kgo.TransactionEndTry) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var rs []*kgo.Record
	for i := from; i < to; i++ {
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, `{"seq": %d}`, i)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("producing %d..%d: %v", from, to, err)
	}
	if end {
		if err := cl.EndTransaction(ctx, commit); err != nil {
			t.Fatalf("ending the transaction of %d..%d: %v", from, to, err)
		}
	}
}

// kcatCommitted reads topic with kcat (librdkafka, an outside client) as a
// read_committed consumer up to the end and returns the sequence numbers.
func kcatCommitted(t *testing.T, addr, topic string) []int {
	t.Helper()
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatalf("kcat is required (apt-get install kcat): %v", err)
	}
	out, err := exec.Command(kcat, "-C", "-b", addr, "-t", topic, "-o", "beginning", "-e", "-q",
		"-X", "isolation.level=read_committed", "-f", "%s\n").CombinedOutput()
	if err != nil {
		t.Fatalf("kcat: %v\n%s", err, out)
	}
	var seqs []int
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l == "" {
			continue
		}
		var v struct{ Seq int }
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("kcat line %q: %v", l, err)
		}
		seqs = append(seqs, v.Seq)
	}
	sort.Ints(seqs)
	return seqs
}

func seqRange(ranges ...[2]int) []int {
	var out []int
	for _, r := range ranges {
		for i := r[0]; i < r[1]; i++ {
			out = append(out, i)
		}
	}
	return out
}

// Transactions through the durable broker: a committed transaction is
// read by a read_committed consumer (kcat), an aborted one is not, and one
// left open when the broker is killed with SIGKILL is never seen: after
// the restart the producer's next session fences it and commits its own.
func TestE2EKafkaBrokerTransactionsSurviveKill9(t *testing.T) {
	b := startBrokerProc(t, "--listen", freeAddr(t), "--data-dir", t.TempDir())
	cl := txnProducer(t, b.addr)
	produceTxn(t, cl, 0, 100, true, kgo.TryCommit)
	produceTxn(t, cl, 100, 200, true, kgo.TryAbort)
	produceTxn(t, cl, 200, 300, false, kgo.TryAbort)
	cl.Close()
	b.kill()
	b.start()
	if got, want := kcatCommitted(t, b.addr, "txn"), seqRange([2]int{0, 100}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after kill -9 with a transaction open, read_committed reads %d records %v, want 0..99", len(got), short(got))
	}
	cl = txnProducer(t, b.addr) // the same transactional id: fences the open one
	defer cl.Close()
	produceTxn(t, cl, 300, 400, true, kgo.TryCommit)
	b.kill()
	b.start()
	if got, want := kcatCommitted(t, b.addr, "txn"), seqRange([2]int{0, 100}, [2]int{300, 400}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read_committed reads %d records %v, want 0..99 and 300..399", len(got), short(got))
	}
}

func short(s []int) string {
	if len(s) <= 12 {
		return fmt.Sprint(s)
	}
	return fmt.Sprint(s[:6], " ... ", s[len(s)-6:])
}
