package parquet

// ColumnRange is the smallest and largest value of column col over every
// row group of the table, from the footers' statistics (row form of the
// column's type), for the planner's estimates. ok is false when a chunk
// has no usable statistics.
func (t *Table) ColumnRange(col int) (lo, hi any, ok bool) {
	if col < 0 || col >= t.schema.NumFields() {
		return nil, nil, false
	}
	typ := t.schema.Field(col).Type
	for _, f := range t.files {
		if col >= len(f.cols) {
			return nil, nil, false
		}
		b := &f.cols[col]
		for i := range f.meta.RowGroups {
			rg := &f.meta.RowGroups[i]
			if b.leaf >= len(rg.Columns) {
				return nil, nil, false
			}
			st := readStats(b, &rg.Columns[b.leaf].MetaData, rg.NumRows, typ)
			if st.allNull {
				continue
			}
			if !st.hasMinMax {
				return nil, nil, false
			}
			if !ok {
				lo, hi, ok = st.min, st.max, true
				continue
			}
			c, cok := compare(st.min, lo)
			if !cok {
				return nil, nil, false
			}
			if c < 0 {
				lo = st.min
			}
			if c, cok = compare(st.max, hi); !cok {
				return nil, nil, false
			}
			if c > 0 {
				hi = st.max
			}
		}
	}
	return lo, hi, ok
}

// ColumnRange is the range of column col over the dataset's files as they
// are now (see Table.ColumnRange).
func (d *Dataset) ColumnRange(col int) (lo, hi any, ok bool) {
	t, err := d.Snapshot()
	if err != nil {
		return nil, nil, false
	}
	return t.ColumnRange(col)
}
