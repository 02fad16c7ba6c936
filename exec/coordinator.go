package exec

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// CheckpointStore keeps a graph's checkpoints (exec/state's Dir on disk).
type CheckpointStore interface {
	// Begin starts checkpoint id.
	Begin(id int64) (CheckpointWriter, error)
}

// CheckpointWriter receives one checkpoint.
type CheckpointWriter interface {
	// Stage returns the writer of one stage's state. It is called once per
	// stage, from the goroutine that aligned the stage; different stages'
	// writers are used concurrently.
	Stage(id int) StateWriter
	// Commit makes the checkpoint complete (written, durable, the latest)
	// once every stage's state is in; size is its bytes.
	Commit() (size int64, err error)
	// Abort drops a checkpoint that will not complete.
	Abort()
}

// CheckpointReader gives back a checkpoint's per-stage state.
type CheckpointReader interface {
	// Stage returns the reader of one stage's state; ok is false when the
	// checkpoint holds none for it.
	Stage(id int) (r StateReader, ok bool)
}

// CheckpointListener is implemented by sources and operators that act
// when a checkpoint is complete: a Kafka source commits the offsets it
// snapshotted for id, a transactional sink commits. An error fails the
// job.
type CheckpointListener interface {
	CheckpointComplete(ctx context.Context, id int64) error
}

// CheckpointConfig turns checkpoints on for a graph.
type CheckpointConfig struct {
	Interval time.Duration
	Store    CheckpointStore
	// NextID is the first checkpoint's id (the restored one's + 1; 0 is
	// taken as 1).
	NextID int64
}

// CheckpointStats are a graph's checkpoint counters, for EXPLAIN ANALYZE
// and /metrics.
type CheckpointStats struct {
	Completed    int64
	LastID       int64
	LastDuration time.Duration
	LastSize     int64
}

// EnableCheckpoints makes Run take a checkpoint every cfg.Interval. Every
// source must then be a Snapshotter (Run fails naming the one that is not).
func (g *Graph) EnableCheckpoints(cfg CheckpointConfig) {
	if cfg.NextID < 1 {
		cfg.NextID = 1
	}
	g.ck = &coordinator{cfg: cfg, signal: make(chan struct{}, 1)}
}

// CheckpointStats reports the checkpoints taken so far (zero without
// checkpoints).
func (g *Graph) CheckpointStats() CheckpointStats {
	if g.ck == nil {
		return CheckpointStats{}
	}
	c := g.ck
	return CheckpointStats{Completed: c.completed.Load(), LastID: c.lastID.Load(),
		LastDuration: time.Duration(c.lastNanos.Load()), LastSize: c.lastSize.Load()}
}

// CheckpointsEnabled reports whether EnableCheckpoints was called.
func (g *Graph) CheckpointsEnabled() bool { return g.ck != nil }

// coordinator triggers checkpoints and collects the stages' snapshots. One
// checkpoint is in flight at a time: the next is triggered only after the
// last completed, which the deadlock argument in barrier.go relies on.
type coordinator struct {
	cfg    CheckpointConfig
	signal chan struct{} // a stage was snapshotted

	mu      sync.Mutex
	id      int64 // the checkpoint in flight (0: none)
	w       CheckpointWriter
	snapped map[int]bool

	completed, lastID, lastNanos, lastSize atomic.Int64
}

// check refuses a graph whose sources cannot record their position.
func (c *coordinator) check(g *Graph) error {
	for _, s := range g.sources {
		if _, ok := s.Src.(Snapshotter); !ok {
			return fmt.Errorf("checkpoints: source %s (%s) cannot record its position; run it without 'execution.checkpointing.interval'", s.Name, s.Src.Kind())
		}
	}
	return nil
}

// stageState is a stage's own bookkeeping in a checkpoint.
type stageState struct {
	WM       int64       `json:"wm"`
	NEnded   int         `json:"ended_ports"`
	Done     bool        `json:"done"`
	SrcEnded bool        `json:"source_ended,omitempty"`
	Ports    []portState `json:"ports,omitempty"`
}

type portState struct {
	WMs   []int64 `json:"wms"`
	Ended []bool  `json:"ended"`
}

// stagePart is the state value that holds a stage's bookkeeping; an
// operator's own parts are named by the operator.
const stagePart = "__stage"

func (s *Stage) bookkeeping() stageState {
	st := stageState{WM: s.wm, NEnded: s.nEnded, Done: s.done, SrcEnded: s.srcEnded}
	for _, pt := range s.ports {
		st.Ports = append(st.Ports, portState{WMs: append([]int64(nil), pt.wms...), Ended: append([]bool(nil), pt.ended...)})
	}
	return st
}

// snapshot writes stage s's state for checkpoint id: its bookkeeping and,
// for a Snapshotter, its operator's or source's. The caller holds the
// stage's lock (emitMu for a source).
func (c *coordinator) snapshot(ctx context.Context, s *Stage, id int64) error {
	c.mu.Lock()
	w, cur := c.w, c.id
	c.mu.Unlock()
	if w == nil || cur != id {
		// The checkpoint was given up (the run is stopping): the barrier
		// still aligns and passes, so waiting producers go on.
		return nil
	}
	if err := c.write(ctx, w, s, id, !s.srcEnded && !s.done); err != nil {
		return err
	}
	c.mu.Lock()
	c.snapped[s.ID] = true
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
	return nil
}

func (c *coordinator) write(ctx context.Context, w CheckpointWriter, s *Stage, id int64, withOp bool) error {
	sw := w.Stage(s.ID)
	b, err := json.Marshal(s.bookkeeping())
	if err != nil {
		return err
	}
	if err := sw.Value(stagePart, b); err != nil {
		return fmt.Errorf("checkpoint %d: stage %s: %w", id, s.Name, err)
	}
	if !withOp {
		return nil
	}
	if sn := s.snapshotter(); sn != nil {
		if err := sn.SnapshotState(ctx, sw); err != nil {
			return fmt.Errorf("checkpoint %d: stage %s: %w", id, s.Name, err)
		}
	}
	return nil
}

// startCheckpoints runs the coordinator while the graph runs; fail reports
// a checkpoint that could not be taken (it fails the job). The returned
// function stops it and waits for it.
func (g *Graph) startCheckpoints(ctx context.Context, fail func(error)) (stop func()) {
	c := g.ck
	if c == nil || c.cfg.Interval <= 0 {
		return func() {}
	}
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(c.cfg.Interval)
		defer t.Stop()
		id := c.cfg.NextID
		for {
			select {
			case <-ctx.Done():
				return
			case <-quit:
				return
			case <-t.C:
			}
			ok, err := c.run(ctx, g, id, quit)
			if err != nil {
				fail(err)
				return
			}
			if !ok {
				return // the run is stopping
			}
			id++
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// run takes checkpoint id: ok is false when the run stopped first.
func (c *coordinator) run(ctx context.Context, g *Graph, id int64, quit <-chan struct{}) (ok bool, err error) {
	start := time.Now()
	w, err := c.cfg.Store.Begin(id)
	if err != nil {
		return false, fmt.Errorf("checkpoint %d: %w", id, err)
	}
	c.mu.Lock()
	c.id, c.w, c.snapped = id, w, map[int]bool{}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.id, c.w = 0, nil
		c.mu.Unlock()
		if !ok {
			w.Abort()
		}
	}()
	for _, s := range g.sources {
		if err := s.inject(ctx, id); err != nil {
			return false, err
		}
	}
	poll := time.NewTicker(20 * time.Millisecond) // a stage may end instead of aligning
	defer poll.Stop()
	for !c.complete(g) {
		select {
		case <-ctx.Done():
			return false, nil
		case <-quit:
			return false, nil
		case <-c.signal:
		case <-poll.C:
		}
	}
	// Stages that ended before the barrier reached them record that.
	for _, s := range g.stages {
		c.mu.Lock()
		snapped := c.snapped[s.ID]
		c.mu.Unlock()
		if snapped {
			continue
		}
		if err := c.writeEnded(ctx, w, s, id); err != nil {
			return false, err
		}
	}
	size, err := w.Commit()
	if err != nil {
		return false, fmt.Errorf("checkpoint %d: %w", id, err)
	}
	c.completed.Add(1)
	c.lastID.Store(id)
	c.lastNanos.Store(int64(time.Since(start)))
	c.lastSize.Store(size)
	Global.Checkpoints.Add(1)
	Global.LastCheckpointID.Store(id)
	Global.LastCheckpointNanos.Store(int64(time.Since(start)))
	Global.LastCheckpointSizeBytes.Store(size)
	for _, s := range g.stages {
		if l, ok := s.impl().(CheckpointListener); ok {
			if err := l.CheckpointComplete(ctx, id); err != nil && !errors.Is(err, context.Canceled) {
				return false, fmt.Errorf("checkpoint %d complete: %s: %w", id, s.Name, err)
			}
		}
	}
	return true, nil
}

func (c *coordinator) writeEnded(ctx context.Context, w CheckpointWriter, s *Stage, id int64) error {
	if s.Src != nil {
		s.emitMu.Lock()
		defer s.emitMu.Unlock()
	} else {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	return c.write(ctx, w, s, id, false)
}

// complete reports whether every stage has been snapshotted for the
// checkpoint in flight or has ended (and so will never see its barrier).
func (c *coordinator) complete(g *Graph) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range g.stages {
		if !c.snapped[s.ID] && !s.finished.Load() {
			return false
		}
	}
	return true
}

// Restore loads checkpoint r into the graph before Run: every stage's
// bookkeeping (watermarks, ended inputs) and every Snapshotter's state.
// The graph must be the one the checkpoint was taken of (the engine
// compares plan fingerprints before calling it).
func (g *Graph) Restore(ctx context.Context, r CheckpointReader) error {
	for _, s := range g.stages {
		sr, ok := r.Stage(s.ID)
		if !ok {
			return fmt.Errorf("restore: the checkpoint has no state for stage %d (%s)", s.ID, s.Name)
		}
		b, ok, err := sr.Value(stagePart)
		if err != nil || !ok {
			return fmt.Errorf("restore: stage %d (%s): bookkeeping missing (%v)", s.ID, s.Name, err)
		}
		var st stageState
		if err := json.Unmarshal(b, &st); err != nil {
			return fmt.Errorf("restore: stage %d (%s): %w", s.ID, s.Name, err)
		}
		if err := s.restore(st); err != nil {
			return fmt.Errorf("restore: stage %d (%s): %w", s.ID, s.Name, err)
		}
		if st.Done || st.SrcEnded {
			continue // it never runs again: its operator's state is not kept
		}
		if sn := s.snapshotter(); sn != nil {
			if err := sn.RestoreState(ctx, sr); err != nil {
				return fmt.Errorf("restore: stage %d (%s): %w", s.ID, s.Name, err)
			}
		}
	}
	g.restored = true
	return nil
}

func (s *Stage) restore(st stageState) error {
	if len(st.Ports) != len(s.ports) {
		return fmt.Errorf("%d inputs in the checkpoint, %d in the plan", len(st.Ports), len(s.ports))
	}
	for i, ps := range st.Ports {
		pt := &s.ports[i]
		if len(ps.WMs) != len(pt.wms) || len(ps.Ended) != len(pt.ended) {
			return fmt.Errorf("input %d has %d producers in the checkpoint, %d in the plan", i, len(ps.WMs), len(pt.wms))
		}
		copy(pt.wms, ps.WMs)
		copy(pt.ended, ps.Ended)
		pt.left = 0
		for _, e := range ps.Ended {
			if !e {
				pt.left++
			}
		}
	}
	s.wm, s.nEnded, s.done = st.WM, st.NEnded, st.Done
	if st.WM != MinWatermark {
		s.Stats.LastWatermark.Store(st.WM)
	}
	if s.done {
		s.finished.Store(true)
	}
	if st.SrcEnded {
		s.skipRun = true
	}
	return nil
}

// Fingerprint identifies the graph's shape: its stages (names, kinds) and
// how they are connected. A checkpoint is restored only into a graph of
// the same fingerprint.
func (g *Graph) Fingerprint() string {
	h := sha256.New()
	for _, s := range g.stages {
		fmt.Fprintf(h, "%d|%s|%s|", s.ID, s.Name, s.kind())
		for _, pt := range s.ports {
			fmt.Fprintf(h, "p%d,", len(pt.wms))
		}
		for _, o := range s.outs {
			fmt.Fprintf(h, "o%d.%d.%d,", o.to.ID, o.port, o.slot)
		}
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// impl is the stage's source or operator.
func (s *Stage) impl() any {
	if s.Src != nil {
		return s.Src
	}
	return s.Op
}

// snapshotter is the stage's source or operator as a Snapshotter (nil when
// it keeps no state).
func (s *Stage) snapshotter() Snapshotter {
	sn, _ := s.impl().(Snapshotter)
	return sn
}
