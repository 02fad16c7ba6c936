package ops

import (
	"context"

	"github.com/clink-sql/clink/exec"
)

// limitStateVersion is the layout of Limit's state: the rows seen so far
// (LIMIT over an unbounded input is a streaming operator: a restored
// LIMIT 10 that had passed 7 rows passes 3 more).
const limitStateVersion = 1

var _ exec.Snapshotter = (*Limit)(nil)

// SnapshotState implements exec.Snapshotter.
func (l *Limit) SnapshotState(_ context.Context, w exec.StateWriter) error {
	if err := writeHeader(w, l.Kind(), limitStateVersion); err != nil {
		return err
	}
	return writeInts(w, "seen", l.seen)
}

// RestoreState implements exec.Snapshotter.
func (l *Limit) RestoreState(_ context.Context, r exec.StateReader) error {
	if err := checkHeader(r, l.Kind(), limitStateVersion); err != nil {
		return err
	}
	v, err := readInts(r, l.Kind(), "seen", 1)
	if err != nil {
		return err
	}
	l.seen = v[0]
	return nil
}
