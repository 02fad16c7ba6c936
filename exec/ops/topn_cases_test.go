package ops

import (
	"fmt"
	"math"
	"testing"

	"github.com/clink-sql/clink/exec"
)

// LIMIT MaxInt64 OFFSET 1: limit+offset must not overflow past the bound
// on what a top-n keeps.
func TestUpdatingTopNLimitOverflow(t *testing.T) {
	op := NewUpdatingTopN([]SortKey{{Col: 2}}, math.MaxInt64, 1, topNOut)
	defer op.Close()
	b := exec.NewRowBatch(SampleSchema, []exec.Row{{int64(1), "s", int64(1), 0.0, nil}, {int64(2), "s", int64(2), 0.0, nil}})
	defer b.Release()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	if _, err := exec.Dispatch(t.Context(), op, true, 0, b, &capture{}); err == nil {
		t.Fatal("LIMIT 2^63-1 OFFSET 1 ran; want an error naming the bound")
	}
}

// -0.0 and 0.0 are DeepEqual, but not the same row: a -D must repeat, bit
// for bit, the row emitted before.
func TestUpdatingTopNRetractsTheRowEmitted(t *testing.T) {
	op := NewUpdatingTopN([]SortKey{{Col: 2, Desc: true, NullsFirst: true}}, 1, 1, topNOut)
	defer op.Close()
	negz := math.Copysign(0, -1)
	var emitted []string
	feed := func(rows ...exec.Row) {
		c := &capture{}
		b := exec.NewRowBatch(SampleSchema, rows)
		if _, err := exec.Dispatch(t.Context(), op, true, 0, b, c); err != nil {
			t.Fatal(err)
		}
		b.Release()
		got, _ := c.rows()
		for _, r := range got {
			emitted = append(emitted, fmt.Sprint(r[5], r[3]))
		}
	}
	feed(exec.Row{int64(1), "s", int64(5), 0.0, nil}, exec.Row{int64(1), "s", int64(5), negz, nil})
	feed(exec.Row{int64(2), "s", int64(9), 1.0, nil})
	feed(exec.Row{int64(3), "s", int64(7), 1.0, nil})
	live := map[string]int{} // fmt prints -0 and 0 apart
	for _, e := range emitted {
		switch e[:2] {
		case OpInsert:
			live[e[2:]]++
		case OpDelete:
			if live[e[2:]] == 0 {
				t.Fatalf("changelog %q: %s retracts a row never emitted", emitted, e)
			}
			live[e[2:]]--
		}
	}
}
