package parquet

// MaxSplits makes a Parquet table a connectors.SplitTable. The parts of a
// split scan share a queue of row ranges (morsel.go): a row group counts
// for as many parts as it has MorselRows-sized ranges, at least one. (A
// split scan without a connectors.Share deals whole row groups
// round-robin instead: row group i goes to part i mod n.)
func (t *Table) MaxSplits() int {
	n := 0
	for _, fi := range t.files {
		for _, rg := range fi.meta.RowGroups {
			n += int(max(1, rg.NumRows/MorselRows))
		}
	}
	return n
}
