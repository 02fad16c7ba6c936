package ops

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// buildChunk is one buffered build batch, kept in the form it arrived in.
type buildChunk struct {
	rec    arrow.RecordBatch // retained; nil for a row chunk
	rows   []exec.Row
	schema *arrow.Schema // of a row chunk
}

// buildSide is the hashed right input of a join. Matches for a key id g
// are the build rows order[off[g]:off[g+1]], in arrival order (a CSR
// layout: one slice walk per probe row, no per-key slices).
type buildSide struct {
	schema *arrow.Schema
	keys   *keyIndex
	off    []int32
	order  []int32
	n      int

	cols []arrow.Array // columnar form, built lazily for columnar output
	rows []exec.Row    // row form, built lazily for row output
	mem  memory.Allocator
}

// finishBuild hashes the buffered chunks. Columnar chunks are hashed from
// their arrays and concatenated; row chunks from their values. A mix is
// brought to columnar form (row chunks encoded) so there is one numbering.
func finishBuild(mem memory.Allocator, schema *arrow.Schema, rightKeys []int, kind keyKind, chunks []buildChunk) (*buildSide, error) {
	bs := &buildSide{schema: schema, keys: newKeyIndex(kind, false), mem: mem}
	anyCol := false
	for _, c := range chunks {
		if c.rec != nil {
			anyCol = true
		}
	}
	var gids []int32
	if !anyCol {
		var vals []any
		for _, c := range chunks {
			for ri, r := range c.rows {
				vals = vals[:0]
				for _, k := range rightKeys {
					vals = append(vals, r[k])
				}
				id, _, err := bs.keys.idRow(vals, true)
				if err != nil {
					return nil, fmt.Errorf("join build row %d: %w", len(bs.rows)+ri, err)
				}
				gids = append(gids, id)
			}
			bs.rows = append(bs.rows, c.rows...)
		}
		bs.n = len(bs.rows)
	} else {
		recs := make([]arrow.RecordBatch, 0, len(chunks))
		defer func() {
			for _, r := range recs {
				r.Release()
			}
		}()
		for _, c := range chunks {
			if c.rec != nil {
				c.rec.Retain()
				recs = append(recs, c.rec)
				continue
			}
			r, err := exec.EncodeRows(mem, schema, c.rows)
			if err != nil {
				return nil, fmt.Errorf("join build: %w", err)
			}
			recs = append(recs, r)
		}
		cols, err := concatColumns(mem, schema, recs)
		if err != nil {
			return nil, fmt.Errorf("join build: %w", err)
		}
		bs.cols = cols
		if len(cols) > 0 {
			bs.n = cols[0].Len()
		}
		keyCols := make([]arrow.Array, len(rightKeys))
		for i, k := range rightKeys {
			keyCols[i] = cols[k]
		}
		gids, err = bs.keys.idsColumnar(keyCols, bs.n, true, make([]int32, 0, bs.n), nil)
		if err != nil {
			return nil, fmt.Errorf("join build: %w", err)
		}
	}
	// Counting sort of build rows by key id.
	nk := bs.keys.len()
	bs.off = make([]int32, nk+1)
	for _, g := range gids {
		if g >= 0 {
			bs.off[g+1]++
		}
	}
	for g := 0; g < nk; g++ {
		bs.off[g+1] += bs.off[g]
	}
	bs.order = make([]int32, bs.off[nk])
	fill := append([]int32(nil), bs.off[:nk]...)
	for r, g := range gids {
		if g >= 0 {
			bs.order[fill[g]] = int32(r)
			fill[g]++
		}
	}
	return bs, nil
}

// matches returns the build rows with key id g (none for g < 0).
func (bs *buildSide) matches(g int32) []int32 {
	if g < 0 {
		return nil
	}
	return bs.order[bs.off[g]:bs.off[g+1]]
}

// columns returns the build side as arrays, encoding row chunks once.
func (bs *buildSide) columns() ([]arrow.Array, error) {
	if bs.cols != nil || bs.schema.NumFields() == 0 {
		return bs.cols, nil
	}
	rec, err := exec.EncodeRows(bs.mem, bs.schema, bs.rows)
	if err != nil {
		return nil, fmt.Errorf("join build: %w", err)
	}
	defer rec.Release()
	bs.cols = recordColumns(rec)
	for _, c := range bs.cols {
		c.Retain()
	}
	return bs.cols, nil
}

// rowForm returns the build side as rows, decoding the arrays once.
func (bs *buildSide) rowForm() []exec.Row {
	if bs.rows != nil || bs.n == 0 {
		return bs.rows
	}
	rec := array.NewRecordBatch(bs.schema, bs.cols, int64(bs.n))
	defer rec.Release()
	bs.rows = exec.DecodeRows(rec)
	return bs.rows
}

func (bs *buildSide) release() {
	for _, c := range bs.cols {
		c.Release()
	}
	bs.cols = nil
}

// concatColumns joins the records column by column (a single record's
// columns are just retained).
func concatColumns(mem memory.Allocator, schema *arrow.Schema, recs []arrow.RecordBatch) ([]arrow.Array, error) {
	cols := make([]arrow.Array, schema.NumFields())
	if len(recs) == 1 {
		for i := range cols {
			cols[i] = recs[0].Column(i)
			cols[i].Retain()
		}
		return cols, nil
	}
	if len(recs) == 0 {
		for i := range cols {
			cols[i] = array.MakeArrayOfNull(mem, schema.Field(i).Type, 0)
		}
		return cols, nil
	}
	parts := make([]arrow.Array, len(recs))
	for i := range cols {
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, mem)
		if err != nil {
			for _, done := range cols[:i] {
				done.Release()
			}
			return nil, fmt.Errorf("column %q: %w", schema.Field(i).Name, err)
		}
		cols[i] = c
	}
	return cols, nil
}
