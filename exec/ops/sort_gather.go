package ops

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// recordRows numbers the rows of several records one after another, so a
// sort orders row numbers and the output is gathered from the records as
// they came, without concatenating them first.
type recordRows struct {
	recs   []arrow.RecordBatch
	starts []int   // the number of each record's first row, then the total
	recOf  []int32 // the record of each row (nil for one record)
}

func newRecordRows(recs []arrow.RecordBatch) *recordRows {
	s := &recordRows{recs: recs, starts: make([]int, len(recs)+1)}
	for r, rec := range recs {
		s.starts[r+1] = s.starts[r] + int(rec.NumRows())
	}
	if len(recs) > 1 {
		s.recOf = make([]int32, s.len())
		for r := range recs {
			for i := s.starts[r]; i < s.starts[r+1]; i++ {
				s.recOf[i] = int32(r)
			}
		}
	}
	return s
}

func (s *recordRows) len() int { return s.starts[len(s.recs)] }

// locate is row g's record and row in it.
func (s *recordRows) locate(g int32) cellRef {
	if s.recOf == nil {
		return cellRef{0, g}
	}
	r := s.recOf[g]
	return cellRef{r, g - int32(s.starts[r])}
}

// keyString is row g's value of a string column (borrowed), for ties.
func (s *recordRows) keyString(g int32, col int) []byte {
	at := s.locate(g)
	arr := s.recs[at.arr].Column(col)
	if arr.IsNull(int(at.row)) {
		return nil
	}
	b, _ := arrayString(arr, int(at.row))
	return b
}

// sortByComparator is the order of key types without a normalised form:
// the typed comparators over the concatenated columns.
func (s *recordRows) sortByComparator(mem memory.Allocator, schema *arrow.Schema, keys []SortKey) ([]int32, error) {
	cols, err := concatColumns(mem, schema, s.recs)
	if err != nil {
		return nil, err
	}
	defer releaseAll(cols)
	idx := make([]int32, s.len())
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, recordComparator(cols, keys))
	return idx, nil
}

// orderedGather gathers rows of a recordRows into new records: straight
// from the records the rows sit in for the types gatherRefs copies, from
// one concatenation made once for the others (dictionaries, nested), so
// gathering in chunks never concatenates per chunk.
type orderedGather struct {
	mem    memory.Allocator
	schema *arrow.Schema
	src    *recordRows
	srcs   [][]arrow.Array // per column: its array in each record, or nil
	whole  []arrow.Array   // per column: the concatenation, when srcs is nil
	refs   []cellRef
}

func newOrderedGather(mem memory.Allocator, schema *arrow.Schema, src *recordRows) *orderedGather {
	g := &orderedGather{mem: mem, schema: schema, src: src, srcs: make([][]arrow.Array, schema.NumFields()),
		whole: make([]arrow.Array, schema.NumFields())}
	for c := range g.srcs {
		arrs := make([]arrow.Array, len(src.recs))
		for r, rec := range src.recs {
			arrs[r] = rec.Column(c)
		}
		if refsGatherable(arrs) {
			g.srcs[c] = arrs
		}
	}
	return g
}

// refsGatherable reports whether gatherRefs copies these arrays directly.
func refsGatherable(arrs []arrow.Array) bool {
	dt := arrs[0].DataType()
	switch dt.ID() {
	case arrow.BOOL, arrow.STRING, arrow.BINARY:
		return true
	case arrow.DICTIONARY:
		return false
	}
	if _, ok := dt.(arrow.FixedWidthDataType); !ok {
		return false
	}
	for _, a := range arrs {
		if bufs := a.Data().Buffers(); len(bufs) != 2 || bufs[1] == nil {
			return false
		}
	}
	return true
}

// gather returns a record of the rows numbered rows, in that order.
func (g *orderedGather) gather(rows []int32) (arrow.RecordBatch, error) {
	g.refs = g.refs[:0]
	for _, r := range rows {
		g.refs = append(g.refs, g.src.locate(r))
	}
	out := make([]arrow.Array, len(g.srcs))
	defer func() {
		for _, a := range out {
			if a != nil {
				a.Release()
			}
		}
	}()
	for c, arrs := range g.srcs {
		var err error
		if arrs != nil {
			out[c], err = gatherRefs(g.mem, g.schema.Field(c).Type, arrs, g.refs)
		} else {
			if g.whole[c] == nil {
				if g.whole[c], err = g.concat(c); err != nil {
					return nil, err
				}
			}
			out[c], err = gather(g.mem, g.whole[c], rows)
		}
		if err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(g.schema, out, int64(len(rows))), nil
}

func (g *orderedGather) concat(c int) (arrow.Array, error) {
	parts := make([]arrow.Array, len(g.src.recs))
	for r, rec := range g.src.recs {
		parts[r] = rec.Column(c)
	}
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	return array.Concatenate(parts, g.mem)
}

func (g *orderedGather) release() {
	for i, a := range g.whole {
		if a != nil {
			a.Release()
			g.whole[i] = nil
		}
	}
}
