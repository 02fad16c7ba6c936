package main

import (
	"fmt"
	"strings"
)

// checkKind says how strongly a result was checked.
type checkKind int

const (
	checkFull      checkKind = iota // every row compared (order and ties as the query defines them)
	checkCountOnly                  // LIMIT without ORDER BY: any rows are a right answer; the count is compared
	checkUnordered                  // ORDER BY on columns not in the result: rows compared as a set, order not checked
)

func (k checkKind) String() string {
	switch k {
	case checkCountOnly:
		return "count only (LIMIT without ORDER BY)"
	case checkUnordered:
		return "as a set (ORDER BY key not in the result)"
	}
	return "full"
}

// compareAnswers checks clink's rows against DuckDB's as the query's
// order spec allows:
//
//   - no ORDER BY: the rows compare as a multiset (cells with
//     sameCell's tolerance); with a LIMIT, any rows are right, so only
//     the count is compared;
//   - ORDER BY on output columns: the ORDER BY key of every row must match
//     row by row (the order is part of the answer), and the rows that tie
//     on the key compare as a multiset within their group, except a group
//     cut by the LIMIT (or by a non-zero OFFSET at the start), where the
//     engines may legitimately keep different rows: there only the keys
//     are compared;
//   - ORDER BY on something not in the result: the rows compare as a
//     multiset (a tie at a LIMIT can then be reported as a mismatch that
//     is not one; the report says the check was "as a set").
func compareAnswers(clink, duck [][]string, spec orderSpec) (checkKind, error) {
	switch {
	case !spec.ordered && spec.limit >= 0:
		if len(clink) != len(duck) {
			return checkCountOnly, fmt.Errorf("clink returned %d rows, DuckDB %d%s", len(clink), len(duck), firstRows(clink, duck))
		}
		return checkCountOnly, nil
	case !spec.ordered:
		return checkFull, compareResults(clink, duck)
	case spec.keys == nil:
		return checkUnordered, compareResults(clink, duck)
	}
	if len(clink) != len(duck) {
		return checkFull, fmt.Errorf("clink returned %d rows, DuckDB %d%s", len(clink), len(duck), firstRows(clink, duck))
	}
	for i := range duck {
		if len(clink[i]) != len(duck[i]) {
			return checkFull, fmt.Errorf("row %d: clink has %d columns, DuckDB %d", i+1, len(clink[i]), len(duck[i]))
		}
		for _, k := range spec.keys {
			if k >= len(duck[i]) || !sameCell(clink[i][k], duck[i][k]) {
				return checkFull, fmt.Errorf("row %d: the ORDER BY key differs (column %d: clink %q, DuckDB %q)\n  clink:  %s\n  DuckDB: %s",
					i+1, k+1, cell(clink[i], k), cell(duck[i], k), strings.Join(clink[i], " | "), strings.Join(duck[i], " | "))
			}
		}
	}
	// Tie groups: runs of equal keys (the keys match row by row, so the
	// groups are the same on both sides).
	cutEnd := spec.limit >= 0 && int64(len(duck)) >= spec.limit
	for start := 0; start < len(duck); {
		end := start + 1
		for end < len(duck) && sameKeys(duck[start], duck[end], spec.keys) {
			end++
		}
		cut := (cutEnd && end == len(duck)) || (spec.offset > 0 && start == 0)
		if !cut && end-start > 1 {
			if err := compareResults(clink[start:end], duck[start:end]); err != nil {
				return checkFull, fmt.Errorf("rows %d-%d (tied on the ORDER BY key): %w", start+1, end, err)
			}
		} else if !cut {
			for c := range duck[start] {
				if !sameCell(clink[start][c], duck[start][c]) {
					return checkFull, fmt.Errorf("row %d, column %d: clink %q, DuckDB %q\n  clink:  %s\n  DuckDB: %s",
						start+1, c+1, clink[start][c], duck[start][c], strings.Join(clink[start], " | "), strings.Join(duck[start], " | "))
				}
			}
		}
		start = end
	}
	return checkFull, nil
}

func sameKeys(a, b []string, keys []int) bool {
	for _, k := range keys {
		if !sameCell(a[k], b[k]) {
			return false
		}
	}
	return true
}

func cell(row []string, k int) string {
	if k < len(row) {
		return row[k]
	}
	return "(none)"
}
