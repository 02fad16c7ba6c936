package ops

import (
	"context"
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
		// Stored decoded: a restored operator cannot share the
		// dictionaries of batches before the checkpoint.
		f.Nullable, f.Type, f.Metadata = true, exec.PlainType(f.Type), arrow.Metadata{}
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

// readIntsInto reads what writeInts stored into vs.
func readIntsInto(r exec.StateReader, kind, name string, vs ...*int64) error {
	vals, err := readInts(r, kind, name, len(vs))
	if err != nil {
		return err
	}
	for i, v := range vs {
		*v = vals[i]
	}
	return nil
}

// The layout versions of the OVER operators' states: the parts each
// SnapshotState below writes, after writeHeader's kind and version.
const (
	streamRankStateVersion     = 1 // "seq"; "ranks": each key's kept rows, best first, with arrival
	streamDedupStateVersion    = 1 // "clock"; "pending" rows with arrival; "done" keys with the time emitted
	streamOverStateVersion     = 1 // "clock"; "pending", "frames" rows with arrival; "accumulators" when unbounded
	retractingOverStateVersion = 1 // "clock"; "current": each key's rows in order, with arrival
	windowRankStateVersion     = 1 // "clock"; "windows": each open window's kept rows per key, with arrival
)

// SnapshotState writes every key's kept ranks, best first, with their
// arrival order; the emitted window is always the visible ranks between
// batches, so it is rebuilt from them.
func (r *StreamRank) SnapshotState(_ context.Context, w exec.StateWriter) error {
	if err := writeHeader(w, r.Kind(), streamRankStateVersion); err != nil {
		return err
	}
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
	if err := checkHeader(rd, r.Kind(), streamRankStateVersion); err != nil {
		return err
	}
	var seq int64
	if err := readIntsInto(rd, r.Kind(), "seq", &seq); err != nil {
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
	if err := writeHeader(w, d.Kind(), streamDedupStateVersion); err != nil {
		return err
	}
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
	if err := checkHeader(r, d.Kind(), streamDedupStateVersion); err != nil {
		return err
	}
	if err := readIntsInto(r, d.Kind(), "clock", &d.wm, &d.seq, &d.late, &d.nullTS); err != nil {
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

// SnapshotState writes every key's held and in-frame rows (with their
// arrival order), its running accumulators when the frame is unbounded,
// and the clock and counters.
func (o *StreamOverAgg) SnapshotState(_ context.Context, w exec.StateWriter) error {
	version := uint32(streamOverStateVersion)
	if o.changelog {
		version = retractingOverStateVersion
	}
	if err := writeHeader(w, o.Kind(), version); err != nil {
		return err
	}
	if o.changelog {
		// Every key's current rows in order; their aggregates follow.
		var rows []exec.Row
		var seqs []int64
		for _, list := range o.lists {
			for _, e := range list {
				rows, seqs = append(rows, e.row), append(seqs, e.seq)
			}
		}
		if err := writeHeldRows(w, "current", o.out.Fields()[:o.inputWidth()], rows, seqs); err != nil {
			return err
		}
		return writeInts(w, "clock", o.seq)
	}
	var pend, hist []exec.Row
	var pseq, hseq []int64
	var accRows []exec.Row
	for k, p := range o.parts {
		for _, r := range p.pending {
			pend, pseq = append(pend, r.row), append(pseq, r.seq)
		}
		for _, r := range p.hist {
			hist, hseq = append(hist, r.row), append(hseq, r.seq)
		}
		if p.acc != nil {
			row := exec.Row{[]byte(k)}
			for _, a := range p.acc {
				row = append(row, a.n, a.si, a.sf, a.min, a.max)
			}
			accRows = append(accRows, row)
		}
	}
	in := o.out.Fields()[:o.inputWidth()]
	if err := writeHeldRows(w, "pending", in, pend, pseq); err != nil {
		return err
	}
	if err := writeHeldRows(w, "frames", in, hist, hseq); err != nil {
		return err
	}
	if o.spec.Preceding < 0 {
		if err := writeHeldRows(w, "accumulators", o.accFields(), accRows, make([]int64, len(accRows))); err != nil {
			return err
		}
	}
	return writeInts(w, "clock", o.wm, o.seq, o.late, o.nullTS)
}

// accFields is the schema of the running accumulators: the key, then per
// function its count, exact and float sums, minimum and maximum.
func (o *StreamOverAgg) accFields() []arrow.Field {
	fs := []arrow.Field{{Name: "key", Type: arrow.BinaryTypes.Binary}}
	for i, f := range o.spec.Funcs {
		var vt arrow.DataType = arrow.PrimitiveTypes.Int64 // count_star: never set
		if f.Arg >= 0 {
			vt = o.out.Field(f.Arg).Type
		}
		fs = append(fs,
			arrow.Field{Name: fmt.Sprintf("n%d", i), Type: arrow.PrimitiveTypes.Int64},
			arrow.Field{Name: fmt.Sprintf("si%d", i), Type: arrow.PrimitiveTypes.Int64},
			arrow.Field{Name: fmt.Sprintf("sf%d", i), Type: arrow.PrimitiveTypes.Float64},
			arrow.Field{Name: fmt.Sprintf("min%d", i), Type: vt},
			arrow.Field{Name: fmt.Sprintf("max%d", i), Type: vt})
	}
	return fs
}

// RestoreState loads what SnapshotState wrote.
func (o *StreamOverAgg) RestoreState(_ context.Context, r exec.StateReader) error {
	if o.err != nil {
		return o.err
	}
	version := uint32(streamOverStateVersion)
	if o.changelog {
		version = retractingOverStateVersion
	}
	if err := checkHeader(r, o.Kind(), version); err != nil {
		return err
	}
	if o.changelog {
		return o.restoreChangelog(r)
	}
	if err := readIntsInto(r, o.Kind(), "clock", &o.wm, &o.seq, &o.late, &o.nullTS); err != nil {
		return err
	}
	width := o.inputWidth()
	held := func(name string, add func(p *overPart, r overRow)) error {
		rows, seqs, err := readHeldRows(r, name, width)
		if err != nil {
			return err
		}
		for i, row := range rows {
			v, ok := row[o.spec.TimeCol].(arrow.Timestamp)
			if !ok {
				return fmt.Errorf("OVER aggregate state: a held row has no event time")
			}
			add(o.part(row), overRow{row: row, ts: o.micros(int64(v)), seq: seqs[i]})
		}
		return nil
	}
	if err := held("pending", func(p *overPart, r overRow) { p.pending = append(p.pending, r) }); err != nil {
		return err
	}
	// Each key's frame rows were written together, in emission order.
	if err := held("frames", func(p *overPart, r overRow) { p.hist = append(p.hist, r) }); err != nil {
		return err
	}
	if o.spec.Preceding >= 0 {
		return nil
	}
	accs, _, err := readHeldRows(r, "accumulators", len(o.accFields()))
	if err != nil {
		return err
	}
	for _, row := range accs {
		k, _ := row[0].([]byte)
		p := o.parts[string(k)]
		if p == nil {
			p = &overPart{}
			o.parts[string(k)] = p
		}
		p.acc = make([]overAcc, len(o.spec.Funcs))
		for i := range p.acc {
			c := row[1+5*i:]
			n, _ := c[0].(int64)
			si, _ := c[1].(int64)
			sf, _ := c[2].(float64)
			p.acc[i] = overAcc{n: n, si: si, sf: sf, min: c[3], max: c[4]}
		}
	}
	return nil
}

var _ exec.Snapshotter = (*StreamOverAgg)(nil)

// SnapshotState writes every open window's kept rows, key by key in rank
// order, with their arrival order, and the clock and counters.
func (r *WindowRank) SnapshotState(_ context.Context, w exec.StateWriter) error {
	if err := writeHeader(w, r.Kind(), windowRankStateVersion); err != nil {
		return err
	}
	var rows []exec.Row
	var seqs []int64
	for _, pane := range r.panes {
		for _, p := range pane.order {
			for _, e := range p.top {
				rows, seqs = append(rows, e.row), append(seqs, int64(e.seq))
			}
		}
	}
	if err := writeHeldRows(w, "windows", r.out.Fields()[:r.inputWidth()], rows, seqs); err != nil {
		return err
	}
	return writeInts(w, "clock", r.wm, int64(r.eng.seq), r.late, r.nullTS)
}

// RestoreState loads what SnapshotState wrote.
func (r *WindowRank) RestoreState(_ context.Context, rd exec.StateReader) error {
	if r.err != nil {
		return r.err
	}
	if err := checkHeader(rd, r.Kind(), windowRankStateVersion); err != nil {
		return err
	}
	var seq int64
	if err := readIntsInto(rd, r.Kind(), "clock", &r.wm, &seq, &r.late, &r.nullTS); err != nil {
		return err
	}
	r.eng.seq = uint64(seq)
	rows, seqs, err := readHeldRows(rd, "windows", r.inputWidth())
	if err != nil {
		return err
	}
	for i, row := range rows {
		_, p, ok := r.place(row)
		if !ok {
			return fmt.Errorf("window top-n state: a kept row has no window end")
		}
		p.top = append(p.top, topEntry{row: row, seq: uint64(seqs[i])})
	}
	return nil
}

var _ exec.Snapshotter = (*WindowRank)(nil)

// restoreChangelog loads the retracting mode's current rows, written key
// by key in order, and recomputes their aggregates.
func (o *StreamOverAgg) restoreChangelog(r exec.StateReader) error {
	if err := readIntsInto(r, o.Kind(), "clock", &o.seq); err != nil {
		return err
	}
	rows, seqs, err := readHeldRows(r, "current", o.inputWidth())
	if err != nil {
		return err
	}
	for i, row := range rows {
		o.buf = o.buf[:0]
		for _, c := range o.spec.PartitionBy {
			o.buf = appendKeyValue(o.buf, row[c])
		}
		o.lists[string(o.buf)] = append(o.lists[string(o.buf)], overEntry{row: row, seq: seqs[i]})
	}
	for _, list := range o.lists {
		for i := range list {
			list[i].res = o.frameResults(list, i)
		}
	}
	return nil
}
