package exec

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
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
}

// Stage is one node: a source or an operator, with its counters.
type Stage struct {
	ID    int
	Name  string
	Op    Operator // nil for a source
	Src   Source   // nil for an operator
	Stats StageStats

	graph    *Graph
	inputs   int
	outs     []edge
	columnar bool

	mu     sync.Mutex
	wms    []int64
	wm     int64
	ended  []bool
	nEnded int
	done   bool // finished or stopped: further input is refused with ErrStop
}

type edge struct {
	to    *Stage
	input int
}

// NewGraph returns an empty graph running under opts.
func NewGraph(opts Options) *Graph { return &Graph{opts: opts} }

// Stages lists every stage in the order added (sources included).
func (g *Graph) Stages() []*Stage { return g.stages }

// AddSource adds a source stage.
func (g *Graph) AddSource(name string, src Source) *Stage {
	s := &Stage{ID: len(g.stages), Name: name, Src: src, graph: g}
	g.stages = append(g.stages, s)
	g.sources = append(g.sources, s)
	return s
}

// AddOperator adds an operator stage whose input i is fed by inputs[i].
func (g *Graph) AddOperator(name string, op Operator, inputs ...*Stage) *Stage {
	s := &Stage{ID: len(g.stages), Name: name, Op: op, graph: g, inputs: len(inputs),
		columnar: !g.opts.DisableColumnar}
	s.wms = make([]int64, len(inputs))
	for i := range s.wms {
		s.wms[i] = MinWatermark
	}
	s.wm = MinWatermark
	s.ended = make([]bool, len(inputs))
	for i, in := range inputs {
		in.outs = append(in.outs, edge{to: s, input: i})
	}
	g.stages = append(g.stages, s)
	return s
}

// errGraphDone cancels the sources still running once every terminal stage
// has finished (a LIMIT was reached on an unbounded input).
var errGraphDone = errors.New("exec: graph done")

// Run runs the graph until every source ends, a terminal stage stops (LIMIT),
// an error occurs or ctx is cancelled. Operators are closed on every path.
func (g *Graph) Run(ctx context.Context) (err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	trackGraph(g) // per-kind totals for /metrics (stats.go)
	defer untrackGraph(g)
	defer func() {
		for _, s := range g.stages {
			if s.Op != nil {
				s.Op.Close()
			}
		}
	}()

	var wg sync.WaitGroup
	errs := make(chan error, len(g.sources))
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
			err = fmt.Errorf("internal error in %s: %v\n%s", s.Name, r, debug.Stack())
		}
	}()
	s.Stats.Started.Store(true)
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
	s.Stats.Finished.Store(true)
	return s.finishOutputs(ctx)
}

func (s *Stage) finishOutputs(ctx context.Context) error {
	var first error
	for _, e := range s.outs {
		if err := e.to.finish(ctx, e.input); err != nil && !errors.Is(err, ErrStop) && first == nil {
			first = err
		}
	}
	return first
}

// push delivers one data batch to the stage's operator.
func (s *Stage) push(ctx context.Context, input int, b *Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return ErrStop
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
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
	if !wasMat && b.Materialized() {
		st.BatchesMaterialized.Add(1)
		st.RowsMaterialized.Add(int64(b.Len()))
	}
	return s.afterCall(ctx, err)
}

// afterCall turns an operator's ErrStop into the end of this stage: its
// consumers' input ends and later input is refused.
func (s *Stage) afterCall(ctx context.Context, err error) error {
	if errors.Is(err, ErrStop) {
		s.done = true
		s.Stats.Finished.Store(true)
		if ferr := s.finishOutputs(ctx); ferr != nil {
			return ferr
		}
		return ErrStop
	}
	return err
}

func (s *Stage) watermark(ctx context.Context, input int, wm int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return ErrStop
	}
	s.Stats.WatermarksIn.Add(1)
	if wm <= s.wms[input] {
		return nil
	}
	s.wms[input] = wm
	return s.advance(ctx)
}

// advance recomputes the combined watermark (minimum over live inputs; an
// ended input no longer holds it back) and hands an advance to the operator.
func (s *Stage) advance(ctx context.Context) error {
	min := MaxWatermark
	for i, w := range s.wms {
		if !s.ended[i] && w < min {
			min = w
		}
	}
	if min <= s.wm || s.nEnded == len(s.wms) {
		// Nothing advanced, or every input ended: Finish flushes the rest.
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

func (s *Stage) finish(ctx context.Context, input int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.ended[input] {
		return nil
	}
	s.ended[input] = true
	s.nEnded++
	out := &stageEmitter{s: s}
	start := time.Now()
	err := s.Op.Finish(ctx, input, out)
	s.Stats.Nanos.Add(int64(time.Since(start)) - out.downstream)
	if err != nil {
		return s.afterCall(ctx, err)
	}
	if s.nEnded < s.inputs {
		// The ended input no longer holds the watermark back.
		return s.afterCall(ctx, s.advance(ctx))
	}
	s.done = true
	s.Stats.Finished.Store(true)
	return s.finishOutputs(ctx)
}

// stageEmitter forwards a stage's output to its consumers and counts it.
type stageEmitter struct {
	s          *Stage
	downstream int64 // nanoseconds spent in consumers, excluded from the stage's time
}

func (e *stageEmitter) Emit(ctx context.Context, b *Batch) error {
	st := &e.s.Stats
	st.BatchesOut.Add(1)
	st.RowsOut.Add(int64(b.Len()))
	if b.IsColumnar() {
		st.BatchesOutColumnar.Add(1)
	} else {
		st.BatchesOutRows.Add(1)
	}
	if len(e.s.outs) == 0 {
		return nil
	}
	start := time.Now()
	defer func() { e.downstream += int64(time.Since(start)) }()
	stopped := 0
	for _, o := range e.s.outs {
		err := o.to.push(ctx, o.input, b)
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
	start := time.Now()
	defer func() { e.downstream += int64(time.Since(start)) }()
	stopped := 0
	for _, o := range e.s.outs {
		err := o.to.watermark(ctx, o.input, wm)
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
