package main

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// compareResults reports whether two results hold the same rows, in any
// order (none of the queries has an ORDER BY). Cells compare as strings,
// and where both parse as numbers, numerically with a relative tolerance,
// so that "1e+06" and "1000000", or a float summed in another order, agree.
// The returned error describes the first difference.
func compareResults(clink, duck [][]string) error {
	if len(clink) != len(duck) {
		return fmt.Errorf("clink returned %d rows, DuckDB %d%s", len(clink), len(duck), firstRows(clink, duck))
	}
	a, b := sortedRows(clink), sortedRows(duck)
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return fmt.Errorf("row %d: clink has %d columns, DuckDB %d", i+1, len(a[i]), len(b[i]))
		}
		for c := range a[i] {
			if !sameCell(a[i][c], b[i][c]) {
				return fmt.Errorf("row %d (sorted), column %d: clink %q, DuckDB %q\n  clink:  %s\n  DuckDB: %s",
					i+1, c+1, a[i][c], b[i][c], strings.Join(a[i], " | "), strings.Join(b[i], " | "))
			}
		}
	}
	return nil
}

func firstRows(a, b [][]string) string {
	show := func(rows [][]string) string {
		if len(rows) == 0 {
			return "(none)"
		}
		return strings.Join(rows[0], " | ")
	}
	return fmt.Sprintf("\n  clink first row:  %s\n  DuckDB first row: %s", show(a), show(b))
}

// sortedRows sorts a copy of rows by their cells, numbers numerically so
// that two renderings of one number sort to the same place.
func sortedRows(rows [][]string) [][]string {
	out := append([][]string(nil), rows...)
	sort.SliceStable(out, func(i, j int) bool { return lessRow(out[i], out[j]) })
	return out
}

func lessRow(a, b []string) bool {
	for c := 0; c < len(a) && c < len(b); c++ {
		if sameCell(a[c], b[c]) {
			continue
		}
		fa, errA := strconv.ParseFloat(a[c], 64)
		fb, errB := strconv.ParseFloat(b[c], 64)
		if errA == nil && errB == nil {
			return fa < fb
		}
		return a[c] < b[c]
	}
	return len(a) < len(b)
}

// sameCell compares two rendered cells. Integers must match exactly (a
// float tolerance would hide an off-by-one in a large sum); other numbers
// agree within a relative 1e-9 (floating-point sums in another order), or
// -- when both are written with a fractional part -- within half a unit of
// the last place of the less precise one: a DECIMAL rounded to its scale
// (AVG as DECIMAL(.., 6) on one side, as DOUBLE on the other) is the same
// answer. Anything else compares as text.
func sameCell(a, b string) bool {
	if a == b {
		return true
	}
	if ia, ok := new(big.Int).SetString(a, 10); ok {
		if ib, ok := new(big.Int).SetString(b, 10); ok {
			return ia.Cmp(ib) == 0
		}
	}
	fa, errA := strconv.ParseFloat(a, 64)
	fb, errB := strconv.ParseFloat(b, 64)
	if errA != nil || errB != nil {
		return false
	}
	if fa == fb {
		return true
	}
	diff := math.Abs(fa - fb)
	scale := math.Max(math.Abs(fa), math.Abs(fb))
	if diff <= 1e-9*scale || diff <= 1e-12 {
		return true
	}
	da, db := fractionDigits(a), fractionDigits(b)
	if da > 0 && db > 0 {
		return diff <= 0.5*math.Pow10(-min(da, db))*(1+1e-9)
	}
	return false
}

// fractionDigits is the number of digits after the decimal point of a
// plainly written number (0 for an integer or exponent notation).
func fractionDigits(s string) int {
	if strings.ContainsAny(s, "eE") {
		return 0
	}
	i := strings.IndexByte(s, '.')
	if i < 0 {
		return 0
	}
	return len(s) - i - 1
}
