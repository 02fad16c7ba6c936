package exec

import (
	"context"
	"errors"
)

// Checkpoint barriers in the synchronous graph.
//
// A source's barrier is injected by the checkpoint coordinator under the
// source's emit lock, so it falls between two of its batches, and travels
// the same edges as its data. A stage aligns: once producer slot k of a
// port has delivered barrier n, later data, watermarks and the end from
// that slot wait (on the stage's condition, without its lock) until every
// live slot of every port has delivered n. Then the stage lets an operator
// that holds rows back emit them (BarrierFlusher), snapshots its operator
// and its own bookkeeping, and forwards the barrier to every output, all
// under its lock, so no data of the stage's falls between the barrier's
// copies on its several outputs. An ended slot never holds alignment.
//
// Why blocking alignment cannot deadlock here (one checkpoint in flight):
//   - injecting and forwarding a barrier take stage locks in topological
//     order and never wait on a condition;
//   - a producer blocked at stage Y holds the locks of the stages on its
//     path above Y. Its batch follows its source's barrier, and each of
//     those stages passed it on, so each had aligned and forwarded n: no
//     barrier still to come needs their locks (a barrier reaches a stage
//     only through a slot that has not delivered n yet, and an aligned
//     stage has none), and no pre-barrier batch does either (it comes from
//     a source that has not injected n, and every source above an aligned
//     stage has);
//   - so every missing barrier can be injected and forwarded, and every
//     blocked producer is woken once its stage aligns.
// Fan-out (one source into several consumers, a self-join's two ports)
// delivers the barrier on all outputs under the sender's lock before the
// sender's next batch; a union or join with several producers aligns
// before forwarding; a parallel exchange flushes its held rows, then
// forwards to every target. graph_checkpoint_test.go exercises each.

// BarrierFlusher is implemented by operators that hold rows back between
// calls without keeping them as state (the shuffle exchange's coalescing,
// a sink's delivery buffer): the rows are emitted (or delivered) before a
// barrier passes, so the checkpoint's cut does not run through them.
type BarrierFlusher interface {
	FlushBeforeBarrier(ctx context.Context, out Emitter) error
}

// PositionEmitter is the emitter the graph gives a source. EmitThen emits
// b (nil: nothing to emit) and then calls advance, the source moving its
// checkpointed position past b, as one step: a barrier the coordinator
// injects falls before both or after both. advance runs only when the
// emit succeeded.
type PositionEmitter interface {
	EmitThen(ctx context.Context, b *Batch, advance func()) error
}

// EmitThen emits b on out and calls advance, as one step when out is the
// graph's source emitter (a PositionEmitter). Sources whose position is
// checkpointed emit through it.
func EmitThen(ctx context.Context, out Emitter, b *Batch, advance func()) error {
	if pe, ok := out.(PositionEmitter); ok {
		return pe.EmitThen(ctx, b, advance)
	}
	if b != nil {
		if err := out.Emit(ctx, b); err != nil {
			return err
		}
	}
	if advance != nil {
		advance()
	}
	return nil
}

// awaitAligned waits, with s.mu held (released while waiting), while
// producer slot of port p has delivered a barrier the stage has not
// aligned yet. It returns ErrStop when the stage is done and the cause
// when ctx ends.
func (s *Stage) awaitAligned(ctx context.Context, p, slot int) error {
	for {
		if s.done {
			return ErrStop
		}
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		if s.ports[p].bars[slot] <= s.lastBar {
			return nil
		}
		s.cond.Wait()
	}
}

// barrier records that producer slot of port p delivered barrier id.
func (s *Stage) barrier(ctx context.Context, p, slot int, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pt := &s.ports[p]
	if s.done || pt.ended[slot] {
		return nil
	}
	pt.bars[slot] = id
	return s.tryAlign(ctx)
}

// tryAlign completes an alignment when every live producer has delivered
// the pending barrier. s.mu is held.
func (s *Stage) tryAlign(ctx context.Context) error {
	if s.done {
		return nil
	}
	var id int64
	for _, pt := range s.ports {
		for i, b := range pt.bars {
			if !pt.ended[i] && b > s.lastBar {
				id = max(id, b)
			}
		}
	}
	if id == 0 {
		return nil // no barrier pending
	}
	for _, pt := range s.ports {
		for i, b := range pt.bars {
			if !pt.ended[i] && b < id {
				return nil // still waiting for this producer
			}
		}
	}
	if f, ok := s.Op.(BarrierFlusher); ok {
		out := &stageEmitter{s: s}
		if err := f.FlushBeforeBarrier(ctx, out); err != nil {
			if errors.Is(err, ErrStop) {
				return s.afterCall(ctx, err)
			}
			return err
		}
	}
	if err := s.graph.ck.snapshot(ctx, s, id); err != nil {
		return err
	}
	s.lastBar = id
	s.cond.Broadcast()
	return s.forwardBarrier(ctx, id)
}

// forwardBarrier sends barrier id to every output, or tells the
// coordinator a terminal stage has it.
func (s *Stage) forwardBarrier(ctx context.Context, id int64) error {
	for _, o := range s.outs {
		if err := o.to.barrier(ctx, o.port, o.slot, id); err != nil && !errors.Is(err, ErrStop) {
			return err
		}
	}
	return nil
}

// inject puts barrier id into source s's output between two of its
// batches, after snapshotting the source's position.
func (s *Stage) inject(ctx context.Context, id int64) error {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil // the run is stopping; the checkpoint will not complete
	}
	if err := s.graph.ck.snapshot(ctx, s, id); err != nil {
		return err
	}
	if s.srcEnded {
		return nil // its consumers' input has ended: no barrier to send
	}
	return s.forwardBarrier(ctx, id)
}
