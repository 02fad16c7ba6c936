package kafka

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/clink-sql/clink/exec"
)

// Checkpoints. The source's state is, per partition, the offset after the
// last record of a batch emitted before the barrier (every assigned
// partition has one from the start: its start offset). A run restored
// from a checkpoint starts at those offsets, whatever the group holds or
// 'scan.startup.mode' says. With checkpoints the group's offsets are
// committed only when a checkpoint completes (CheckpointComplete), to
// that checkpoint's offsets: the group then says how far the job's output
// is final, for monitoring and for a job started without the checkpoint.

const offsetsPart = "offsets"

// SnapshotState implements exec.Snapshotter. The graph calls it between
// two emits, under the emitter's lock, which also guards the position.
func (s *Source) SnapshotState(_ context.Context, w exec.StateWriter) error {
	s.mu.Lock()
	pos := make(map[int32]int64, len(s.emitted))
	for p, o := range s.emitted {
		pos[p] = o
	}
	s.snapshots = pos
	s.mu.Unlock()
	b, err := json.Marshal(pos)
	if err != nil {
		return err
	}
	return w.Value(offsetsPart, b)
}

// RestoreState implements exec.Snapshotter.
func (s *Source) RestoreState(_ context.Context, r exec.StateReader) error {
	b, ok, err := r.Value(offsetsPart)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("kafka topic '%s': the checkpoint holds no offsets for this source", s.t.cfg.topic)
	}
	var pos map[int32]int64
	if err := json.Unmarshal(b, &pos); err != nil {
		return fmt.Errorf("kafka topic '%s': checkpointed offsets: %w", s.t.cfg.topic, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restored = pos
	for p, o := range pos {
		s.emitted[p] = o
	}
	return nil
}

// CheckpointComplete implements exec.CheckpointListener: the offsets of
// the snapshot just completed (one checkpoint is in flight at a time, so
// the last snapshot is that checkpoint's) go to the group. A failed
// commit is counted, not fatal: the checkpoint, not the group, is what a
// restored run reads.
func (s *Source) CheckpointComplete(ctx context.Context, _ int64) error {
	s.mu.Lock()
	pos := s.snapshots
	s.mu.Unlock()
	if pos != nil {
		_ = s.commit(ctx, pos) // counted in Report
	}
	return nil
}
