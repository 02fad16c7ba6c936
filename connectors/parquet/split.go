package parquet

// MaxSplits makes a Parquet table a connectors.SplitTable: parallel scans
// share its row groups round-robin (row group i goes to split i mod n), so
// a table splits into at most as many parts as it has row groups.
func (t *Table) MaxSplits() int { return t.RowGroups() }
