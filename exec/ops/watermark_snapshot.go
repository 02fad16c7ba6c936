package ops

import (
	"context"

	"github.com/clink-sql/clink/exec"
)

// watermarkStateVersion is the layout of WatermarkAssigner's state: one
// "clock" Value of int64s (see SnapshotState).
const watermarkStateVersion = 1

var _ exec.Snapshotter = (*WatermarkAssigner)(nil)

// SnapshotState implements exec.Snapshotter: the watermark emitted, the
// latest event time, the source's clock and the counters.
func (w *WatermarkAssigner) SnapshotState(_ context.Context, sw exec.StateWriter) error {
	if err := writeHeader(sw, w.Kind(), watermarkStateVersion); err != nil {
		return err
	}
	return writeInts(sw, "clock", w.wm, w.maxTS, w.srcWM, b2i64(w.srcSeen), b2i64(w.final),
		w.behind, w.nullTS, w.emitted)
}

// RestoreState implements exec.Snapshotter.
func (w *WatermarkAssigner) RestoreState(_ context.Context, r exec.StateReader) error {
	if err := checkHeader(r, w.Kind(), watermarkStateVersion); err != nil {
		return err
	}
	v, err := readInts(r, w.Kind(), "clock", 8)
	if err != nil {
		return err
	}
	w.wm, w.maxTS, w.srcWM, w.srcSeen, w.final = v[0], v[1], v[2], v[3] != 0, v[4] != 0
	w.behind, w.nullTS, w.emitted = v[5], v[6], v[7]
	return nil
}
