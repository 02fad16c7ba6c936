package parquet

import "github.com/clink-sql/clink/connectors"

// SwapFormat installs f as the filesystem format name for a test and
// returns the function that puts back what was there (a registered format
// such as jsonfile's, or none).
func SwapFormat(name string, f connectors.Factory) (restore func()) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	saved, had := formats[name]
	formats[name] = f
	return func() {
		formatsMu.Lock()
		defer formatsMu.Unlock()
		if had {
			formats[name] = saved
		} else {
			delete(formats, name)
		}
	}
}

// SetRowGroupRows shrinks a dataset's sink row groups for a test.
func (d *Dataset) SetRowGroupRows(n int64) { d.rowGroupRows = n }
