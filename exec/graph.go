package exec

import (
	"context"
	"errors"
	"fmt"
	"log"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Graph is a query's dataflow: sources feeding stages. Each source runs on
// its own goroutine and pushes synchronously through the stages below it;
// a stage's mutex serialises its inputs (stages are locked in topological
// order, so there is no lock cycle).
type Graph struct {
	stages  []*Stage
	sources []*Stage
	opts    Options

	ck       *coordinator // nil: no checkpoints (coordinator.go)
	restored bool         // Restore loaded the stages' bookkeeping
	// terminals counts the terminal stages not yet done; the last one to
	// finish or stop ends the run (cancel), so a LIMIT reached over an
	// unbounded source does not wait for that source's next batch.
	terminals atomic.Int64
	cancel    context.CancelCauseFunc
}

// Stage is one node: a source or an operator, with its counters. An
// operator's inputs are ports; a port may be fed by several producers (the
// parallel instances of an upstream stage): it ends when all of them have
// ended, and its watermark is the minimum over them.
type Stage struct {
	ID    int
	Name  string
	Op    Operator // nil for a source
	Src   Source   // nil for an operator
	Stats StageStats

	graph    *Graph
	outs     []edge
	columnar bool

	mu     sync.Mutex
	cond   *sync.Cond // on mu: producers waiting for a barrier's alignment (barrier.go)
	ports  []port
	wm     int64
	nEnded int  // ports that ended
	done   bool // finished or stopped: further input is refused with ErrStop
	// lastBar is the last checkpoint barrier this stage aligned and
	// forwarded; a producer slot whose barrier is newer waits.
	lastBar int64
	// finished is done (or, for a source, its end) as an atomic, for the
	// checkpoint coordinator, which must not take a stage lock to ask.
	finished atomic.Bool

	// emitMu serialises a source's emits with the barriers the
	// coordinator injects for it, so a barrier falls between batches.
	emitMu   sync.Mutex
	srcEnded bool // the source's Run returned and its outputs ended (emitMu)
	skipRun  bool // restored as ended: Run is not called again
	// wake nudges the timer goroutine of a ProcessingTimer stage (nil for
	// the others) after a batch: its next timer may have moved.
	wake chan struct{}
}

type port struct {
	wms   []int64 // per producer
	ended []bool  // per producer
	bars  []int64 // per producer: the last barrier it delivered
	left  int     // producers still running
}

type edge struct {
	to   *Stage
	port int
	slot int // the producer's index within the port
}

// NewGraph returns an empty graph running under opts.
func NewGraph(opts Options) *Graph { return &Graph{opts: opts} }

// Stages lists every stage in the order added (sources included).
func (g *Graph) Stages() []*Stage { return g.stages }

// AddSource adds a source stage.
func (g *Graph) AddSource(name string, src Source) *Stage {
	s := &Stage{ID: len(g.stages), Name: name, Src: src, graph: g}
	s.cond = sync.NewCond(&s.mu)
	g.stages = append(g.stages, s)
	g.sources = append(g.sources, s)
	return s
}

// AddOperator adds an operator stage whose port i is fed by inputs[i].
func (g *Graph) AddOperator(name string, op Operator, inputs ...*Stage) *Stage {
	s := g.AddOperatorPorts(name, op, len(inputs))
	for i, in := range inputs {
		g.Connect(in, s, i)
	}
	return s
}

// AddOperatorPorts adds an operator stage with ports inputs, to be fed with
// Connect.
func (g *Graph) AddOperatorPorts(name string, op Operator, ports int) *Stage {
	s := &Stage{ID: len(g.stages), Name: name, Op: op, graph: g, columnar: !g.opts.DisableColumnar,
		wm: MinWatermark, ports: make([]port, ports)}
	s.cond = sync.NewCond(&s.mu)
	if _, ok := op.(ProcessingTimer); ok {
		s.wake = make(chan struct{}, 1)
	}
	g.stages = append(g.stages, s)
	return s
}

// Connect adds from as one more producer of to's port. Call it for every
// producer before Run; a port with no producer ends as soon as Run starts.
func (g *Graph) Connect(from, to *Stage, p int) {
	pt := &to.ports[p]
	from.outs = append(from.outs, edge{to: to, port: p, slot: len(pt.wms)})
	pt.wms = append(pt.wms, MinWatermark)
	pt.ended = append(pt.ended, false)
	pt.bars = append(pt.bars, 0)
	pt.left++
}

// Outputs is the number of consumers of s (the targets of a routed emit).
func (s *Stage) Outputs() int { return len(s.outs) }

// errGraphDone cancels the sources still running once every terminal stage
// has finished (a LIMIT was reached on an unbounded input).
var errGraphDone = errors.New("exec: graph done")

// Run runs the graph until every source ends, a terminal stage stops (LIMIT),
// an error occurs or ctx is cancelled. Operators are closed on every path.
func (g *Graph) Run(ctx context.Context) (err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	g.cancel = cancel
	for _, s := range g.stages {
		if len(s.outs) == 0 && s.Op != nil && !s.done { // a stage restored as done is not waited for
			g.terminals.Add(1)
		}
	}
	trackGraph(g) // per-kind totals for /metrics (stats.go)
	defer untrackGraph(g)
	defer func() {
		for _, s := range g.stages {
			if s.Op != nil {
				s.Op.Close()
			}
		}
	}()

	if g.ck != nil {
		if err := g.ck.check(g); err != nil {
			return err
		}
	}
	for _, s := range g.stages {
		// A producer waiting for alignment wakes when the run is cancelled.
		s := s
		stop := context.AfterFunc(ctx, func() {
			s.mu.Lock()
			s.cond.Broadcast()
			s.mu.Unlock()
		})
		defer stop()
	}
	for _, s := range g.stages {
		for p := range s.ports {
			if len(s.ports[p].wms) == 0 && !g.restored {
				if err := s.endPort(ctx, p); err != nil && !errors.Is(err, ErrStop) {
					return err
				}
			}
		}
	}
	// Processing-time timers run beside the sources, and stop once the
	// sources have (every input has ended) and before the operators close.
	timerCtx, stopTimers := context.WithCancel(ctx)
	var timers sync.WaitGroup
	defer func() {
		stopTimers()
		timers.Wait()
	}()
	for _, s := range g.stages {
		if pt, ok := s.Op.(ProcessingTimer); ok {
			timers.Add(1)
			go func() {
				defer timers.Done()
				defer func() {
					if r := recover(); r != nil {
						cancel(InternalError(s.Name, r))
					}
				}()
				if e := s.timerLoop(timerCtx, pt); e != nil && !errors.Is(e, ErrStop) {
					cancel(e)
				}
			}()
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(g.sources)+1)
	stopCk := g.startCheckpoints(ctx, func(e error) {
		errs <- e
		cancel(e)
	})
	for _, src := range g.sources {
		wg.Add(1)
		go func(s *Stage) {
			defer wg.Done()
			if e := g.runSource(ctx, s); e != nil {
				errs <- e
				cancel(e)
			}
			if g.terminalsDone() {
				cancel(errGraphDone)
			}
		}(src)
	}
	wg.Wait()
	stopCk()
	stopTimers()
	timers.Wait()
	close(errs)
	for e := range errs {
		if errors.Is(e, errGraphDone) || errors.Is(e, ErrStop) {
			continue
		}
		if errors.Is(e, context.Canceled) && errors.Is(context.Cause(ctx), errGraphDone) {
			continue
		}
		if err == nil {
			err = e
		}
	}
	if err == nil && ctx.Err() != nil && !errors.Is(context.Cause(ctx), errGraphDone) {
		err = context.Cause(ctx)
	}
	return err
}

func (g *Graph) terminalsDone() bool {
	for _, s := range g.stages {
		if len(s.outs) == 0 && s.Op != nil {
			s.mu.Lock()
			d := s.done
			s.mu.Unlock()
			if !d {
				return false
			}
		}
	}
	return true
}

// runSource runs one source and then ends its consumers' input. A panic
// anywhere below becomes an error.
func (g *Graph) runSource(ctx context.Context, s *Stage) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = InternalError(s.Name, r)
		}
	}()
	s.Stats.Started.Store(true)
	if !s.skipRun {
		out := &stageEmitter{s: s}
		start := time.Now()
		err = s.Src.Run(ctx, out)
		s.Stats.Nanos.Add(int64(time.Since(start)) - out.downstream)
		if errors.Is(err, ErrStop) {
			err = nil
		}
		if err != nil {
			return err
		}
	}
	s.Stats.Finished.Store(true)
	// The end is ordered with the barriers injected for this source: a
	// checkpoint after it records the source as ended.
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.srcEnded = true
	s.finished.Store(true)
	return s.finishOutputs(ctx)
}

// InternalError turns a panic recovered in where (a stage, a source's
// goroutine) into the query's error: a short message for the user, and the
// goroutine's stack in the process log, where a bug report can find it. It
// must be called from the deferred function that recovered r, so the stack
// is the panic's.
func InternalError(where string, r any) error {
	log.Printf("clink: internal error in %s: %v\n%s", where, r, debug.Stack())
	return fmt.Errorf("internal error in %s: %v (details in the log)", where, r)
}

func (s *Stage) finishOutputs(ctx context.Context) error {
	var first error
	for _, e := range s.outs {
		if err := e.to.finish(ctx, e.port, e.slot); err != nil && !errors.Is(err, ErrStop) && first == nil {
			first = err
		}
	}
	return first
}

// push delivers one data batch from producer slot of port input to the
// stage's operator.
func (s *Stage) push(ctx context.Context, input, slot int, b *Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.awaitAligned(ctx, input, slot); err != nil {
		return err
	}
	st := &s.Stats
	st.Started.Store(true)
	st.BatchesIn.Add(1)
	st.RowsIn.Add(int64(b.Len()))
	if b.IsColumnar() {
		st.BatchesInColumnar.Add(1)
	} else {
		st.BatchesInRows.Add(1)
	}
	wasMat := b.Materialized()
	out := &stageEmitter{s: s}
	start := time.Now()
	columnar, err := Dispatch(ctx, s.Op, s.columnar, input, b, out)
	st.Nanos.Add(int64(time.Since(start)) - out.downstream)
	if columnar {
		st.BatchesColumnarPath.Add(1)
	}
	s.nudge()
	if !wasMat && b.Materialized() && out.matDownstream != b {
		st.BatchesMaterialized.Add(1)
		st.RowsMaterialized.Add(int64(b.Len()))
	}
	return s.afterCall(ctx, err)
}

// afterCall turns an operator's ErrStop into the end of this stage: its
// consumers' input ends and later input is refused.
func (s *Stage) afterCall(ctx context.Context, err error) error {
	if errors.Is(err, ErrStop) {
		s.setDone()
		if ferr := s.finishOutputs(ctx); ferr != nil {
			return ferr
		}
		return ErrStop
	}
	return err
}

func (s *Stage) watermark(ctx context.Context, p, slot int, wm int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.awaitAligned(ctx, p, slot); err != nil {
		return err
	}
	s.Stats.WatermarksIn.Add(1)
	pt := &s.ports[p]
	if wm <= pt.wms[slot] {
		return nil
	}
	pt.wms[slot] = wm
	return s.advance(ctx)
}

// advance recomputes the combined watermark (the minimum over the live
// producers of the live ports; what ended no longer holds it back) and
// hands an advance to the operator.
func (s *Stage) advance(ctx context.Context) error {
	if s.nEnded == len(s.ports) {
		return nil // every input ended: Finish flushes the rest
	}
	min := MaxWatermark
	for _, pt := range s.ports {
		for i, w := range pt.wms {
			if !pt.ended[i] && w < min {
				min = w
			}
		}
	}
	if min <= s.wm {
		return nil
	}
	s.wm = min
	s.Stats.LastWatermark.Store(min)
	out := &stageEmitter{s: s}
	start := time.Now()
	err := s.Op.OnWatermark(ctx, min, out)
	s.Stats.Nanos.Add(int64(time.Since(start)) - out.downstream)
	return s.afterCall(ctx, err)
}

// finish records that one producer of port p ended.
func (s *Stage) finish(ctx context.Context, p, slot int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pt := &s.ports[p]
	if s.done || pt.ended[slot] {
		return nil
	}
	// An end after this producer's barrier belongs after the checkpoint.
	if err := s.awaitAligned(ctx, p, slot); err != nil {
		if errors.Is(err, ErrStop) {
			return nil
		}
		return err
	}
	pt.ended[slot] = true
	pt.left--
	var err error
	if pt.left > 0 {
		// The ended producer no longer holds the port's watermark back.
		err = s.afterCall(ctx, s.advance(ctx))
	} else {
		err = s.endPortLocked(ctx, p)
	}
	if err != nil {
		return err
	}
	// The ended producer no longer holds a barrier's alignment either.
	return s.tryAlign(ctx)
}

func (s *Stage) endPort(ctx context.Context, p int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endPortLocked(ctx, p)
}

// endPortLocked ends port p: the operator's Finish for it, and the end of
// the stage once every port ended.
func (s *Stage) endPortLocked(ctx context.Context, p int) error {
	if s.done {
		return nil
	}
	s.nEnded++
	out := &stageEmitter{s: s}
	start := time.Now()
	err := s.Op.Finish(ctx, p, out)
	s.Stats.Nanos.Add(int64(time.Since(start)) - out.downstream)
	if err != nil {
		return s.afterCall(ctx, err)
	}
	if s.nEnded < len(s.ports) {
		return s.afterCall(ctx, s.advance(ctx))
	}
	s.setDone()
	return s.finishOutputs(ctx)
}

// setDone ends the stage (its lock held): producers waiting for a
// barrier's alignment give up, and the last terminal stage to end ends
// the run.
func (s *Stage) setDone() {
	s.done = true
	s.Stats.Finished.Store(true)
	s.finished.Store(true)
	s.cond.Broadcast()
	g := s.graph
	if len(s.outs) == 0 && s.Op != nil && g.terminals.Add(-1) == 0 && g.cancel != nil {
		g.cancel(errGraphDone)
	}
}

// stageEmitter forwards a stage's output to its consumers and counts it.
type stageEmitter struct {
	s          *Stage
	downstream int64 // nanoseconds spent in consumers, excluded from the stage's time
	// matDownstream is a batch a consumer materialised while this stage
	// emitted it (a filter passing its input on whole): that decode is the
	// consumer's, not this stage's.
	matDownstream *Batch
}

// countOut counts one emitted batch.
func (e *stageEmitter) countOut(b *Batch) {
	st := &e.s.Stats
	st.BatchesOut.Add(1)
	st.RowsOut.Add(int64(b.Len()))
	if b.IsColumnar() {
		st.BatchesOutColumnar.Add(1)
	} else {
		st.BatchesOutRows.Add(1)
	}
}

func (e *stageEmitter) Emit(ctx context.Context, b *Batch) error {
	return e.EmitThen(ctx, b, nil)
}

// EmitThen implements PositionEmitter: on a source's emitter the batch and
// the source's move past it are one step no barrier splits.
func (e *stageEmitter) EmitThen(ctx context.Context, b *Batch, advance func()) error {
	if e.s.Src != nil {
		e.s.emitMu.Lock()
		defer e.s.emitMu.Unlock()
	}
	if b == nil {
		if advance != nil {
			advance()
		}
		return nil
	}
	err := e.emit(ctx, b)
	if err == nil && advance != nil {
		advance()
	}
	return err
}

func (e *stageEmitter) emit(ctx context.Context, b *Batch) error {
	e.countOut(b)
	if len(e.s.outs) == 0 {
		return nil
	}
	start := time.Now()
	wasMat := b.Materialized()
	defer func() {
		e.downstream += int64(time.Since(start))
		if !wasMat && b.Materialized() {
			e.matDownstream = b
		}
	}()
	stopped := 0
	for _, o := range e.s.outs {
		err := o.to.push(ctx, o.port, o.slot, b)
		if errors.Is(err, ErrStop) {
			stopped++
			continue
		}
		if err != nil {
			return err
		}
	}
	if stopped == len(e.s.outs) {
		return ErrStop
	}
	return nil
}

func (e *stageEmitter) EmitWatermark(ctx context.Context, wm int64) error {
	if e.s.Src != nil {
		e.s.emitMu.Lock()
		defer e.s.emitMu.Unlock()
	}
	start := time.Now()
	defer func() { e.downstream += int64(time.Since(start)) }()
	stopped := 0
	for _, o := range e.s.outs {
		err := o.to.watermark(ctx, o.port, o.slot, wm)
		if errors.Is(err, ErrStop) {
			stopped++
			continue
		}
		if err != nil {
			return err
		}
	}
	if len(e.s.outs) > 0 && stopped == len(e.s.outs) {
		return ErrStop
	}
	return nil
}

// RoutedEmitter is implemented by the runner's emitter: an exchange sends
// each sub-batch to one consumer (target i is the i-th stage connected
// after it) instead of to all.
type RoutedEmitter interface {
	Emitter
	Targets() int
	EmitTo(ctx context.Context, target int, b *Batch) error
}

func (e *stageEmitter) Targets() int { return len(e.s.outs) }

func (e *stageEmitter) EmitTo(ctx context.Context, target int, b *Batch) error {
	if e.s.Src != nil {
		e.s.emitMu.Lock()
		defer e.s.emitMu.Unlock()
	}
	e.countOut(b)
	start := time.Now()
	defer func() { e.downstream += int64(time.Since(start)) }()
	o := e.s.outs[target]
	return o.to.push(ctx, o.port, o.slot, b)
}
