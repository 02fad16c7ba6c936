package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/exec"
)

// streamJoinStateVersion is the layout of StreamJoin's state:
//
//	"clock"        Value: the watermark, which inputs ended, whether the
//	               output bailed to rows, the key table's size at its last
//	               rebuild and the counters
//	"left","right" each side's held rows, written once the side has seen
//	               a batch: "chunk" (the held batch the row came in, an
//	               ordinal in arrival order), the input's columns (the row
//	               kind of a changelog input included, decoded from
//	               dictionaries), then per row "matched" (its current
//	               matches, for an outer side), "max_t" (the latest event
//	               time of its batch, which decides when the batch
//	               expires) and "born" (when the batch arrived, unix ns,
//	               for the state TTL)
//
// Only live rows are stored (retracted and expired ones are gone). A
// restore holds each chunk's rows as one columnar batch again and links
// them under fresh key ids in the same order, so a probe meets the held
// rows in the order the snapshotted join would have.
const streamJoinStateVersion = 1

var _ exec.Snapshotter = (*StreamJoin)(nil)

var sideNames = [2]string{"left", "right"}

// sideSchema is input s's schema as the state stores it: its value
// columns' types as the output declares them, the row kind at its place.
func (j *StreamJoin) sideSchema(s int) *arrow.Schema {
	off := 0
	if j.changelog {
		off = 1
	}
	out := j.spec.Out.Fields()
	var vals []arrow.Field
	if s == 0 {
		vals = out[off : off+len(j.valCols[0])]
	} else {
		vals = out[len(out)-len(j.valCols[1]):]
	}
	fs := make([]arrow.Field, 0, len(vals)+1)
	for _, f := range vals {
		if len(fs) == j.opCol[s] {
			fs = append(fs, arrow.Field{Name: "op", Type: arrow.BinaryTypes.String, Nullable: true})
		}
		fs = append(fs, arrow.Field{Name: f.Name, Type: exec.PlainType(f.Type), Nullable: true})
	}
	if len(fs) == j.opCol[s] {
		fs = append(fs, arrow.Field{Name: "op", Type: arrow.BinaryTypes.String, Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

// sideStateSchema wraps a side schema in the chunk and per-row columns.
func sideStateSchema(side *arrow.Schema) *arrow.Schema {
	fs := []arrow.Field{{Name: "chunk", Type: arrow.PrimitiveTypes.Int64}}
	fs = append(fs, side.Fields()...)
	fs = append(fs,
		arrow.Field{Name: "matched", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "max_t", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "born", Type: arrow.PrimitiveTypes.Int64})
	return arrow.NewSchema(fs, nil)
}

// SnapshotState implements exec.Snapshotter.
func (j *StreamJoin) SnapshotState(_ context.Context, w exec.StateWriter) error {
	if j.err != nil {
		return j.err
	}
	if err := writeHeader(w, j.Kind(), streamJoinStateVersion); err != nil {
		return err
	}
	l, r := j.side[0], j.side[1]
	if err := writeInts(w, "clock", j.wm, b2i64(j.ended[0]), b2i64(j.ended[1]), b2i64(j.bailed),
		int64(j.keysRebuilt), j.late, j.badRetracts, j.ttlExpired, j.emitsColumnar, j.emitsHeldBack,
		l.expired, r.expired); err != nil {
		return err
	}
	for s := range j.side {
		if j.valCols[s] == nil {
			continue // no batch yet: nothing held, nothing bound
		}
		if err := j.snapshotSide(w, s); err != nil {
			return fmt.Errorf("stream join state, %s input: %w", sideNames[s], err)
		}
	}
	return nil
}

func (j *StreamJoin) snapshotSide(w exec.StateWriter, s int) error {
	side := j.side[s]
	// Live rows per chunk, in the order they are linked.
	rows := map[int32][]int32{}
	for e := range side.entries {
		if side.alive(int32(e)) {
			en := side.entries[e]
			rows[en.chunk] = append(rows[en.chunk], en.row)
		}
	}
	schema := j.sideSchema(s)
	stateSchema := sideStateSchema(schema)
	var recs []arrow.RecordBatch
	defer func() { releaseRecs(recs) }()
	for ord, id := range side.live {
		c := side.chunks[id]
		sel := rows[id]
		if c.dropped || len(sel) == 0 {
			continue
		}
		data, err := chunkRows(j, schema, c, sel)
		if err != nil {
			return err
		}
		n := len(sel)
		meta := make([][]int64, 4)
		for i := range meta {
			meta[i] = make([]int64, n)
		}
		for i, r := range sel {
			meta[0][i] = int64(ord)
			if side.outer {
				meta[1][i] = int64(c.matched[r])
			}
			meta[2][i], meta[3][i] = c.maxT, c.born
		}
		cols := []arrow.Array{int64Column(j.mem, meta[0])}
		cols = append(cols, recordColumns(data)...)
		for _, m := range meta[1:] {
			cols = append(cols, int64Column(j.mem, m))
		}
		rec, err := withColumns(stateSchema, cols, int64(n))
		data.Release()
		cols[0].Release()
		releaseAll(cols[len(cols)-3:])
		if err != nil {
			return err
		}
		recs = append(recs, rec)
	}
	return w.Records(sideNames[s], stateSchema, recs...)
}

// chunkRows gathers rows sel of a held chunk into a record of schema.
func chunkRows(j *StreamJoin, schema *arrow.Schema, c *joinChunk, sel []int32) (arrow.RecordBatch, error) {
	if c.rec == nil {
		rows := make([]exec.Row, len(sel))
		for i, r := range sel {
			rows[i] = c.rows[r]
		}
		return exec.EncodeRows(j.mem, schema, rows)
	}
	cols, err := plainColumns(j.mem, schema, c.rec)
	if err != nil {
		return nil, err
	}
	defer releaseAll(cols)
	return gatherRecord(j.mem, schema, cols, sel)
}

// RestoreState implements exec.Snapshotter.
func (j *StreamJoin) RestoreState(_ context.Context, r exec.StateReader) error {
	kind := j.Kind()
	if j.err != nil {
		return j.err
	}
	if err := checkHeader(r, kind, streamJoinStateVersion); err != nil {
		return err
	}
	if j.valCols[0] != nil || j.valCols[1] != nil {
		return fmt.Errorf("%s state: restored into a join that has already run", kind)
	}
	v, err := readInts(r, kind, "clock", 12)
	if err != nil {
		return err
	}
	j.wm, j.ended, j.bailed = v[0], [2]bool{v[1] != 0, v[2] != 0}, v[3] != 0
	j.keysRebuilt, j.late, j.badRetracts, j.ttlExpired = int(v[4]), v[5], v[6], v[7]
	j.emitsColumnar, j.emitsHeldBack = v[8], v[9]
	j.side[0].expired, j.side[1].expired = v[10], v[11]
	if j.bailed {
		j.columnarOut = false
	}
	for s := range j.side {
		if err := j.restoreSide(r, s); err != nil {
			return fmt.Errorf("%s state, %s input: %w", kind, sideNames[s], err)
		}
	}
	return nil
}

func (j *StreamJoin) restoreSide(r exec.StateReader, s int) error {
	stored, recs, ok, err := r.Records(sideNames[s])
	if err != nil || !ok {
		return err
	}
	defer releaseRecs(recs)
	nf := stored.NumFields()
	if nf < 5 {
		return fmt.Errorf("the state has columns %s", schemaText(stored))
	}
	data := arrow.NewSchema(stored.Fields()[1:nf-3], nil)
	if err := j.bind(s, data); err != nil {
		return err
	}
	if want := sideStateSchema(j.sideSchema(s)); !stored.Equal(want) {
		return fmt.Errorf("the state has columns %s, this join keeps %s (a snapshot of another plan?)", schemaText(stored), schemaText(want))
	}
	side := j.side[s]
	for _, rec := range recs {
		ords, err := int64sOf(rec.Column(0), "chunk")
		if err != nil {
			return err
		}
		for i := 0; i < len(ords); {
			k := i + 1
			for k < len(ords) && ords[k] == ords[i] {
				k++
			}
			if err := j.restoreChunk(side, s, data, rec, i, k); err != nil {
				return err
			}
			i = k
		}
	}
	return nil
}

// restoreChunk holds rows [from, to) of a stored side batch as one chunk.
func (j *StreamJoin) restoreChunk(side *joinSide, s int, data *arrow.Schema, rec arrow.RecordBatch, from, to int) error {
	n := to - from
	nf := int(rec.NumCols())
	cols := make([]arrow.Array, 0, data.NumFields())
	for c := 1; c < nf-3; c++ {
		cols = append(cols, array.NewSlice(rec.Column(c), int64(from), int64(to)))
	}
	chunkRec := array.NewRecordBatch(data, cols, int64(n))
	releaseAll(cols)
	defer chunkRec.Release()
	var meta [3][]int64
	for i := range meta {
		vals, err := int64sOf(rec.Column(nf-3+i), rec.Schema().Field(nf-3+i).Name)
		if err != nil {
			return err
		}
		meta[i] = vals[from:to]
	}
	kcols := make([]arrow.Array, len(j.keyCols[s]))
	for i, k := range j.keyCols[s] {
		kcols[i] = chunkRec.Column(k)
	}
	ids, err := j.keys.idsColumnar(kcols, n, true, nil, nil)
	if err != nil {
		return err
	}
	id := side.addChunk(chunkRec, nil, n)
	c := side.chunks[id]
	c.born = meta[2][0]
	for i := range n {
		side.add(id, int32(i), ids[i], exec.MinWatermark, int32(meta[0][i]))
	}
	c.maxT = meta[1][0]
	side.filled(id)
	return nil
}
