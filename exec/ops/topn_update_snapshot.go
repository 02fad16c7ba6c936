package ops

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// updatingTopNStateVersion is the layout of UpdatingTopN's state:
//
//	"clock" Value: the arrival sequence number, the rows held and the
//	        rebuild count (the last two over a changelog input)
//	"top"   the ranked rows kept (best first): the input's columns and
//	        "seq", the row's arrival number (ties rank by it)
//	"pool"  over a changelog input only: every row the input holds now,
//	        one per copy, in arrival order, with its "seq"
//
// The window last emitted is not stored: between batches it is the
// visible part of "top", which the batch that changed it just emitted.
const updatingTopNStateVersion = 1

var _ exec.Snapshotter = (*UpdatingTopN)(nil)

// rowsSchema is the input's columns (without a row kind) and seq.
func (t *UpdatingTopN) rowsSchema() *arrow.Schema {
	fs := t.out.Fields()
	fs = append(append([]arrow.Field{}, fs[:len(fs)-1]...), arrow.Field{Name: "seq", Type: arrow.PrimitiveTypes.Int64})
	for i := range fs {
		fs[i].Nullable, fs[i].Metadata = true, arrow.Metadata{}
	}
	return arrow.NewSchema(fs, nil)
}

// SnapshotState implements exec.Snapshotter.
func (t *UpdatingTopN) SnapshotState(_ context.Context, w exec.StateWriter) error {
	if t.err != nil {
		return t.err
	}
	if err := writeHeader(w, t.Kind(), updatingTopNStateVersion); err != nil {
		return err
	}
	if err := writeInts(w, "clock", int64(t.seq), int64(t.held), int64(t.rebuilds)); err != nil {
		return err
	}
	mem := memory.NewGoAllocator() // the batches live until Records returns
	if err := t.writeRows(w, mem, "top", t.top); err != nil {
		return err
	}
	if t.pool == nil {
		return nil
	}
	var copies []topEntry
	for _, e := range t.pool {
		for _, id := range e.ids {
			copies = append(copies, topEntry{row: e.row, seq: id})
		}
	}
	slices.SortFunc(copies, func(a, b topEntry) int { return cmp.Compare(a.seq, b.seq) })
	return t.writeRows(w, mem, "pool", copies)
}

func (t *UpdatingTopN) writeRows(w exec.StateWriter, mem memory.Allocator, name string, es []topEntry) error {
	rows := make([]exec.Row, len(es))
	for i, e := range es {
		rows[i] = append(append(make(exec.Row, 0, len(e.row)+1), e.row...), int64(e.seq))
	}
	schema := t.rowsSchema()
	rec, err := exec.EncodeRows(mem, schema, rows)
	if err != nil {
		return fmt.Errorf("updating top-n state: %w", err)
	}
	defer rec.Release()
	return w.Records(name, schema, rec)
}

// RestoreState implements exec.Snapshotter.
func (t *UpdatingTopN) RestoreState(_ context.Context, r exec.StateReader) error {
	kind := t.Kind()
	if t.err != nil {
		return t.err
	}
	if err := checkHeader(r, kind, updatingTopNStateVersion); err != nil {
		return err
	}
	if t.seq != 0 {
		return fmt.Errorf("%s state: restored into a top-n that has already run", kind)
	}
	v, err := readInts(r, kind, "clock", 3)
	if err != nil {
		return err
	}
	top, err := t.readRows(r, "top")
	if err != nil {
		return err
	}
	hasPool := hasPart(r, "pool")
	if hasPool != (t.pool != nil) {
		return fmt.Errorf("%s state: the snapshot is of a top-n over %s input", kind, map[bool]string{true: "a changelog", false: "an append-only"}[hasPool])
	}
	if t.pool != nil {
		copies, err := t.readRows(r, "pool")
		if err != nil {
			return err
		}
		for _, c := range copies {
			t.buf = t.buf[:0]
			for _, x := range c.row {
				t.buf = appendExactValue(t.buf, x)
			}
			e := t.pool[string(t.buf)]
			if e == nil {
				e = &pooled{row: c.row}
				t.pool[string(t.buf)] = e
			}
			e.ids = append(e.ids, c.seq)
		}
		if len(copies) != int(v[1]) {
			return fmt.Errorf("%s state: %d rows held, the pool has %d", kind, v[1], len(copies))
		}
	}
	t.seq, t.held, t.rebuilds = uint64(v[0]), int(v[1]), int(v[2])
	t.top = top
	t.prev = append(t.prev[:0], t.visible()...)
	return nil
}

func (t *UpdatingTopN) readRows(r exec.StateReader, name string) ([]topEntry, error) {
	kind := t.Kind()
	_, recs, ok, err := readPart(r, kind, name, t.rowsSchema())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s state: part %q missing", kind, name)
	}
	defer releaseRecs(recs)
	var es []topEntry
	for _, rec := range recs {
		for _, row := range exec.DecodeRows(rec) {
			k := len(row) - 1
			seq, ok := row[k].(int64)
			if !ok {
				return nil, fmt.Errorf("%s state: part %q has a row without its arrival number", kind, name)
			}
			es = append(es, topEntry{row: row[:k:k], seq: uint64(seq)})
		}
	}
	return es, nil
}
