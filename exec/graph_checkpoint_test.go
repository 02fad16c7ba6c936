package exec

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// The graph's checkpoint tests use row batches of one BIGINT column: a
// source emits 0, 1, 2, ... and records the next value as its position,
// so the state any operator must hold at a cut is a function of the
// sources' positions, computed here independently of the graph.

var ckSchema = arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)

// posSource emits batches of size consecutive values from next, up to
// limit (0: unbounded), with a watermark (the next value) after each.
type posSource struct {
	size  int
	limit int64
	next  int64
	pause time.Duration // between batches

	mu             sync.Mutex
	started, emits int // emits (batches and watermarks) begun / finished
}

func (s *posSource) Kind() string               { return "pos" }
func (s *posSource) Capabilities() Capabilities { return Capabilities{} }
func (s *posSource) Run(ctx context.Context, out Emitter) error {
	for s.limit == 0 || s.next < s.limit {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := int64(s.size)
		if s.limit > 0 {
			n = min(n, s.limit-s.next)
		}
		rows := make([]Row, n)
		for i := range rows {
			rows[i] = Row{s.next + int64(i)}
		}
		b := NewRowBatch(ckSchema, rows)
		s.mu.Lock()
		s.started++
		s.mu.Unlock()
		err := EmitThen(ctx, out, b, func() { s.next += n })
		b.Release()
		s.mu.Lock()
		s.emits++
		s.mu.Unlock()
		if errors.Is(err, ErrStop) {
			return nil
		}
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.started++
		s.mu.Unlock()
		err = out.EmitWatermark(ctx, s.next)
		s.mu.Lock()
		s.emits++
		s.mu.Unlock()
		if err != nil {
			return stopNil(err)
		}
		if s.pause > 0 {
			time.Sleep(s.pause)
		}
	}
	return stopNil(out.EmitWatermark(ctx, MaxWatermark))
}

func stopNil(err error) error {
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

func (s *posSource) SnapshotState(_ context.Context, w StateWriter) error {
	return w.Value("next", binary.LittleEndian.AppendUint64(nil, uint64(s.next)))
}
func (s *posSource) RestoreState(_ context.Context, r StateReader) error {
	v, ok, err := r.Value("next")
	if err != nil || !ok {
		return fmt.Errorf("next: ok=%v err=%v", ok, err)
	}
	s.next = int64(binary.LittleEndian.Uint64(v))
	return nil
}

// sumOp keeps, per input, the sum and count of the values it saw (its
// state) and passes its input on.
type sumOp struct {
	Base
	Sum, N []int64
}

func newSumOp(ports int) *sumOp { return &sumOp{Sum: make([]int64, ports), N: make([]int64, ports)} }

func (o *sumOp) Kind() string               { return "sum" }
func (o *sumOp) Capabilities() Capabilities { return Capabilities{} }
func (o *sumOp) Process(ctx context.Context, in int, b *Batch, out Emitter) error {
	for _, r := range b.Rows() {
		o.Sum[in] += r[0].(int64)
		o.N[in]++
	}
	return out.Emit(ctx, b)
}
func (o *sumOp) SnapshotState(_ context.Context, w StateWriter) error {
	b, _ := json.Marshal(o)
	return w.Value("sums", b)
}
func (o *sumOp) RestoreState(_ context.Context, r StateReader) error {
	v, ok, err := r.Value("sums")
	if err != nil || !ok {
		return fmt.Errorf("sums: ok=%v err=%v", ok, err)
	}
	return json.Unmarshal(v, o)
}

// holdRouter holds rows back (up to hold batches) and sends even values to
// target 0, odd ones to target 1: a stand-in for the shuffle exchange's
// coalescing, which must flush before a barrier.
type holdRouter struct {
	Base
	hold int
	held [2][]Row
	n    int
}

func (r *holdRouter) Kind() string               { return "holdRouter" }
func (r *holdRouter) Capabilities() Capabilities { return Capabilities{} }
func (r *holdRouter) Process(ctx context.Context, _ int, b *Batch, out Emitter) error {
	for _, row := range b.Rows() {
		t := row[0].(int64) % 2
		r.held[t] = append(r.held[t], Row{row[0]})
	}
	r.n++
	if r.n < r.hold {
		return nil
	}
	return r.flush(ctx, out)
}
func (r *holdRouter) flush(ctx context.Context, out Emitter) error {
	r.n = 0
	ro := out.(RoutedEmitter)
	for t, rows := range r.held {
		if len(rows) == 0 {
			continue
		}
		r.held[t] = nil
		b := NewRowBatch(ckSchema, rows)
		err := ro.EmitTo(ctx, t, b)
		b.Release()
		if err != nil {
			return err
		}
	}
	return nil
}
func (r *holdRouter) FlushBeforeBarrier(ctx context.Context, out Emitter) error {
	return r.flush(ctx, out)
}
func (r *holdRouter) OnWatermark(ctx context.Context, wm int64, out Emitter) error {
	if err := r.flush(ctx, out); err != nil {
		return err
	}
	return out.EmitWatermark(ctx, wm)
}
func (r *holdRouter) Finish(ctx context.Context, _ int, out Emitter) error { return r.flush(ctx, out) }

// memCk is an in-memory CheckpointStore keeping every completed checkpoint.
type memCk struct {
	mu      sync.Mutex
	done    map[int64]*memCkpt
	order   []int64
	failAt  int64 // Stage writers of this checkpoint fail
	begun   int
	aborted int
}

func newMemCk() *memCk { return &memCk{done: map[int64]*memCkpt{}} }

type memCkpt struct {
	store  *memCk
	id     int64
	mu     sync.Mutex
	stages map[int]*memStage
}

type memStage struct {
	mu   sync.Mutex
	vals map[string][]byte
	fail bool
}

func (m *memCk) Begin(id int64) (CheckpointWriter, error) {
	m.mu.Lock()
	m.begun++
	m.mu.Unlock()
	return &memCkpt{store: m, id: id, stages: map[int]*memStage{}}, nil
}
func (c *memCkpt) Stage(id int) StateWriter {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &memStage{vals: map[string][]byte{}, fail: c.store.failAt == c.id}
	c.stages[id] = st
	return st
}
func (c *memCkpt) Commit() (int64, error) {
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	c.store.done[c.id] = c
	c.store.order = append(c.store.order, c.id)
	return int64(len(c.stages)), nil
}
func (c *memCkpt) Abort() {
	c.store.mu.Lock()
	c.store.aborted++
	c.store.mu.Unlock()
}
func (c *memCkpt) get(id int) (*memStage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.stages[id]
	return st, ok
}

type ckReader struct{ c *memCkpt }

func (r ckReader) Stage(id int) (StateReader, bool) {
	st, ok := r.c.get(id)
	if !ok {
		return nil, false
	}
	return stageReader{st}, true
}

func (m *memCk) latest() *memCkpt {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.order) == 0 {
		return nil
	}
	return m.done[m.order[len(m.order)-1]]
}

func (m *memCk) all() []*memCkpt {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*memCkpt
	for _, id := range m.order {
		out = append(out, m.done[id])
	}
	return out
}

func (st *memStage) Records(name string, _ *arrow.Schema, _ ...arrow.RecordBatch) error {
	return fmt.Errorf("memStage: records part %q not supported", name)
}
func (st *memStage) Value(name string, v []byte) error {
	if st.fail && name != stagePart {
		return errors.New("disk full")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.vals[name] = append([]byte(nil), v...)
	return nil
}
func (st *memStage) get(name string) ([]byte, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	v, ok := st.vals[name]
	return v, ok
}

// stageReader reads a memStage back.
type stageReader struct{ st *memStage }

func (r stageReader) Records(string) (*arrow.Schema, []arrow.RecordBatch, bool, error) {
	return nil, nil, false, nil
}
func (r stageReader) Value(name string) ([]byte, bool, error) {
	v, ok := r.st.get(name)
	return v, ok, nil
}

func (c *memCkpt) reader() CheckpointReader { return ckReader{c} }

// posAt and sumsAt read a checkpoint's source position and operator sums.
func posAt(t *testing.T, c *memCkpt, s *Stage) int64 {
	t.Helper()
	st, ok := c.get(s.ID)
	if !ok {
		t.Fatalf("checkpoint %d: no state for source %s", c.id, s.Name)
	}
	if b, _ := st.get(stagePart); strings.Contains(string(b), `"source_ended":true`) {
		return s.Src.(*posSource).limit // it emitted everything before the barrier
	}
	v, ok := st.get("next")
	if !ok {
		t.Fatalf("checkpoint %d: source %s wrote no position", c.id, s.Name)
	}
	return int64(binary.LittleEndian.Uint64(v))
}

func sumsAt(t *testing.T, c *memCkpt, s *Stage) *sumOp {
	t.Helper()
	st, ok := c.get(s.ID)
	if !ok {
		t.Fatalf("checkpoint %d: no state for %s", c.id, s.Name)
	}
	v, ok := st.get("sums")
	if !ok {
		t.Fatalf("checkpoint %d: %s wrote no sums", c.id, s.Name)
	}
	var o sumOp
	if err := json.Unmarshal(v, &o); err != nil {
		t.Fatal(err)
	}
	return &o
}

// tri is the sum of 0..p-1; evens of the even values below p.
func tri(p int64) int64 { return p * (p - 1) / 2 }
func evens(p int64) int64 {
	var s int64
	for v := int64(0); v < p; v += 2 {
		s += v
	}
	return s
}

// runChecked runs g with checkpoints every millisecond until it ends, and
// fails the test when it hangs (a deadlock), not on any timing.
func runChecked(t *testing.T, ctx context.Context, g *Graph, store *memCk) error {
	t.Helper()
	if !g.CheckpointsEnabled() {
		g.EnableCheckpoints(CheckpointConfig{Interval: time.Millisecond, Store: store})
	}
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Minute):
		t.Fatal("graph did not finish: deadlock")
		return nil
	}
}

// needCheckpoints returns the completed checkpoints taken while every
// stage still ran (once one has ended, its state is its final one, which
// the end of the test checks), at least n of them.
func needCheckpoints(t *testing.T, store *memCk, n int) []*memCkpt {
	t.Helper()
	var live []*memCkpt
	for _, c := range store.all() {
		ended := false
		c.mu.Lock()
		for _, st := range c.stages {
			b, _ := st.get(stagePart)
			ended = ended || strings.Contains(string(b), `"done":true`) || strings.Contains(string(b), `"source_ended":true`)
		}
		c.mu.Unlock()
		if !ended {
			live = append(live, c)
		}
	}
	if len(live) < n {
		t.Fatalf("%d checkpoints completed while the graph ran, want at least %d", len(live), n)
	}
	return live
}

// Two sources into a two-input stage: at every checkpoint, the stage's
// state per input is exactly its source's pre-barrier prefix.
func TestCheckpointCutTwoSources(t *testing.T) {
	g := NewGraph(Options{})
	s1 := g.AddSource("s1", &posSource{size: 7, limit: 9000, pause: 20 * time.Microsecond})
	s2 := g.AddSource("s2", &posSource{size: 3, limit: 6000, pause: 20 * time.Microsecond})
	join := g.AddOperator("join", newSumOp(2), s1, s2)
	sinkOp := newSumOp(1)
	sink := g.AddOperator("sink", sinkOp, join)
	store := newMemCk()
	if err := runChecked(t, context.Background(), g, store); err != nil {
		t.Fatal(err)
	}
	for _, c := range needCheckpoints(t, store, 3) {
		p1, p2 := posAt(t, c, s1), posAt(t, c, s2)
		j := sumsAt(t, c, join)
		if j.Sum[0] != tri(p1) || j.Sum[1] != tri(p2) || j.N[0] != p1 || j.N[1] != p2 {
			t.Fatalf("checkpoint %d: join state %v/%v, want the prefixes %d and %d rows (sums %d, %d)", c.id, j.Sum, j.N, p1, p2, tri(p1), tri(p2))
		}
		if k := sumsAt(t, c, sink); k.Sum[0] != tri(p1)+tri(p2) {
			t.Fatalf("checkpoint %d: sink sum %d, want %d", c.id, k.Sum[0], tri(p1)+tri(p2))
		}
	}
	if sinkOp.Sum[0] != tri(9000)+tri(6000) {
		t.Fatalf("final sum %d, want %d: barriers changed the data", sinkOp.Sum[0], tri(9000)+tri(6000))
	}
}

// One source fanned out to two stages that meet again in a union, and a
// self-join (one stage feeding both inputs of the next).
func TestCheckpointCutFanOutAndSelfJoin(t *testing.T) {
	g := NewGraph(Options{})
	src := g.AddSource("src", &posSource{size: 5, limit: 12000, pause: 20 * time.Microsecond})
	a := g.AddOperator("a", newSumOp(1), src)
	b := g.AddOperator("b", newSumOp(1), src)
	union := g.AddOperator("union", newSumOp(2), a, b)
	self := g.AddOperator("self", newSumOp(2), union, union)
	store := newMemCk()
	if err := runChecked(t, context.Background(), g, store); err != nil {
		t.Fatal(err)
	}
	for _, c := range needCheckpoints(t, store, 3) {
		p := posAt(t, c, src)
		for _, st := range []*Stage{a, b} {
			if o := sumsAt(t, c, st); o.Sum[0] != tri(p) {
				t.Fatalf("checkpoint %d: %s sum %d, want %d", c.id, st.Name, o.Sum[0], tri(p))
			}
		}
		if u := sumsAt(t, c, union); u.Sum[0] != tri(p) || u.Sum[1] != tri(p) {
			t.Fatalf("checkpoint %d: union %v, want %d on both inputs", c.id, u.Sum, tri(p))
		}
		if o := sumsAt(t, c, self); o.Sum[0] != 2*tri(p) || o.Sum[1] != 2*tri(p) {
			t.Fatalf("checkpoint %d: self-join %v, want %d on both inputs", c.id, o.Sum, 2*tri(p))
		}
	}
}

// Two sources through two parallel exchanges that hold rows back, into two
// consumers each fed by both exchanges: the held rows are flushed before
// the barrier, so each consumer holds exactly its share of both prefixes.
func TestCheckpointCutParallelExchanges(t *testing.T) {
	g := NewGraph(Options{})
	s1 := g.AddSource("s1", &posSource{size: 4, limit: 9000, pause: 20 * time.Microsecond})
	s2 := g.AddSource("s2", &posSource{size: 9, limit: 9000, pause: 20 * time.Microsecond})
	r1 := g.AddOperator("r1", &holdRouter{hold: 5}, s1)
	r2 := g.AddOperator("r2", &holdRouter{hold: 3}, s2)
	t0 := g.AddOperatorPorts("t0", newSumOp(1), 1)
	t1 := g.AddOperatorPorts("t1", newSumOp(1), 1)
	for _, r := range []*Stage{r1, r2} {
		g.Connect(r, t0, 0)
		g.Connect(r, t1, 0)
	}
	store := newMemCk()
	if err := runChecked(t, context.Background(), g, store); err != nil {
		t.Fatal(err)
	}
	for _, c := range needCheckpoints(t, store, 3) {
		p1, p2 := posAt(t, c, s1), posAt(t, c, s2)
		even, all := evens(p1)+evens(p2), tri(p1)+tri(p2)
		if o := sumsAt(t, c, t0); o.Sum[0] != even {
			t.Fatalf("checkpoint %d: t0 sum %d, want %d (the even values of both prefixes)", c.id, o.Sum[0], even)
		}
		if o := sumsAt(t, c, t1); o.Sum[0] != all-even {
			t.Fatalf("checkpoint %d: t1 sum %d, want %d", c.id, o.Sum[0], all-even)
		}
	}
}

// A run cancelled after some checkpoints, restored into a fresh graph of
// the same shape from the latest, ends with every value counted once:
// with both sources running at the cut, and with one that had ended
// before it (restored as ended: it does not run again, and the join's
// input from it stays ended).
func TestCheckpointRestoreCountsOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limitB int64
		ended  bool
	}{{"both-running", 4500, false}, {"one-ended", 60, true}} {
		t.Run(tc.name, func(t *testing.T) {
			build := func() (*Graph, *sumOp, []*Stage) {
				g := NewGraph(Options{})
				a := &posSource{size: 7, limit: 6000, pause: 50 * time.Microsecond}
				b := &posSource{size: 5, limit: tc.limitB, pause: 50 * time.Microsecond}
				s1, s2 := g.AddSource("s1", a), g.AddSource("s2", b)
				r := g.AddOperator("r", &holdRouter{hold: 4}, s1)
				join := g.AddOperatorPorts("join", newSumOp(2), 2)
				g.Connect(r, join, 0)
				g.Connect(r, join, 0)
				g.Connect(s2, join, 1)
				sink := newSumOp(1)
				g.AddOperator("sink", sink, join)
				return g, sink, []*Stage{s1, s2}
			}
			g, _, srcs := build()
			store := newMemCk()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			g.EnableCheckpoints(CheckpointConfig{Interval: time.Millisecond, Store: store})
			go func() {
				// Two checkpoints after the cut the case wants.
				for tc.ended && !srcs[1].finished.Load() {
					time.Sleep(time.Millisecond)
				}
				from := g.CheckpointStats().Completed
				for g.CheckpointStats().Completed < from+2 {
					time.Sleep(time.Millisecond)
				}
				cancel()
			}()
			err := runChecked(t, ctx, g, store)
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
			last := store.latest()
			if last == nil {
				t.Fatal("no checkpoint completed")
			}
			st, _ := last.get(srcs[1].ID)
			bk, _ := st.get(stagePart)
			if ended := strings.Contains(string(bk), `"source_ended":true`); ended != tc.ended {
				t.Fatalf("checkpoint %d: s2 ended = %v, want %v (%s)", last.id, ended, tc.ended, bk)
			}
			g2, sink, srcs2 := build()
			if err := g2.Restore(context.Background(), last.reader()); err != nil {
				t.Fatal(err)
			}
			if srcs2[0].Src.(*posSource).next == 0 {
				t.Fatal("restored s1 starts from 0: nothing was checkpointed")
			}
			if err := g2.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := tri(6000) + tri(tc.limitB)
			if sink.Sum[0] != want || sink.N[0] != 6000+tc.limitB {
				t.Fatalf("after restore from checkpoint %d: %d rows summing to %d, want %d rows summing to %d", last.id, sink.N[0], sink.Sum[0], 6000+tc.limitB, want)
			}
		})
	}
}

// gateOp blocks its first batch until the run is cancelled.
type gateOp struct{ Base }

func (gateOp) Kind() string               { return "gate" }
func (gateOp) Capabilities() Capabilities { return Capabilities{} }
func (gateOp) Process(ctx context.Context, _ int, _ *Batch, _ Emitter) error {
	<-ctx.Done()
	return ctx.Err()
}

// A producer waiting for alignment wakes when the run is cancelled: s2's
// first batch is stuck, so its barrier never comes, and s1's batches after
// its barrier wait at the join until the cancel.
func TestCheckpointCancelWhileAligning(t *testing.T) {
	g := NewGraph(Options{})
	a := &posSource{size: 2}
	s1 := g.AddSource("s1", a)
	s2 := g.AddSource("s2", &posSource{size: 2})
	gate := g.AddOperator("gate", gateOp{}, s2)
	join := g.AddOperator("join", newSumOp(2), s1, gate)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	store := newMemCk()
	g.EnableCheckpoints(CheckpointConfig{Interval: time.Millisecond, Store: store})
	go func() { errc <- g.Run(ctx) }()
	// Wait until s1's barrier is at the join and s1 is inside an emit.
	deadline := time.Now().Add(time.Minute)
	for {
		if time.Now().After(deadline) {
			join.mu.Lock()
			st := join.bookkeeping()
			bars := fmt.Sprint(join.ports[0].bars, join.ports[1].bars, join.lastBar)
			join.mu.Unlock()
			t.Fatalf("s1 never blocked at the join: %+v bars %s", st, bars)
		}
		join.mu.Lock()
		bar := join.ports[0].bars[0]
		join.mu.Unlock()
		a.mu.Lock()
		inside := a.started > a.emits
		a.mu.Unlock()
		if bar > 0 && inside {
			break
		}
		select {
		case err := <-errc:
			t.Fatalf("run ended early: %v", err)
		default:
		}
		time.Sleep(time.Millisecond)
	}
	// The checkpoint s1's barrier belongs to never completes (earlier
	// ones may have, before s2's batch got stuck).
	join.mu.Lock()
	pending := join.ports[0].bars[0]
	join.mu.Unlock()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a producer blocked on alignment did not wake on cancel")
	}
	for _, c := range store.all() {
		if c.id >= pending {
			t.Fatalf("checkpoint %d completed without s2's barrier", c.id)
		}
	}
}

// A snapshot that cannot be written fails the run with its cause.
func TestCheckpointWriteFailureFailsRun(t *testing.T) {
	g := NewGraph(Options{})
	s1 := g.AddSource("s1", &posSource{size: 3, pause: 20 * time.Microsecond})
	g.AddOperator("join", newSumOp(1), s1)
	store := newMemCk()
	store.failAt = 2
	err := runChecked(t, context.Background(), g, store)
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "checkpoint 2") {
		t.Fatalf("err = %v, want checkpoint 2's write failure", err)
	}
}

type plainSource struct{}

func (plainSource) Kind() string                               { return "plain" }
func (plainSource) Capabilities() Capabilities                 { return Capabilities{} }
func (plainSource) Run(ctx context.Context, out Emitter) error { return nil }

// A source that cannot record its position is refused up front.
func TestCheckpointNeedsSnapshotterSources(t *testing.T) {
	g := NewGraph(Options{})
	g.AddSource("plain one", plainSource{})
	g.EnableCheckpoints(CheckpointConfig{Interval: time.Second, Store: newMemCk()})
	err := g.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "plain one") {
		t.Fatalf("err = %v, want a refusal naming the source", err)
	}
}
