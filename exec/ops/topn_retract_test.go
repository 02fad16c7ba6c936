package ops

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

var (
	retractIn = arrow.NewSchema([]arrow.Field{
		{Name: "op", Type: arrow.BinaryTypes.String},
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	retractOut = arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "op", Type: arrow.BinaryTypes.String},
	}, nil)
)

// groupChangelog is what a streaming GROUP BY k emits as v changes: +I
// for a new group, -U/+U for an update, -D for a group dropped; some rows
// repeat another group's values exactly, some v are NULL, some updates
// keep the value (a -U and +U of identical rows).
func groupChangelog(r *rand.Rand, n int) []exec.Row {
	cur := map[int64]any{}
	var out []exec.Row
	for len(out) < n {
		k := int64(r.Intn(25))
		var v any = int64(r.Intn(12))
		if r.Intn(9) == 0 {
			v = nil
		}
		old, ok := cur[k]
		switch {
		case !ok:
			out = append(out, exec.Row{OpInsert, k % 20, v})
			cur[k] = v
		case r.Intn(7) == 0:
			out = append(out, exec.Row{OpDelete, k % 20, old})
			delete(cur, k)
		default:
			if r.Intn(5) == 0 {
				v = old
			}
			out = append(out, exec.Row{OpUpdateBefore, k % 20, old}, exec.Row{OpUpdateAfter, k % 20, v})
			cur[k] = v
		}
	}
	return out
}

// incRef is the reference model of a top-n over a changelog: it applies
// each batch to a multiset, each copy ranked by its arrival among ties (a
// retraction takes the latest identical copy), and returns ranks
// offset+1..offset+n as sorted printed rows.
type incRef struct {
	held []refCopy
	id   int
}

type refCopy struct {
	row exec.Row
	key string
	id  int
}

func (r *incRef) window(batch []exec.Row, keys []SortKey, n, offset int) []string {
	for _, x := range batch {
		data := x[1:]
		key := fmt.Sprint(data)
		switch x[0] {
		case OpInsert, OpUpdateAfter:
			r.id++
			r.held = append(r.held, refCopy{data, key, r.id})
		default:
			for j := len(r.held) - 1; j >= 0; j-- {
				if r.held[j].key == key {
					r.held = slices.Delete(r.held, j, j+1)
					break
				}
			}
		}
	}
	cmp := rowComparator(keys)
	h := slices.Clone(r.held)
	slices.SortStableFunc(h, func(a, b refCopy) int {
		if c := cmp(a.row, b.row); c != 0 {
			return c
		}
		return a.id - b.id
	})
	var out []string
	for i := offset; i < min(len(h), offset+n); i++ {
		out = append(out, h[i].key)
	}
	sort.Strings(out)
	return out
}

// A top-n over a changelog: after every batch the changes emitted so far,
// applied, are the reference window over the rows the input holds, with
// as few changes as the window moved by; a retraction of a visible row
// moves the next best up.
func TestRetractingTopNChangelog(t *testing.T) {
	for _, keys := range [][]SortKey{
		{{Col: 1, Desc: true, NullsFirst: true}}, // ORDER BY v DESC
		{{Col: 1}, {Col: 0, Desc: true}},         // v, k DESC
		{{Col: 0}},                               // k
	} {
		for _, lim := range [][2]int{{3, 0}, {1, 0}, {5, 2}, {0, 0}, {50, 0}} {
			for _, size := range []int{1, 5, 64} {
				for seed := int64(1); seed <= 2; seed++ {
					name := fmt.Sprintf("keys=%v/n=%d/offset=%d/size=%d/seed=%d", keys, lim[0], lim[1], size, seed)
					t.Run(name, func(t *testing.T) {
						mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
						defer mem.AssertSize(t, 0)
						rows := groupChangelog(rand.New(rand.NewSource(seed)), 300)
						op := NewRetractingTopN(keys, int64(lim[0]), int64(lim[1]), retractOut)
						defer op.Close()
						applied, model := shown{}, &incRef{}
						var prevRef []string
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
							ref := model.window(rows[bi*size:len(seen)], keys, lim[0], lim[1])
							if strings.Join(now, "\n") != strings.Join(ref, "\n") {
								t.Fatalf("after %d changes: applied\n%s\nwant\n%s", len(seen), strings.Join(now, "\n"), strings.Join(ref, "\n"))
							}
							if want := multisetDiff(prevRef, ref); len(got) != want {
								t.Fatalf("after %d changes: %d changes emitted, the window moved by %d: %v", len(seen), len(got), want, got)
							}
							prevRef = ref
						}
					})
				}
			}
		}
	}
}

// Bad input: an unknown row kind, a schema without the row kind.
func TestRetractingTopNErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	op := NewRetractingTopN([]SortKey{{Col: 1}}, 3, 0, retractOut)
	defer op.Close()
	for _, b := range makeBatches(t, mem, input{retractIn, []exec.Row{{"+X", int64(1), int64(2)}}}, 8, false) {
		_, err := exec.Dispatch(t.Context(), op, true, 0, b, &capture{})
		b.Release()
		if err == nil || !strings.Contains(err.Error(), "unknown row kind") {
			t.Fatalf("err = %v, want unknown row kind", err)
		}
	}
	for _, b := range makeBatches(t, mem, input{SampleSchema, sampleRows(3, false)}, 8, false) {
		_, err := exec.Dispatch(t.Context(), op, true, 0, b, &capture{})
		b.Release()
		if err == nil || !strings.Contains(err.Error(), "row kind") {
			t.Fatalf("err = %v, want the input's shape named", err)
		}
	}
}

// Updates of visible groups (a -U, then a +U of a better row) keep the
// ranked prefix's length: the top-n never walks all held rows again after
// the load, and its window is the best of the final counts.
func TestRetractingTopNKeepsPrefix(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const groups = 1000
	op := NewRetractingTopN([]SortKey{{Col: 1, Desc: true}, {Col: 0}}, 10, 0, retractOut)
	defer op.Close()
	count := make([]int64, groups)
	var rows []exec.Row
	for k := range groups {
		rows = append(rows, exec.Row{OpInsert, int64(k), int64(0)})
	}
	r := rand.New(rand.NewSource(7))
	for range 5000 {
		k := r.Intn(groups)
		if r.Intn(3) > 0 {
			k %= 30 // hot groups, often visible
		}
		rows = append(rows, exec.Row{OpUpdateBefore, int64(k), count[k]})
		count[k]++
		rows = append(rows, exec.Row{OpUpdateAfter, int64(k), count[k]})
	}
	applied := shown{}
	for _, b := range makeBatches(t, mem, input{retractIn, rows}, 256, false) {
		out := &capture{}
		if _, err := exec.Dispatch(t.Context(), op, true, 0, b, out); err != nil {
			t.Fatal(err)
		}
		b.Release()
		got, _ := out.rows()
		applied.apply(t, got)
	}
	ks := make([]int, groups)
	for i := range ks {
		ks[i] = i
	}
	sort.SliceStable(ks, func(a, b int) bool { return count[ks[a]] > count[ks[b]] })
	var want []string
	for _, k := range ks[:10] {
		want = append(want, fmt.Sprint(exec.Row{int64(k), count[k]}))
	}
	now := applied.rows()
	sort.Strings(want)
	if strings.Join(now, " ") != strings.Join(want, " ") {
		t.Fatalf("window %v, want %v", now, want)
	}
	if op.rebuilds != 0 {
		t.Errorf("the ranked prefix was rebuilt %d times: updates that improve a row should not need it", op.rebuilds)
	}
}
