package engine

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// keyWriter records the upsert key the engine gives, then stops the query
// at its first call.
type keyWriter struct {
	key []int
	set bool
}

var errStopAtColumns = errors.New("stop at columns")

func (w *keyWriter) ResultKey(cols []int) { w.key, w.set = cols, true }
func (w *keyWriter) Columns(*arrow.Schema, bool) error {
	return errStopAtColumns
}
func (w *keyWriter) Batch(*exec.Batch) error { return exec.ErrStop }

// An updating GROUP BY tells a keyed writer its keys as result columns (the
// row kind is column 0), so a display finds a change's row by them; a
// result that does not show every key, or is not updating, has none.
func TestUpdatingResultKey(t *testing.T) {
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	for _, st := range []string{
		"CREATE TABLE b WITH ('connector' = 'nexmark', 'table' = 'bid')",
		"SET 'execution.runtime-mode' = 'streaming'",
	} {
		mustExec(t, s, st)
	}
	for _, c := range []struct {
		q    string
		want []int
	}{
		{"SELECT channel, COUNT(*) AS n FROM b GROUP BY channel", []int{1}},
		{"SELECT COUNT(*) AS n, channel FROM b GROUP BY channel HAVING COUNT(*) > 2", []int{2}},
		{"SELECT auction, MAX(price), bidder FROM b GROUP BY bidder, auction", []int{3, 1}},
		{"SELECT COUNT(*) AS n FROM b GROUP BY channel", nil},
		{"SELECT auction, price FROM b", nil},
	} {
		w := &keyWriter{}
		_, err := s.Execute(context.Background(), c.q, w, ExecOptions{})
		if !errors.Is(err, errStopAtColumns) {
			t.Fatalf("%s: %v", c.q, err)
		}
		if !slices.Equal(w.key, c.want) || w.set != (c.want != nil) {
			t.Errorf("%s: key %v (given: %v), want %v", c.q, w.key, w.set, c.want)
		}
	}
}
