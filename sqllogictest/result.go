package sqllogictest

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// DefaultHashThreshold is the reference runner's: a result of more than 8
// values is written as its hash until a file says otherwise.
const DefaultHashThreshold = 8

// sortValues orders a result's rendered values as mode says, in place:
// rowsort sorts rows of ncols values comparing value by value with strcmp
// (the reference's rowCompare; "9" sorts after "10"), valuesort sorts every
// value on its own. A value count that is not a multiple of ncols is left
// as it is (the comparison then fails anyway).
func sortValues(values []string, ncols int, mode SortMode) {
	switch mode {
	case ValueSort:
		slices.Sort(values)
	case RowSort:
		if ncols <= 0 || len(values)%ncols != 0 {
			return
		}
		rows := make([][]string, len(values)/ncols)
		for i := range rows {
			rows[i] = values[i*ncols : (i+1)*ncols : (i+1)*ncols]
		}
		slices.SortStableFunc(rows, slices.Compare[[]string])
		sorted := make([]string, 0, len(values))
		for _, r := range rows {
			sorted = append(sorted, r...)
		}
		copy(values, sorted)
	}
}

// hashValues is the reference's result hash: the MD5 of every value
// followed by a newline, in hex.
func hashValues(values []string) string {
	h := md5.New()
	for _, v := range values {
		h.Write([]byte(v))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// hashLine is how a hashed result is written: "N values hashing to <md5>".
func hashLine(values []string) string {
	return fmt.Sprintf("%d values hashing to %s", len(values), hashValues(values))
}

var hashLineRe = regexp.MustCompile(`^\s*(\d+) values hashing to ([0-9a-f]{32})\s*$`)

// expectedHash returns the expected hash line of a record whose result is
// written hashed.
func expectedHash(expected []string) (string, bool) {
	if len(expected) != 1 {
		return "", false
	}
	m := hashLineRe.FindStringSubmatch(expected[0])
	if m == nil {
		return "", false
	}
	return m[1] + " values hashing to " + m[2], true
}

// expectedReadings are the ways the lines after ---- can be read as
// values: one value per line (the reference's form), and, for several
// columns, a row per line with the values separated by tabs (when the
// line has one) or runs of white space (as DuckDB's and other runners'
// files write them). A text value with spaces inside is only read right
// the first way; a row of several values only the second.
func expectedReadings(lines []string, ncols int) [][]string {
	out := [][]string{lines}
	if ncols < 2 {
		return out
	}
	var split []string
	for _, l := range lines {
		var f []string
		if strings.Contains(l, "\t") {
			f = strings.Split(l, "\t")
		} else {
			f = strings.Fields(l)
		}
		if len(f) != ncols {
			return out
		}
		split = append(split, f...)
	}
	if len(split) != len(lines) {
		out = append(out, split)
	}
	return out
}

// outcome of comparing one query's result with its record.
type comparison struct {
	ok     bool
	hash   string // the result's hash line (computed when the record or a label needs it)
	detail string // why not ok
}

// compareResult checks got, a query's rendered values in the engine's
// order, against r's expectation. got is sorted in place as r.Sort says.
// threshold is the hash threshold in force: a wrong result larger than it
// is shown as its hash, as the reference writes it.
func compareResult(r *Record, got []string, threshold int) comparison {
	ncols := len(r.Types)
	sortValues(got, ncols, r.Sort)
	c := comparison{hash: hashLine(got)}
	if !r.HasResult {
		c.ok = true
		return c
	}
	if want, ok := expectedHash(r.Expected); ok {
		if c.hash == want {
			c.ok = true
			return c
		}
		c.detail = "wrong result hash\n" + describe(r.Expected, got, threshold)
		return c
	}
	for _, want := range expectedReadings(r.Expected, ncols) {
		want = slices.Clone(want)
		sortValues(want, ncols, r.Sort)
		if slices.Equal(want, got) {
			c.ok = true
			return c
		}
	}
	c.detail = "wrong result\n" + describe(r.Expected, got, threshold)
	return c
}

// labelHash is the hash a skipped labelled query contributes to its
// label, from its expected result (the reference hashes the expected
// lines; a file that writes a row per line is read as rows here).
func labelHash(r *Record) (string, bool) {
	if !r.HasResult || len(r.Expected) == 0 {
		return "", false
	}
	if h, ok := expectedHash(r.Expected); ok {
		return h, true
	}
	readings := expectedReadings(r.Expected, len(r.Types))
	vals := slices.Clone(readings[len(readings)-1])
	sortValues(vals, len(r.Types), r.Sort)
	return hashLine(vals), true
}

// maxShown is how many result lines a failure shows of each side.
const maxShown = 40

// describe shows the expected lines and the values got, one per line as
// the file writes them; a result over the threshold also as its hash.
func describe(expected, got []string, threshold int) string {
	var b strings.Builder
	b.WriteString("expected:\n")
	writeLines(&b, expected)
	fmt.Fprintf(&b, "got (%d values):\n", len(got))
	if threshold > 0 && len(got) > threshold {
		b.WriteString("    " + hashLine(got) + "\n")
	}
	writeLines(&b, got)
	return strings.TrimSuffix(b.String(), "\n")
}

func writeLines(b *strings.Builder, lines []string) {
	for i, l := range lines {
		if i == maxShown {
			fmt.Fprintf(b, "    ... (%d more)\n", len(lines)-maxShown)
			return
		}
		b.WriteString("    " + l + "\n")
	}
}
