package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/plan"
)

// Delivery without checkpoints. A source that reads from a consumer group
// (Kafka) must not commit what it has merely emitted: the sink may still
// hold it in a buffer, an aggregate in its state. runGraph commits a
// source's position only once it is known to be delivered, so a job that
// is cancelled or killed re-reads what it had not delivered
// (at-least-once) instead of losing it:
//
//   - a graph that ran to its end (every stage finished, the sink's Finish
//     flushed or published): the positions are committed when the plan is
//     stateless (below) or every committing source read its bounded end;
//   - a cancelled graph whose plan is stateless and whose sink confirms
//     delivery (Flush, or a sink that writes synchronously): the sink
//     flushes what it got (Close does, for the Kafka sink), then the
//     positions are committed; a stateful plan's state is gone, so its
//     positions are not;
//   - while it runs, such a plan commits every source's CommitInterval:
//     mark the positions, flush the sink, commit the marks (records
//     emitted before the mark reached the sink before it).
//
// Checkpoints replace the two last cases: a barrier takes the mark at the
// source and flushes at the sink; completion commits.

// positionSource is a source whose read position can be committed.
type positionSource interface {
	// MarkPosition snapshots the position after the last batch the
	// source emitted; ended: it read its whole bounded input.
	MarkPosition() (commit func(context.Context) error, ended bool)
	// CommitInterval is how often a running job may commit (0: only
	// when it stops).
	CommitInterval() time.Duration
}

// flushingSink buffers: Flush returns once everything it was given before
// the call is delivered, or with the failure.
type flushingSink interface {
	Flush(ctx context.Context) error
}

// statelessKinds are the operators that keep no rows between calls: when
// their Process returns, what they took has reached their consumer or was
// dropped by them. An operator missing here counts as stateful, which only
// means fewer commits (a re-read), never a loss.
var statelessKinds = map[string]bool{
	"filter": true, "project": true, "limit": true, "union_all": true, "expand": true,
	"window_assign": true, "watermark_assigner": true,
}

// syncSinkKinds are the sinks that have delivered a batch when their
// Process returns (the result writer, print, blackhole, memory).
var syncSinkKinds = map[string]bool{
	"collect": true, "print-sink": true, "blackhole-sink": true, "memory-sink": true,
}

// finalCommitTimeout bounds the commit after the graph has stopped (the
// statement's own context may be cancelled by then).
const finalCommitTimeout = 15 * time.Second

// runGraph runs p's graph and commits its sources' positions as far as
// they are delivered (see above). Commit failures are not the statement's:
// they are counted by the source and cost a re-read.
func runGraph(ctx context.Context, p *plan.Physical) error {
	_, err := runGraphCommit(ctx, p)
	return err
}

// commitOutcome says what runGraphCommit did with the sources' positions
// once the graph stopped.
type commitOutcome int

const (
	noPositions  commitOutcome = iota // no source keeps a committable position
	notCommitted                      // kept: the next run reads those records again
	committed                         // committed up to what the sink delivered
	checkpointed                      // checkpoints commit (checkpoint.go), not the runner
)

// runGraphCommit is runGraph, and says whether the final positions were
// committed (an INSERT reports it when it is cancelled).
func runGraphCommit(ctx context.Context, p *plan.Physical) (commitOutcome, error) {
	ctx = exec.WithMemoryBudget(ctx, p.Budget)
	if p.Graph.CheckpointsEnabled() {
		return checkpointed, p.Graph.Run(ctx)
	}
	var srcs []positionSource
	for _, st := range p.Graph.Stages() {
		if ps, ok := st.Src.(positionSource); ok {
			srcs = append(srcs, ps)
		}
	}
	if len(srcs) == 0 {
		return noPositions, p.Graph.Run(ctx)
	}
	c := &committer{srcs: srcs, stateless: statelessPlan(p)}
	if root := p.Root.Exec.Op; root != nil {
		if f, ok := root.(flushingSink); ok {
			c.flush = f.Flush
		} else if syncSinkKinds[root.Kind()] {
			c.flush = func(context.Context) error { return nil }
		}
	}
	stop := c.startPeriodic(ctx)
	err := p.Graph.Run(ctx)
	stop()
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalCommitTimeout)
	defer cancel()
	out := notCommitted
	switch {
	case err == nil && (c.stateless || c.allEnded()):
		if c.commitPoint(fctx, c.flush != nil) {
			out = committed
		}
	case c.stateless && c.flush != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil:
		if c.commitPoint(fctx, true) {
			out = committed
		}
	}
	return out, err
}

type committer struct {
	srcs      []positionSource
	stateless bool
	flush     func(context.Context) error // nil: the sink cannot confirm delivery while running
}

// statelessPlan reports whether every operator between the sources and
// the sink keeps no rows.
func statelessPlan(p *plan.Physical) bool {
	for _, st := range p.Graph.Stages() {
		if st.Op == nil || st == p.Root.Exec {
			continue
		}
		if !statelessKinds[st.Op.Kind()] {
			return false
		}
	}
	return true
}

func (c *committer) allEnded() bool {
	for _, s := range c.srcs {
		if _, ended := s.MarkPosition(); !ended {
			return false
		}
	}
	return true
}

// commitPoint marks every source's position, makes the sink deliver what
// it holds (when flush is set), and commits the marks; ok: all of them
// were committed.
func (c *committer) commitPoint(ctx context.Context, flush bool) (ok bool) {
	commits := make([]func(context.Context) error, len(c.srcs))
	for i, s := range c.srcs {
		commits[i], _ = s.MarkPosition()
	}
	if flush {
		if err := c.flush(ctx); err != nil {
			return false // not delivered: the next run reads it again
		}
	}
	ok = true
	for _, commit := range commits {
		if commit(ctx) != nil { // counted by the source
			ok = false
		}
	}
	return ok
}

// startPeriodic commits every interval while the graph runs, when the plan
// allows it; the returned function stops it and waits, so no periodic
// commit lands after the final one.
func (c *committer) startPeriodic(ctx context.Context) (stop func()) {
	var every time.Duration
	for _, s := range c.srcs {
		if d := s.CommitInterval(); d > 0 && (every == 0 || d < every) {
			every = d
		}
	}
	if !c.stateless || c.flush == nil || every <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				c.commitPoint(ctx, true)
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}
