package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/clink-sql/clink/connectors/kafka"
)

// The demo table starts from the latest offset: events produced before a
// query starts (event_type 7, the backlog) are not read; events produced
// after it (event_type 2) are. A table declared over the same topic with
// 'scan.startup.mode' = 'earliest-offset' still reads the backlog.
func TestDemoTableStartsAtLatestOffset(t *testing.T) {
	const backlog = 50
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, cl, addr := demoSession(ctx, t, backlog)

	// New events keep arriving until the test ends: the query's start
	// offset is taken when its source opens, at a moment the test cannot
	// see, so a single later event could land before it and be skipped.
	defer produceEvery(ctx, t, cl, 10*time.Millisecond, func(int) *kgo.Record { return demoEvent(2) })()
	defer cancel()

	w := &rowsWriter{}
	if _, err := s.Execute(ctx, "SELECT event_type FROM nexmark LIMIT 20", w, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(w.rows) != 20 {
		t.Fatalf("%d rows, want 20", len(w.rows))
	}
	for i, r := range w.rows {
		if fmt.Sprint(r[0]) != "2" {
			t.Fatalf("row %d: event_type %v: the demo table read an event produced before the query started", i, r[0])
		}
	}

	mustExec(t, s, fmt.Sprintf("CREATE TABLE nx_all (event_type INT) WITH ('connector' = 'kafka', 'topic' = '%s', "+
		"'properties.bootstrap.servers' = '%s', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset')",
		kafka.NexmarkTopic, addr))
	w = &rowsWriter{}
	if _, err := s.Execute(ctx, fmt.Sprintf("SELECT event_type FROM nx_all LIMIT %d", backlog), w, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, r := range w.rows {
		if fmt.Sprint(r[0]) != "7" {
			t.Fatalf("earliest-offset row %d: event_type %v, want the backlog's 7", i, r[0])
		}
	}
	if len(w.rows) != backlog {
		t.Fatalf("earliest-offset: %d rows, want %d", len(w.rows), backlog)
	}
}

// Issue 19 item 3: SET 'scan.startup.mode' reaches the demo table. After
// a query at the latest offset (the table resolved), SET 'earliest-offset'
// makes the next query read the backlog (event_type 7) first, through the
// table and a view over it; RESET brings the latest offset back. A value the
// demo cannot use is refused, and a 'nexmark' the user made is not touched.
func TestSetStartupModeReachesDemoTable(t *testing.T) {
	const backlog = 30
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, cl, addr := demoSession(ctx, t, backlog)
	defer produceEvery(ctx, t, cl, 10*time.Millisecond, func(int) *kgo.Record { return demoEvent(2) })()
	defer cancel()

	types := func(query string) []string {
		t.Helper()
		w := &rowsWriter{}
		if _, err := s.Execute(ctx, query, w, ExecOptions{}); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		var out []string
		for _, r := range w.rows {
			out = append(out, fmt.Sprint(r[0]))
		}
		return out
	}
	all := func(vals []string, want string, n int) bool {
		if len(vals) != n {
			return false
		}
		for _, v := range vals {
			if v != want {
				return false
			}
		}
		return true
	}
	if got := types("SELECT event_type FROM nexmark LIMIT 5"); !all(got, "2", 5) {
		t.Fatalf("default (latest offset): %v, want five 2s", got)
	}
	mustExec(t, s, "SET 'scan.startup.mode' = 'EARLIEST-OFFSET'")
	if got := types(fmt.Sprintf("SELECT event_type FROM nexmark LIMIT %d", backlog)); !all(got, "7", backlog) {
		t.Fatalf("after SET earliest-offset: %v, want the backlog's %d 7s", got, backlog)
	}
	// A view over the table reads from the same start: the first events
	// of type 2 it sees are the ones produced after the backlog, all of
	// them, though they were produced before this query.
	mustExec(t, s, "CREATE VIEW typed AS SELECT event_type FROM nexmark WHERE event_type <> 2")
	if got := types(fmt.Sprintf("SELECT event_type FROM typed LIMIT %d", backlog)); !all(got, "7", backlog) {
		t.Fatalf("a view after SET earliest-offset: %v, want the backlog's %d 7s", got, backlog)
	}
	mustExec(t, s, "RESET 'scan.startup.mode'")
	if got := types("SELECT event_type FROM nexmark LIMIT 5"); !all(got, "2", 5) {
		t.Fatalf("after RESET: %v, want five 2s (latest offset)", got)
	}
	if _, err := s.Execute(ctx, "SET 'scan.startup.mode' = 'group-offsets'", &rowsWriter{}, ExecOptions{}); err == nil ||
		!strings.Contains(err.Error(), "earliest-offset") {
		t.Fatalf("group-offsets for the demo: %v, want a refusal naming the modes", err)
	}
	// A nexmark table of the user's own is left as declared.
	mustExec(t, s, "DROP TABLE nexmark")
	mustExec(t, s, fmt.Sprintf("CREATE TABLE nexmark (event_type INT) WITH ('connector' = 'kafka', 'topic' = '%s', "+
		"'properties.bootstrap.servers' = '%s', 'format' = 'json', 'scan.startup.mode' = 'latest-offset')",
		kafka.NexmarkTopic, addr))
	mustExec(t, s, "SET 'scan.startup.mode' = 'earliest-offset'")
	if got := types("SELECT event_type FROM nexmark LIMIT 5"); !all(got, "2", 5) {
		t.Fatalf("the user's own nexmark after SET: %v, want five 2s (its own latest-offset)", got)
	}
}

// demoEvent is a nexmark topic record of the event type given.
func demoEvent(typ int) *kgo.Record {
	return &kgo.Record{Value: []byte(fmt.Sprintf(`{"event_type": %d}`, typ))}
}

// demoSession starts an embedded broker whose nexmark topic holds a
// backlog of events of type 7, a client producing to it, and a session
// (on a checked allocator) whose demo table reads it, with the broker's
// address; all close when the
// test ends, after its deferred calls, the allocator checked last.
func demoSession(ctx context.Context, t *testing.T, backlog int) (s *Session, cl *kgo.Client, addr string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	broker, err := kafka.StartEmbedded(ctx, kafka.EmbeddedOptions{Topics: []string{kafka.NexmarkTopic + ":1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { broker.Close() })
	cl, err = kgo.NewClient(kgo.SeedBrokers(broker.Addr()), kgo.DefaultProduceTopic(kafka.NexmarkTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	old := make([]*kgo.Record, backlog)
	for i := range old {
		old[i] = demoEvent(7)
	}
	if err := cl.ProduceSync(ctx, old...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	s = NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	t.Cleanup(func() { s.Close() })
	s.registerDemo(func() (string, error) { return broker.Addr(), nil })
	return s, cl, broker.Addr()
}

// produceEvery produces rec(1), rec(2), ... one every period until ctx
// ends, and returns a wait for the producer to stop (cancel ctx first).
func produceEvery(ctx context.Context, t *testing.T, cl *kgo.Client, period time.Duration, rec func(i int) *kgo.Record) (wait func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(period)
		defer tk.Stop()
		for i := 1; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			if err := cl.ProduceSync(ctx, rec(i)).FirstErr(); err != nil {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("produce: %v", err)
				}
				return
			}
		}
	}()
	return wg.Wait
}
