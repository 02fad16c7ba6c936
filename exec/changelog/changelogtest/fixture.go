// Package changelogtest reads the changelog fixtures under
// testdata/changelog, which every display of a changelog (the shell's
// table mode, the kernel's live table) is tested against, so they show the
// same table for the same changes.
package changelogtest

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/clink-sql/clink/exec"
)

// ReadFixture reads "op key n" lines (rows of a VARCHAR k and a BIGINT n,
// the row kind first), then after a "== table" line the table they leave,
// one "key,n" a row, in display order. Lines starting with # are comments.
func ReadFixture(t testing.TB, path string) (changes []exec.Row, want []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	table := false
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(line, "#"):
		case line == "== table":
			table = true
		case table && len(f) == 2:
			want = append(want, f[0]+","+f[1])
		case !table && len(f) == 3:
			n, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
			changes = append(changes, exec.Row{f[0], f[1], n})
		default:
			t.Fatalf("%s: cannot read %q", path, line)
		}
	}
	return changes, want
}
