package plan

import (
	"fmt"
	"testing"
)

// over an updating result the scope's first column is the row
// kind, which ORDER BY by position or by name must not reach: ORDER BY 2
// is the second SELECT item (n), and ORDER BY 1 / ORDER BY op (a user
// column named op) the first, not the row kind.
func TestChangelogOrderByPositionAndName(t *testing.T) {
	cat := topNCatalog(t)
	for q, want := range map[string]string{
		"SELECT channel, COUNT(*) AS n FROM u GROUP BY channel ORDER BY 2 DESC LIMIT 3":                   "[{1 true true}]",
		"SELECT channel, COUNT(*) AS n FROM u GROUP BY channel ORDER BY 1 LIMIT 3":                        "[{0 false false}]",
		"SELECT channel AS op, COUNT(*) AS n FROM u GROUP BY channel ORDER BY op LIMIT 3":                 "[{0 false false}]",
		"SELECT * FROM (SELECT channel, COUNT(*) AS n FROM u GROUP BY channel) t ORDER BY 2 DESC LIMIT 3": "[{1 true true}]",
	} {
		t.Run(q, func(t *testing.T) {
			n, err := bindText(cat, q)
			if err != nil {
				t.Fatal(err)
			}
			p, ok := n.(*Project)
			if !ok {
				t.Fatalf("root %T", n)
			}
			top, ok := p.Input.(*UpdatingTopN)
			if !ok {
				t.Fatalf("under the root: %T", p.Input)
			}
			if got := fmt.Sprint(top.Keys); got != want {
				t.Errorf("top-n keys %s, want %s (of %v)", got, want, top.schema)
			}
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("planning panicked: %v", r)
				}
			}()
			planQuery(t, cat, q, BuildOptions{})
		})
	}
}

// a hidden ORDER BY expression over a changelog subquery must not
// rank by the input's row kind (t.op): the top-n would key its held rows
// by it, so a -U never matches its +I.
func TestChangelogOrderByRowKind(t *testing.T) {
	cat := topNCatalog(t)
	for _, q := range []string{
		"SELECT channel, n FROM (SELECT channel, COUNT(*) AS n FROM u GROUP BY channel) t ORDER BY t.op, n DESC LIMIT 3",
		"SELECT channel, n FROM (SELECT channel, COUNT(*) AS n FROM u GROUP BY channel) t ORDER BY op, n DESC LIMIT 3",
	} {
		if _, err := bindText(cat, q); err == nil {
			t.Errorf("%s: bound, want an error (ORDER BY the row kind)", q)
		}
	}
}
