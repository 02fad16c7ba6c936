package ops

import (
	"context"
	"fmt"

	"github.com/clink-sql/clink/exec"
)

// updatingAggStateVersion is the layout of UpdatingAggregate's state: the
// aggregate's parts (agg_snapshot.go) and "unemitted", the groups that
// have not emitted a row yet (only the one group of an aggregate without
// GROUP BY before its first row can be one). Each other group's last
// emitted row is its current row, so it is not stored: between batches
// every group a batch touched has emitted its current value.
const updatingAggStateVersion = 1

var _ exec.Snapshotter = (*UpdatingAggregate)(nil)

// SnapshotState implements exec.Snapshotter.
func (u *UpdatingAggregate) SnapshotState(_ context.Context, w exec.StateWriter) error {
	if err := writeHeader(w, u.Kind(), updatingAggStateVersion); err != nil {
		return err
	}
	var unemitted []int64
	for g := range u.agg.ngroups {
		if g >= len(u.last) || u.last[g] == nil {
			unemitted = append(unemitted, int64(g))
		}
	}
	if err := writeInts(w, "unemitted", unemitted...); err != nil {
		return err
	}
	return u.agg.writeAggParts(w, "")
}

// RestoreState implements exec.Snapshotter.
func (u *UpdatingAggregate) RestoreState(_ context.Context, r exec.StateReader) error {
	kind := u.Kind()
	if err := checkHeader(r, kind, updatingAggStateVersion); err != nil {
		return err
	}
	if u.agg.err != nil {
		return u.agg.err
	}
	p, ok, err := readAggParts(r, kind, "")
	if err != nil || !ok {
		return err
	}
	defer p.release()
	h := u.agg
	if err := h.restoreState(p.in, p.groups, p.distinct); err != nil {
		return fmt.Errorf("%s %w", kind, err)
	}
	unemitted, err := readIntList(r, kind, "unemitted")
	if err != nil {
		return err
	}
	n := h.ngroups
	u.grow(n)
	// One backing array each for the keys and the last rows: a million
	// groups are two allocations, not two million.
	k, width := len(h.groupCols), u.out.NumFields()-1
	keyCells := make([]any, n*k)
	g := 0
	for _, rec := range p.groups {
		for i := 0; i < int(rec.NumRows()); i++ {
			key := exec.Row(keyCells[g*k : (g+1)*k : (g+1)*k])
			for c := range key {
				key[c] = exec.Value(rec.Column(c), i)
			}
			u.keyRows[g] = key
			g++
		}
	}
	skip := map[int64]bool{}
	for _, x := range unemitted {
		skip[x] = true
	}
	lastCells := make([]any, n*width)
	for g := range n {
		if skip[int64(g)] {
			continue
		}
		row := exec.Row(lastCells[g*width : g*width : (g+1)*width])
		row = append(row, u.keyRows[g]...)
		for _, a := range h.accs {
			row = append(row, a.value(g))
		}
		u.last[g] = row
	}
	return nil
}
