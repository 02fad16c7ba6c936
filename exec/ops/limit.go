package ops

import (
	"context"

	"github.com/clink-sql/clink/exec"
)

// Limit passes rows [offset, offset+limit) and then stops its input: after
// the last row it returns exec.ErrStop, and the runner ends the stages
// below and stops the sources (LIMIT ends an unbounded scan).
type Limit struct {
	exec.Base
	limit, offset int64
	seen          int64 // rows received so far
}

// NewLimit returns LIMIT limit OFFSET offset; limit < 0 means no limit.
func NewLimit(limit, offset int64) *Limit {
	return &Limit{limit: limit, offset: max(offset, 0)}
}

// Kind implements exec.Operator.
func (l *Limit) Kind() string { return "limit" }

// Capabilities implements exec.Operator.
func (l *Limit) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, PassesThrough: true}
}

// window returns the part [lo, hi) of the next n rows to pass on and
// whether the limit is reached after them.
func (l *Limit) window(n int64) (lo, hi int64, done bool) {
	start := l.seen
	l.seen += n
	lo = max(l.offset-start, 0)
	hi = n
	if l.limit >= 0 {
		end := l.offset + l.limit // first row index past the limit
		hi = min(hi, max(end-start, 0))
		done = l.seen >= end
	}
	lo = min(lo, hi)
	return lo, hi, done
}

// Process is the row path.
func (l *Limit) Process(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) error {
	if l.limit == 0 {
		return exec.ErrStop
	}
	lo, hi, done := l.window(int64(b.Len()))
	var err error
	switch {
	case lo == 0 && hi == int64(b.Len()) && hi > 0:
		err = out.Emit(ctx, b)
	case hi > lo:
		rows := b.Rows()
		err = emitRows(ctx, out, b.Schema(), rows[lo:hi:hi])
	}
	return stopAfter(err, done)
}

// ProcessColumnar slices the record (zero copy).
func (l *Limit) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, out exec.Emitter) (bool, error) {
	if l.limit == 0 {
		return true, exec.ErrStop
	}
	lo, hi, done := l.window(int64(b.Len()))
	var err error
	switch {
	case lo == 0 && hi == int64(b.Len()) && hi > 0:
		err = out.Emit(ctx, b)
	case hi > lo:
		err = emitRecord(ctx, out, b.Record().NewSlice(lo, hi))
	}
	return true, stopAfter(err, done)
}

func stopAfter(err error, done bool) error {
	if err == nil && done {
		return exec.ErrStop
	}
	return err
}
