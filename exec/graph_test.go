package exec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// seqSource emits n columnar batches of size rows, a watermark after each
// (its index * 10), and, when bounded, MaxWatermark at the end. Unbounded,
// it keeps going until ctx ends or a consumer stops it.
type seqSource struct {
	t       *testing.T
	mem     memory.Allocator
	n, size int
	bounded bool
	panicAt int
}

func (s *seqSource) Kind() string               { return "seq" }
func (s *seqSource) Capabilities() Capabilities { return Capabilities{EmitsColumnar: true} }
func (s *seqSource) Run(ctx context.Context, out Emitter) error {
	for i := 0; s.n < 0 || i < s.n; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.panicAt > 0 && i == s.panicAt {
			panic("boom in source")
		}
		b := NewColumnarBatch(testRecord(s.t, s.mem, s.size))
		err := out.Emit(ctx, b)
		b.Release()
		if errors.Is(err, ErrStop) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := out.EmitWatermark(ctx, int64(i*10)); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	if s.bounded {
		return out.EmitWatermark(ctx, MaxWatermark)
	}
	return nil
}

// recorder logs what reaches it, in order, and forwards data. It ingests
// columnar when columnar is set; rows reads every batch's rows.
type recorder struct {
	Base
	mu       sync.Mutex
	log      []string
	columnar bool
	rows     bool
	stopAt   int // ErrStop after this many rows (0: never)
	failAt   int // error after this many batches (0: never)
	seen     int
	batches  int
}

func (r *recorder) Kind() string { return "recorder" }
func (r *recorder) Capabilities() Capabilities {
	return Capabilities{IngestsColumnar: r.columnar, PassesThrough: true}
}
func (r *recorder) note(s string) {
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}
func (r *recorder) Process(ctx context.Context, in int, b *Batch, out Emitter) error {
	if r.rows {
		_ = b.Rows()
	}
	return r.data(ctx, in, b, out, "row")
}
func (r *recorder) ProcessColumnar(ctx context.Context, in int, b *Batch, out Emitter) (bool, error) {
	return true, r.data(ctx, in, b, out, "col")
}
func (r *recorder) data(ctx context.Context, in int, b *Batch, out Emitter, path string) error {
	r.batches++
	if r.failAt > 0 && r.batches >= r.failAt {
		return fmt.Errorf("operator failed on batch %d", r.batches)
	}
	r.note(fmt.Sprintf("%s%d:%d", path, in, b.Len()))
	r.seen += b.Len()
	if err := out.Emit(ctx, b); err != nil {
		return err
	}
	if r.stopAt > 0 && r.seen >= r.stopAt {
		return ErrStop
	}
	return nil
}
func (r *recorder) OnWatermark(ctx context.Context, wm int64, out Emitter) error {
	if wm == MaxWatermark {
		r.note("wm:max")
	} else {
		r.note(fmt.Sprintf("wm:%d", wm))
	}
	return out.EmitWatermark(ctx, wm)
}
func (r *recorder) Finish(ctx context.Context, in int, out Emitter) error {
	r.note(fmt.Sprintf("end%d", in))
	return nil
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.log, " ")
}

func TestGraphOrdersDataWatermarksAndEnd(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	g := NewGraph(Options{})
	src := g.AddSource("seq", &seqSource{t: t, mem: mem, n: 3, size: 4, bounded: true})
	op := &recorder{columnar: true}
	g.AddOperator("rec", op, src)
	if err := g.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "col0:4 wm:0 col0:4 wm:10 col0:4 wm:20 wm:max end0"
	if got := op.String(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// The combined watermark of a two-input stage is the minimum of its inputs;
// an input that ended stops holding it back.
func TestGraphWatermarkIsMinimumOfInputs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	g := NewGraph(Options{})
	a := g.AddSource("a", &seqSource{t: t, mem: mem, n: 5, size: 1})
	b := g.AddSource("b", &seqSource{t: t, mem: mem, n: 2, size: 1})
	op := &recorder{columnar: true}
	st := g.AddOperator("rec", op, a, b)
	if err := g.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Watermarks delivered must never exceed what the slower input allowed
	// while both ran, and must be strictly increasing.
	var last int64 = MinWatermark
	for _, e := range strings.Fields(op.String()) {
		var w int64
		if _, err := fmt.Sscanf(e, "wm:%d", &w); err == nil {
			if w <= last {
				t.Fatalf("watermark went back or repeated: %s", op.String())
			}
			last = w
		}
	}
	// The sources run concurrently, so the interleaving varies; but the
	// shorter input (b) reaches 10 at most, and once a has ended only b's
	// watermarks count. The last one delivered is therefore b's 10 when a
	// ended first, and never more than 40.
	if last > 40 || last < 10 {
		t.Fatalf("final watermark %d, want between b's 10 and a's 40: %s", last, op.String())
	}
	if st.Stats.BatchesIn.Load() != 7 || st.Stats.RowsIn.Load() != 7 {
		t.Fatalf("counted %d batches, %d rows in; want 7, 7", st.Stats.BatchesIn.Load(), st.Stats.RowsIn.Load())
	}
}

// An operator's ErrStop (LIMIT) ends its consumers' input, stops an
// unbounded source and ends the run without error.
func TestGraphStopEndsUnboundedRun(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	g := NewGraph(Options{})
	src := g.AddSource("seq", &seqSource{t: t, mem: mem, n: -1, size: 10})
	limit := &recorder{columnar: true, stopAt: 35}
	l := g.AddOperator("limit", limit, src)
	sink := &recorder{columnar: true}
	g.AddOperator("sink", sink, l)
	done := make(chan error, 1)
	go func() { done <- g.Run(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an unbounded run did not end after ErrStop")
	}
	if !strings.HasSuffix(sink.String(), "end0") {
		t.Fatalf("sink's input did not end: %s", sink.String())
	}
	if limit.seen != 40 {
		t.Fatalf("limit saw %d rows, want 40 (four batches of 10)", limit.seen)
	}
}

// A failing operator fails the run with its error; the other source is
// cancelled.
func TestGraphErrorCancelsEverything(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	g := NewGraph(Options{})
	a := g.AddSource("a", &seqSource{t: t, mem: mem, n: -1, size: 2})
	b := g.AddSource("b", &seqSource{t: t, mem: mem, n: -1, size: 2})
	bad := &recorder{columnar: true, failAt: 50}
	g.AddOperator("bad", bad, a, b)
	err := g.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "operator failed on batch 5") {
		t.Fatalf("want the operator's error, got %v", err)
	}
}

// A panic below a source becomes an error naming the stage, without Go
// internals: the stack goes to the log, not to the user (issue 19).
func TestGraphPanicBecomesError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	g := NewGraph(Options{})
	src := g.AddSource("seq", &seqSource{t: t, mem: mem, n: 5, size: 1, panicAt: 2})
	g.AddOperator("rec", &recorder{}, src)
	err := g.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "boom in source") || !strings.Contains(err.Error(), "seq") {
		t.Fatalf("want an error naming the panic and the stage, got %v", err)
	}
	if strings.Contains(err.Error(), "goroutine") || strings.Contains(err.Error(), ".go:") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("the error carries Go internals: %q", err)
	}
}

// Cancelling the context stops an unbounded run promptly.
func TestGraphCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	g := NewGraph(Options{})
	src := g.AddSource("seq", &seqSource{t: t, mem: mem, n: -1, size: 100})
	g.AddOperator("rec", &recorder{columnar: true}, src)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("want context.Canceled, got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop after cancel")
	}
}

// Dispatch takes the columnar hook only when columnar is on, the operator
// ingests columnar and the batch is columnar; materialisation is charged to
// the stage that caused it.
func TestDispatchAndMaterialisationCharging(t *testing.T) {
	for _, tc := range []struct {
		name           string
		opts           Options
		columnar, rows bool
		wantPath       string
		wantMat        int64
	}{
		{"columnar", Options{}, true, false, "col", 0},
		{"disabled", Options{DisableColumnar: true}, true, true, "row", 3},
		{"row-operator", Options{}, false, true, "row", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			g := NewGraph(tc.opts)
			src := g.AddSource("seq", &seqSource{t: t, mem: mem, n: 3, size: 5, bounded: true})
			first := &recorder{columnar: tc.columnar, rows: tc.rows}
			s1 := g.AddOperator("first", first, src)
			second := &recorder{columnar: true, rows: true}
			s2 := g.AddOperator("second", second, s1)
			if err := g.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(first.String(), tc.wantPath) {
				t.Fatalf("first stage took %s, want %s", first.String(), tc.wantPath)
			}
			if got := s1.Stats.BatchesMaterialized.Load(); got != tc.wantMat {
				t.Fatalf("first stage materialised %d, want %d", got, tc.wantMat)
			}
			// The second stage reads rows only on its row path; with columnar on
			// it takes the hook and never decodes what the first left columnar.
			if tc.opts.DisableColumnar && s2.Stats.BatchesMaterialized.Load() != 0 {
				t.Fatal("a batch decoded by the first stage was counted again at the second")
			}
			if got := s1.Stats.BatchesColumnarPath.Load(); (got > 0) != (tc.wantPath == "col") {
				t.Fatalf("columnar-path count %d disagrees with the path taken", got)
			}
		})
	}
}

// A stage that passes its input batch on whole, columnar, is not charged
// for a decode its consumer makes while it emits: the consumer is, once
// (and the query's total agrees with the process-wide counter).
func TestMaterialisationChargedToTheConsumer(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	g := NewGraph(Options{})
	src := g.AddSource("seq", &seqSource{t: t, mem: mem, n: 3, size: 5, bounded: true})
	pass := g.AddOperator("pass", &recorder{columnar: true}, src)
	rows := g.AddOperator("rows", &recorder{rows: true}, pass)
	before := Global.BatchesMaterialized.Load()
	if err := g.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := pass.Stats.BatchesMaterialized.Load(); got != 0 {
		t.Fatalf("the pass-through stage was charged %d decodes its consumer made", got)
	}
	if got := rows.Stats.BatchesMaterialized.Load(); got != 3 {
		t.Fatalf("the row consumer was charged %d decodes, want 3", got)
	}
	if got := Global.BatchesMaterialized.Load() - before; got != 3 {
		t.Fatalf("process-wide counter moved by %d, want 3", got)
	}
}

// router sends batch i to target i % Targets().
type router struct {
	Base
	n int
}

func (r *router) Kind() string               { return "router" }
func (r *router) Capabilities() Capabilities { return Capabilities{} }
func (r *router) Process(ctx context.Context, _ int, b *Batch, out Emitter) error {
	ro := out.(RoutedEmitter)
	t := r.n % ro.Targets()
	r.n++
	return ro.EmitTo(ctx, t, b)
}

// A port fed by several producers ends once all of them ended, and its
// watermark is the minimum over them; a routed emit reaches one consumer.
func TestGraphMultiProducerPortAndRouting(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	g := NewGraph(Options{})
	a := g.AddSource("a", &seqSource{t: t, mem: mem, n: 4, size: 1, bounded: true})
	b := g.AddSource("b", &seqSource{t: t, mem: mem, n: 6, size: 1, bounded: true})
	ra := g.AddOperator("route-a", &router{}, a)
	rb := g.AddOperator("route-b", &router{}, b)
	var recs []*recorder
	var sts []*Stage
	for i := 0; i < 2; i++ {
		r := &recorder{columnar: true}
		st := g.AddOperatorPorts(fmt.Sprintf("keyed-%d", i), r, 1)
		g.Connect(ra, st, 0)
		g.Connect(rb, st, 0)
		recs, sts = append(recs, r), append(sts, st)
	}
	sink := &recorder{columnar: true}
	ss := g.AddOperatorPorts("sink", sink, 1)
	for _, st := range sts {
		g.Connect(st, ss, 0)
	}
	if err := g.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Routing: a's 4 batches and b's 6 alternate between the two targets.
	if sts[0].Stats.BatchesIn.Load() != 5 || sts[1].Stats.BatchesIn.Load() != 5 {
		t.Fatalf("routed %d and %d batches, want 5 and 5", sts[0].Stats.BatchesIn.Load(), sts[1].Stats.BatchesIn.Load())
	}
	for i, r := range recs {
		log := r.String()
		if strings.Count(log, "end0") != 1 || !strings.HasSuffix(log, "wm:max end0") {
			t.Fatalf("instance %d: the port must end once, after both producers: %s", i, log)
		}
	}
	if sink.seen != 10 || !strings.HasSuffix(sink.String(), "end0") || strings.Count(sink.String(), "end0") != 1 {
		t.Fatalf("sink saw %d rows: %s", sink.seen, sink.String())
	}
}

// A port nobody feeds ends when the run starts.
func TestGraphPortWithoutProducers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	g := NewGraph(Options{})
	a := g.AddSource("a", &seqSource{t: t, mem: mem, n: 2, size: 1, bounded: true})
	r := &recorder{columnar: true}
	st := g.AddOperatorPorts("two-ports", r, 2)
	g.Connect(a, st, 0)
	if err := g.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.String(), "end1") || !strings.HasSuffix(r.String(), "end0") {
		t.Fatalf("got %s", r.String())
	}
}
