package plan

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/ops"
)

// dictionarySource is a scan that can hand out VARCHAR columns as Arrow
// dictionary arrays (codes into a Parquet column chunk's dictionary).
type dictionarySource interface {
	SetDictionaryColumns(cols []int)
}

// columnRef is a bare column reference in a projection (expr.ColRef).
type columnRef interface {
	ColumnIndex() int
}

// dictionaries asks scans for dictionary-encoded VARCHAR columns where a
// column goes from the scan to GROUP BY keys or MIN/MAX (HashAggregate.
// CodeCols) only through filters and bare column references of
// projections, in the same subtask (no exchange in between: the exchange
// hashes plain values). The codes then cross the filter as four bytes a
// row instead of a string copy, and the aggregate looks each dictionary
// entry up once instead of hashing or comparing every row's string (see
// ops.keyIndex, agg_minmax_dict.go). Any other reader of the column in
// that chain (a predicate, a computed projection, another aggregate's
// argument) decodes it, so the choice only changes speed; EXPLAIN shows it
// on the scan.
func (b *builder) dictionaries() {
	if b.opts.Exec.DisableColumnar || b.opts.Exec.DisableDictionary {
		return
	}
	for _, s := range b.stages {
		if s.Exec == nil || len(s.Children) != 1 {
			continue
		}
		agg, ok := s.Exec.Op.(*ops.HashAggregate)
		if !ok {
			continue
		}
		cols, plain := agg.CodeCols()
		c := s.Children[0]
	walk:
		for len(cols) > 0 && len(c.Instances) == len(s.Instances) {
			switch op := c.Exec.Op.(type) {
			case *ops.Filter:
				c = c.Children[0]
			case *ops.Project:
				cols, plain = throughProject(op, cols), throughProject(op, plain)
				c = c.Children[0]
			default:
				break walk
			}
		}
		// A scan column another aggregate reads as well (through a second
		// reference) stays plain: it would be decoded there anyway.
		cols = slices.DeleteFunc(cols, func(k int) bool { return slices.Contains(plain, k) })
		if len(cols) == 0 || c.Exec.Src == nil || len(c.Instances) != len(s.Instances) {
			continue
		}
		if _, ok := c.Exec.Src.(dictionarySource); !ok {
			continue
		}
		// Only VARCHAR columns have dictionary codes (the scan ignores
		// the others), and EXPLAIN must name only those.
		var str []int
		if sc := b.schemaOf(c); sc != nil {
			for _, k := range cols {
				if k >= 0 && k < sc.NumFields() && sc.Field(k).Type.ID() == arrow.STRING && !slices.Contains(str, k) {
					str = append(str, k)
				}
			}
		}
		cols = str
		if len(cols) == 0 {
			continue
		}
		for _, in := range c.Instances {
			in.Src.(dictionarySource).SetDictionaryColumns(cols)
		}
		for _, k := range cols {
			if k < len(c.Columns) {
				c.Dictionary = append(c.Dictionary, c.Columns[k])
			}
		}
	}
}

// throughProject maps columns of a projection's output to its input: bare
// references only (a computed column is not the scan's).
func throughProject(p *ops.Project, cols []int) []int {
	var in []int
	for _, k := range cols {
		if ref, ok := p.Exprs()[k].(columnRef); ok {
			in = append(in, ref.ColumnIndex())
		}
	}
	return in
}
