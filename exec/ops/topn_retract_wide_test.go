package ops

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// wideChangelog is a GROUP BY changelog over many groups (more than the
// ranked prefix's reserve), whose output rows hide the group key, so
// many groups show identical rows: copies inside and outside the prefix.
func wideChangelog(r *rand.Rand, groups, n, vals int) []exec.Row {
	cur := map[int]exec.Row{}
	var out []exec.Row
	for len(out) < n {
		g := r.Intn(groups)
		var v any = int64(r.Intn(vals))
		if r.Intn(15) == 0 {
			v = nil
		}
		row := exec.Row{int64(g % 3), v}
		old, ok := cur[g]
		drain := len(out) > n/3 && r.Intn(4) > 0 // later: mostly removals
		switch {
		case !ok && drain:
			continue
		case !ok:
			out = append(out, append(exec.Row{OpInsert}, row...))
			cur[g] = row
		case r.Intn(3) == 0 || drain && r.Intn(2) == 0:
			out = append(out, append(exec.Row{OpDelete}, old...))
			delete(cur, g)
		default:
			out = append(out, append(exec.Row{OpUpdateBefore}, old...), append(exec.Row{OpUpdateAfter}, row...))
			cur[g] = row
		}
	}
	return out
}

// With more held rows than the prefix (n+offset+64),
// after every batch the applied changelog is the reference window, and
// t.top is exactly the best len(t.top) held copies.
func TestRetractingTopNWide(t *testing.T) {
	for _, keys := range [][]SortKey{
		{{Col: 1, Desc: true, NullsFirst: true}},
		{{Col: 1}, {Col: 0, Desc: true}},
		{{Col: 0}},
	} {
		for _, lim := range [][2]int{{1, 0}, {3, 0}, {5, 7}, {2, 100}, {40, 0}} {
			for _, size := range []int{3, 40} {
				for seed := int64(1); seed <= 2; seed++ {
					for _, shape := range [][2]int{{150, 40}, {400, 5}} {
						name := fmt.Sprintf("keys=%v/n=%d/off=%d/size=%d/seed=%d/groups=%d", keys, lim[0], lim[1], size, seed, shape[0])
						t.Run(name, func(t *testing.T) {
							mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
							defer mem.AssertSize(t, 0)
							rows := wideChangelog(rand.New(rand.NewSource(seed)), shape[0], 1200, shape[1])
							op := NewRetractingTopN(keys, int64(lim[0]), int64(lim[1]), retractOut)
							defer op.Close()
							applied, model := shown{}, &incRef{}
							for bi, b := range makeBatches(t, mem, input{retractIn, rows}, size, false) {
								seen := rows[:min(len(rows), (bi+1)*size)]
								out := &capture{}
								if _, err := exec.Dispatch(t.Context(), op, true, 0, b, out); err != nil {
									t.Fatal(err)
								}
								b.Release()
								got, _ := out.rows()
								applied.apply(t, got)
								now := applied.rows()
								ref := model.window(b2rows(rows, bi, size), keys, lim[0], lim[1])
								if strings.Join(now, "\n") != strings.Join(ref, "\n") {
									t.Fatalf("after %d changes: applied\n%s\nwant\n%s", len(seen), strings.Join(now, "\n"), strings.Join(ref, "\n"))
								}
								checkPrefix(t, op, len(seen))
							}
						})
					}
				}
			}
		}
	}
}

// checkPrefix: t.top is the best len(t.top) held copies in (keys, seq)
// order, and at least n+offset long when that many are held.
func checkPrefix(t *testing.T, op *UpdatingTopN, seen int) {
	t.Helper()
	var all []topEntry
	held := 0
	for _, e := range op.pool {
		for _, id := range e.ids {
			all = append(all, topEntry{row: e.row, seq: id})
			held++
		}
	}
	if held != op.held {
		t.Fatalf("after %d: held %d, pool has %d copies", seen, op.held, held)
	}
	slices.SortFunc(all, func(a, b topEntry) int {
		if op.rankLess(a, b) {
			return -1
		}
		if op.rankLess(b, a) {
			return 1
		}
		return 0
	})
	if len(op.top) > len(all) {
		t.Fatalf("after %d: prefix %d longer than held %d", seen, len(op.top), len(all))
	}
	for i, e := range op.top {
		if e.seq != all[i].seq {
			t.Fatalf("after %d: prefix[%d] = %v#%d, want %v#%d", seen, i, e.row, e.seq, all[i].row, all[i].seq)
		}
	}
	if c := op.n + op.offset; len(op.top) < min(c, held) {
		t.Fatalf("after %d: prefix %d short of %d (held %d)", seen, len(op.top), c, held)
	}
}

func b2rows(rows []exec.Row, bi, size int) []exec.Row {
	return rows[bi*size : min(len(rows), (bi+1)*size)]
}

// the pool's key normalises -0.0 to 0.0, so two groups whose rows
// differ only by the sign of a zero share one pooled row (the first one's)
// and the top-n shows -0 for a group whose value is 0.
func TestRetractingTopNSignedZero(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in := arrow.NewSchema([]arrow.Field{{Name: "op", Type: arrow.BinaryTypes.String}, {Name: "v", Type: arrow.PrimitiveTypes.Float64}}, nil)
	outS := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Float64}, {Name: "op", Type: arrow.BinaryTypes.String}}, nil)
	op := NewRetractingTopN([]SortKey{{Col: 0}}, 5, 0, outS)
	defer op.Close()
	negZero := math.Copysign(0, -1)
	rows := []exec.Row{{OpInsert, negZero}, {OpInsert, 0.0}, {OpDelete, negZero}}
	applied := map[string]int{}
	for _, b := range makeBatches(t, mem, input{in, rows}, 1, false) {
		out := &capture{}
		if _, err := exec.Dispatch(t.Context(), op, true, 0, b, out); err != nil {
			t.Fatal(err)
		}
		b.Release()
		got, _ := out.rows()
		for _, r := range got {
			k := fmt.Sprintf("%v", r[0])
			if r[1] == OpInsert {
				applied[k]++
			} else {
				applied[k]--
			}
		}
	}
	if applied["0"] != 1 || applied["-0"] != 0 {
		t.Fatalf("applied %v, want the one held row 0", applied)
	}
}
