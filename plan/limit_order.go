package plan

// limitScans finds the bounded scans whose rows reach a LIMIT without an
// ORDER BY through only row-preserving, order-keeping operators (Project,
// Filter). Such a query returns the first rows in file order on every run,
// as DuckDB's does: the scan runs as one subtask reading its files and row
// groups in order, instead of parallel subtasks whose batches race to the
// limit. The price is the scan's parallelism, which a LIMIT rarely needs:
// it stops the scan after its first rows.
func limitScans(root Node) map[*Scan]bool {
	var out map[*Scan]bool
	var walk func(n Node)
	walk = func(n Node) {
		if l, ok := n.(*Limit); ok {
			if s := orderKeepingScan(l.Input); s != nil && s.Table.Bounded() {
				if out == nil {
					out = map[*Scan]bool{}
				}
				out[s] = true
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(root)
	return out
}

// orderKeepingScan is the scan under n when only Projects and Filters lie
// between them.
func orderKeepingScan(n Node) *Scan {
	for {
		switch x := n.(type) {
		case *Project:
			n = x.Input
		case *Filter:
			n = x.Input
		case *Scan:
			return x
		default:
			return nil
		}
	}
}
