package ops

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Checkpointed state of the OVER operators over unbounded inputs (Top-N,
// deduplication, OVER aggregates): their held rows as one Records part
// each, with a trailing BIGINT column of per-row bookkeeping (arrival
// order, emitted time), and their counters as Values.

// rankStateCol is the bookkeeping column appended to the held rows.
const rankStateCol = "__state"

// writeHeldRows stores rows (each of the fields, then its int64 note) as
// the part name. The batch is built from a private allocator and released
// before returning: the writer has finished with it by then.
func writeHeldRows(w exec.StateWriter, name string, fields []arrow.Field, rows []exec.Row, notes []int64) error {
	fs := make([]arrow.Field, 0, len(fields)+1)
	for _, f := range fields {
		f.Nullable = true
		fs = append(fs, f)
	}
	schema := arrow.NewSchema(append(fs, arrow.Field{Name: rankStateCol, Type: arrow.PrimitiveTypes.Int64}), nil)
	full := make([]exec.Row, len(rows))
	for i, r := range rows {
		full[i] = append(append(make(exec.Row, 0, len(r)+1), r...), notes[i])
	}
	rec, err := exec.EncodeRows(memory.NewGoAllocator(), schema, full)
	if err != nil {
		return fmt.Errorf("state %s: %w", name, err)
	}
	defer rec.Release()
	return w.Records(name, schema, rec)
}

// readHeldRows gives back what writeHeldRows stored: each row (of width
// columns) and its note; a part never written is no rows.
func readHeldRows(r exec.StateReader, name string, width int) (rows []exec.Row, notes []int64, err error) {
	schema, recs, ok, err := r.Records(name)
	if err != nil || !ok {
		return nil, nil, err
	}
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	if schema.NumFields() != width+1 {
		return nil, nil, fmt.Errorf("state %s: %d columns, want %d and the note", name, schema.NumFields(), width)
	}
	for _, rec := range recs {
		for _, row := range exec.DecodeRows(rec) {
			n, _ := row[width].(int64)
			// A copy: decoded rows share their batch's backing array.
			rows = append(rows, append(make(exec.Row, 0, width), row[:width]...))
			notes = append(notes, n)
		}
	}
	return rows, notes, nil
}

// writeInts stores a few counters as one Value.
func writeInts(w exec.StateWriter, name string, vs ...int64) error {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	return w.Value(name, b)
}

// readInts loads what writeInts stored into vs (left as they are when the
// value was never written).
func readInts(r exec.StateReader, name string, vs ...*int64) error {
	b, ok, err := r.Value(name)
	if err != nil || !ok {
		return err
	}
	if len(b) != 8*len(vs) {
		return fmt.Errorf("state %s: %d bytes, want %d", name, len(b), 8*len(vs))
	}
	for i, v := range vs {
		*v = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return nil
}

// SnapshotState writes every key's kept ranks, best first, with their
// arrival order; the emitted window is always the visible ranks between
// batches, so it is rebuilt from them.
func (r *StreamRank) SnapshotState(_ context.Context, w exec.StateWriter) error {
	var rows []exec.Row
	var seqs []int64
	for _, p := range r.parts {
		for _, e := range p.top {
			rows = append(rows, e.row)
			seqs = append(seqs, int64(e.seq))
		}
	}
	if err := writeHeldRows(w, "ranks", r.out.Fields()[:r.inputWidth()], rows, seqs); err != nil {
		return err
	}
	return writeInts(w, "seq", int64(r.eng.seq))
}

// RestoreState loads what SnapshotState wrote.
func (r *StreamRank) RestoreState(_ context.Context, rd exec.StateReader) error {
	if r.err != nil {
		return r.err
	}
	var seq int64
	if err := readInts(rd, "seq", &seq); err != nil {
		return err
	}
	r.eng.seq = uint64(seq)
	rows, seqs, err := readHeldRows(rd, "ranks", r.inputWidth())
	if err != nil {
		return err
	}
	// Each key's rows were written together, best first.
	for i, row := range rows {
		p := r.part(row)
		p.top = append(p.top, topEntry{row: row, seq: uint64(seqs[i])})
	}
	for _, p := range r.parts {
		r.eng.top = p.top
		p.prev = append([]topEntry(nil), r.eng.visible()...)
	}
	r.eng.top = nil
	return nil
}

var _ exec.Snapshotter = (*StreamRank)(nil)

// firstDoneFields is the schema of a first-row deduplication's emitted
// keys: the encoded key and the time of the row emitted.
var firstDoneFields = []arrow.Field{{Name: "key", Type: arrow.BinaryTypes.Binary}}

// SnapshotState writes the held rows with their arrival order, the
// emitted keys with their times, and the clock and counters.
func (d *StreamDedupFirst) SnapshotState(_ context.Context, w exec.StateWriter) error {
	var rows []exec.Row
	var seqs []int64
	for _, p := range d.pending {
		rows, seqs = append(rows, p.row), append(seqs, p.seq)
	}
	if err := writeHeldRows(w, "pending", d.out.Fields()[:d.inputWidth()], rows, seqs); err != nil {
		return err
	}
	keys := make([]exec.Row, 0, len(d.done))
	times := make([]int64, 0, len(d.done))
	for k, ts := range d.done {
		keys, times = append(keys, exec.Row{[]byte(k)}), append(times, ts)
	}
	if err := writeHeldRows(w, "done", firstDoneFields, keys, times); err != nil {
		return err
	}
	return writeInts(w, "clock", d.wm, d.seq, d.late, d.nullTS)
}

// RestoreState loads what SnapshotState wrote.
func (d *StreamDedupFirst) RestoreState(_ context.Context, r exec.StateReader) error {
	if d.err != nil {
		return d.err
	}
	if err := readInts(r, "clock", &d.wm, &d.seq, &d.late, &d.nullTS); err != nil {
		return err
	}
	rows, seqs, err := readHeldRows(r, "pending", d.inputWidth())
	if err != nil {
		return err
	}
	for i, row := range rows {
		v, ok := row[d.timeCol].(arrow.Timestamp)
		if !ok {
			return fmt.Errorf("deduplication state: a held row has no event time")
		}
		d.buf = d.buf[:0]
		for _, c := range d.partition {
			d.buf = appendKeyValue(d.buf, row[c])
		}
		d.pending[string(d.buf)] = &firstRow{row: row, ts: d.micros(int64(v)), seq: seqs[i]}
	}
	keys, times, err := readHeldRows(r, "done", 1)
	if err != nil {
		return err
	}
	for i, k := range keys {
		b, _ := k[0].([]byte)
		d.done[string(b)] = times[i]
	}
	return nil
}

var _ exec.Snapshotter = (*StreamDedupFirst)(nil)
