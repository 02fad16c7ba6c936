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
// layout: one slice walk per probe row, no per-key slices). A nested-loop
// join's build side is not hashed (keys nil).
type buildSide struct {
	schema *arrow.Schema
	keys   *keyIndex
	off    []int32
	order  []int32
	n      int
	// nullRows are the rows with a NULL in a key that is not null-safe
	// (they match nothing; a null-aware join asks about them).
	nullRows []int32
	all      []int32 // 0..n-1, built on first use
	// keyEnc: per key column, each row's encoded key (null-aware joins
	// with several keys), built on first use.
	keyEnc [][]string
	groups *nullGroups // null-aware joins with null-safe keys, built on first use

	cols []arrow.Array // columnar form, built lazily for columnar output
	rows []exec.Row    // row form, built lazily for row output
	mem  memory.Allocator
}

// buildKeySpec is how a hash join keys its build side.
type buildKeySpec struct {
	cols     []int
	kind     keyKind
	nullKeys bool   // the index keeps NULLs (some key is null-safe)
	nullSafe []bool // per key; nil: none
}

// plainNullRow reports whether a row's key values have a NULL in a key
// that is not null-safe: such a row matches nothing.
func (ks *buildKeySpec) plainNullRow(vals []any) bool {
	for k, v := range vals {
		if v == nil && (ks.nullSafe == nil || !ks.nullSafe[k]) {
			return true
		}
	}
	return false
}

// finishBuild hashes the buffered chunks (keys nil: only gathers them).
// Columnar chunks are hashed from their arrays and concatenated; row
// chunks from their values. A mix is brought to columnar form (row chunks
// encoded) so there is one numbering.
func finishBuild(mem memory.Allocator, schema *arrow.Schema, keys *buildKeySpec, chunks []buildChunk) (*buildSide, error) {
	bs := &buildSide{schema: schema, mem: mem}
	if keys != nil {
		bs.keys = newKeyIndex(keys.kind, keys.nullKeys)
	}
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
			if keys == nil {
				bs.rows = append(bs.rows, c.rows...)
				continue
			}
			for ri, r := range c.rows {
				vals = vals[:0]
				for _, k := range keys.cols {
					vals = append(vals, r[k])
				}
				id, _, err := bs.keys.idRow(vals, true)
				if err != nil {
					return nil, fmt.Errorf("join build row %d: %w", len(bs.rows)+ri, err)
				}
				if keys.nullKeys && keys.plainNullRow(vals) {
					id = -1
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
		} else if len(recs) > 0 {
			for _, r := range recs {
				bs.n += int(r.NumRows())
			}
		}
		if keys != nil {
			keyCols := make([]arrow.Array, len(keys.cols))
			for i, k := range keys.cols {
				keyCols[i] = cols[k]
			}
			gids, err = bs.keys.idsColumnar(keyCols, bs.n, true, make([]int32, 0, bs.n), nil)
			if err != nil {
				return nil, fmt.Errorf("join build: %w", err)
			}
			if keys.nullKeys {
				maskPlainNulls(gids, keyCols, keys)
			}
		}
	}
	if keys == nil {
		return bs, nil
	}
	bs.off, bs.order = groupRows(gids, nil, bs.keys.len())
	for r, g := range gids {
		if g < 0 {
			bs.nullRows = append(bs.nullRows, int32(r))
		}
	}
	return bs, nil
}

// groupRows sorts rows (nil: every row of gids) by their ids gids[row]
// into a CSR layout: group g's rows are order[off[g]:off[g+1]], in row
// order (a counting sort). Rows with an id < 0 are left out.
func groupRows(gids, rows []int32, groups int) (off, order []int32) {
	n := len(gids)
	if rows != nil {
		n = len(rows)
	}
	row := func(k int) int32 {
		if rows == nil {
			return int32(k)
		}
		return rows[k]
	}
	off = make([]int32, groups+1)
	for k := 0; k < n; k++ {
		if g := gids[row(k)]; g >= 0 {
			off[g+1]++
		}
	}
	for g := 0; g < groups; g++ {
		off[g+1] += off[g]
	}
	order = make([]int32, off[groups])
	fill := append([]int32(nil), off[:groups]...)
	for k := 0; k < n; k++ {
		r := row(k)
		if g := gids[r]; g >= 0 {
			order[fill[g]] = r
			fill[g]++
		}
	}
	return off, order
}

// maskPlainNulls sets to -1 the ids of rows with a NULL in a key that is
// not null-safe: an index that keeps NULLs (for the null-safe keys) gave
// them an id.
func maskPlainNulls(ids []int32, cols []arrow.Array, keys *buildKeySpec) {
	for k, c := range cols {
		if c.NullN() == 0 || (keys.nullSafe != nil && keys.nullSafe[k]) {
			continue
		}
		for i := range ids {
			if c.IsNull(i) {
				ids[i] = -1
			}
		}
	}
}

// allRows is 0..n-1: every build row a candidate.
func (bs *buildSide) allRows() []int32 {
	if bs.all == nil && bs.n > 0 {
		bs.all = make([]int32, bs.n)
		for i := range bs.all {
			bs.all[i] = int32(i)
		}
	}
	return bs.all
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
	bs.keys.release()
	if bs.groups != nil {
		bs.groups.keys.release()
	}
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
