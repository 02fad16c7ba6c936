package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// The top-n under the harness: batch sizes, NULLs, columnar and row input,
// against the stable reference sort's first rows (ties: the earlier row).
func TestTopN(t *testing.T) {
	for _, tc := range []struct {
		keys  []SortKey
		limit int64
	}{
		{[]SortKey{{Col: 2, Desc: true, NullsFirst: true}, {Col: 0}}, 7},
		{[]SortKey{{Col: 1, NullsFirst: true}, {Col: 3, Desc: true}}, 0},
		{[]SortKey{{Col: 3}}, 200}, // more than the input
		{[]SortKey{{Col: 4, Desc: true}}, 1},
		{[]SortKey{{Col: 1}, {Col: 2}}, 25},                               // a string first key
		{[]SortKey{{Col: 0, NullsFirst: true}, {Col: 1, Desc: true}}, 30}, // ties on k
	} {
		runCase(t, opCase{
			name:    fmt.Sprintf("%v/limit=%d", tc.keys, tc.limit),
			newOp:   func(mem memory.Allocator) exec.Operator { return NewTopN(tc.keys, tc.limit, mem) },
			inputs:  sampleInput(120),
			ordered: true,
			want:    func(ins []input) []exec.Row { return refSort(ins[0].rows, tc.keys, tc.limit) },
		})
	}
}

// descendingRows are rows whose k falls: under ORDER BY k every batch
// beats what the top-n holds, so it keeps rows of every batch.
func descendingRows(n int) []exec.Row {
	rows := sampleRows(n, true)
	for i, r := range rows {
		r[0] = int64(n - i)
	}
	return rows
}

// A top-n fed rows that keep beating it holds a bounded number of records
// (whole ones when it keeps most of their rows, copies of the few it keeps
// otherwise, compacted into one past maxHeldRecs), and still answers
// right.
func TestTopNHoldsBoundedRecords(t *testing.T) {
	keys := []SortKey{{Col: 0}}
	for _, limit := range []int64{10, 2000} {
		for _, size := range []int{1, 3, 40, 1024} {
			for _, columnar := range []bool{false, true} {
				t.Run(fmt.Sprintf("limit=%d/size=%d/columnar=%v", limit, size, columnar), func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					rows := descendingRows(6000)
					top := NewTopN(keys, limit, mem)
					defer top.Close()
					out := &capture{}
					batches := makeBatches(t, mem, input{SampleSchema, rows}, size, columnar)
					for _, b := range batches {
						if _, err := exec.Dispatch(t.Context(), top, true, 0, b, out); err != nil {
							t.Fatal(err)
						}
						if len(top.recs) > maxHeldRecs || top.recRows > top.compactAt()+size {
							t.Fatalf("holds %d records, %d rows", len(top.recs), top.recRows)
						}
						if len(top.rows) > top.compactAt()+size {
							t.Fatalf("holds %d rows", len(top.rows))
						}
						b.Release()
					}
					if err := top.Finish(t.Context(), 0, out); err != nil {
						t.Fatal(err)
					}
					got, col := out.rows()
					if want := refSort(rows, keys, limit); !rowsEqual(got, want) {
						t.Errorf("got %v\nwant %v", trunc(got), trunc(want))
					}
					if columnar && col == 0 {
						t.Error("columnar input, no columnar output")
					}
				})
			}
		}
	}
}

// The two-stage plan: a partial top-n per subtask over its share of the
// batches and a final one over their results give the single instance's
// answer, at parallelism 1 to 4, for LIMIT n OFFSET k (n+k kept, the
// first k skipped). The last key is unique, so the answer is one.
func TestTopNPartialFinal(t *testing.T) {
	rows := sampleRows(3000, true)
	for i, r := range rows {
		r[2] = int64(i) // unique
	}
	for _, keys := range [][]SortKey{
		{{Col: 1, Desc: true}, {Col: 3, NullsFirst: true}, {Col: 2}},
		{{Col: 0, NullsFirst: true}, {Col: 2, Desc: true}},
	} {
		for _, lim := range [][2]int64{{5, 0}, {10, 1000}, {0, 3}, {4000, 0}} {
			want := refSort(rows, keys, lim[0]+lim[1])
			want = want[min(int(lim[1]), len(want)):]
			for p := 1; p <= 4; p++ {
				for _, columnar := range []bool{false, true} {
					name := fmt.Sprintf("%v/limit=%d/offset=%d/p=%d/columnar=%v", keys, lim[0], lim[1], p, columnar)
					t.Run(name, func(t *testing.T) {
						mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
						defer mem.AssertSize(t, 0)
						got := runPartialFinal(t, mem, keys, lim[0]+lim[1], rows, p, columnar)
						got = got[min(int(lim[1]), len(got)):]
						if !rowsEqual(got, want) {
							t.Errorf("got %d rows %v\nwant %d rows %v", len(got), trunc(got), len(want), trunc(want))
						}
					})
				}
			}
		}
	}
}

// runPartialFinal deals the batches of rows to p partial top-ns in turn,
// feeds their results to a final one and returns its rows.
func runPartialFinal(t *testing.T, mem memory.Allocator, keys []SortKey, limit int64, rows []exec.Row, p int, columnar bool) []exec.Row {
	t.Helper()
	final := NewTopN(keys, limit, mem)
	defer final.Close()
	partials := make([]*TopN, p)
	for i := range partials {
		partials[i] = NewTopN(keys, limit, mem)
		defer partials[i].Close()
	}
	mid := make([]*capture, p)
	for i, b := range makeBatches(t, mem, input{SampleSchema, rows}, 256, columnar) {
		if mid[i%p] == nil {
			mid[i%p] = &capture{}
		}
		if _, err := exec.Dispatch(t.Context(), partials[i%p], true, 0, b, mid[i%p]); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	out := &capture{}
	for i, part := range partials {
		c := &capture{}
		if err := part.Finish(t.Context(), 0, c); err != nil {
			t.Fatal(err)
		}
		if int64(len(c.batches)) > 0 && int64(c.batches[0].Len()) > limit {
			t.Errorf("partial %d emitted %d rows", i, c.batches[0].Len())
		}
		for _, b := range c.batches {
			if _, err := exec.Dispatch(t.Context(), final, true, 0, b, out); err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
	}
	if err := final.Finish(t.Context(), 0, out); err != nil {
		t.Fatal(err)
	}
	got, _ := out.rows()
	return got
}

// intervalSchema has a key type without a normalised form.
var intervalSchema = arrow.NewSchema([]arrow.Field{
	{Name: "iv", Type: arrow.FixedWidthTypes.MonthDayNanoInterval, Nullable: true},
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// Keys without a normalised form sort and rank by the reference
// comparator: the sort on its typed comparators (columnar), the top-n on
// its row path.
func TestSortFallbackComparator(t *testing.T) {
	var rows []exec.Row
	for i := range 500 {
		var v any = arrow.MonthDayNanoInterval{Months: int32(i % 7), Days: int32(i % 5), Nanoseconds: int64(i % 3)}
		if i%11 == 0 {
			v = nil
		}
		rows = append(rows, exec.Row{v, int64(i)})
	}
	keys := []SortKey{{Col: 0, Desc: true}}
	want := referenceOrder(rows, keys)
	for _, columnar := range []bool{false, true} {
		for _, limit := range []int64{-1, 0, 9, 600} {
			t.Run(fmt.Sprintf("columnar=%v/limit=%d", columnar, limit), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				var op exec.Operator = NewSort(keys, mem)
				w := want
				if limit >= 0 {
					op = NewTopN(keys, limit, mem)
					w = want[:min(int(limit), len(want))]
				}
				defer op.Close()
				out := &capture{}
				for _, b := range makeBatches(t, mem, input{intervalSchema, rows}, 64, columnar) {
					if _, err := exec.Dispatch(t.Context(), op, true, 0, b, out); err != nil {
						t.Fatal(err)
					}
					b.Release()
				}
				if err := op.Finish(t.Context(), 0, out); err != nil {
					t.Fatal(err)
				}
				got, _ := out.rows()
				if g := ids(got); !slices.Equal(g, w) {
					t.Errorf("got %v\nwant %v", trunc64(g), trunc64(w))
				}
			})
		}
	}
}

// Row and columnar batches into one top-n give one columnar answer; the
// watermark waits for it.
func TestTopNMixedInputAndWatermark(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := sampleRows(400, true)
	for i, r := range rows {
		r[2] = int64(i)
	}
	keys := []SortKey{{Col: 1, Desc: true}, {Col: 3}, {Col: 2}}
	top := NewTopN(keys, 30, mem)
	defer top.Close()
	out := &capture{}
	for i, part := range [][]exec.Row{rows[:100], rows[100:250], rows[250:]} {
		b := makeBatches(t, mem, input{SampleSchema, part}, len(part), i != 1)[0]
		if _, err := exec.Dispatch(t.Context(), top, true, 0, b, out); err != nil {
			t.Fatal(err)
		}
		b.Release()
		if err := top.OnWatermark(t.Context(), int64(i), out); err != nil {
			t.Fatal(err)
		}
	}
	if len(out.batches) != 0 || len(out.wms) != 0 {
		t.Fatalf("emitted before the end: %d batches, watermarks %v", len(out.batches), out.wms)
	}
	if err := top.Finish(t.Context(), 0, out); err != nil {
		t.Fatal(err)
	}
	if len(out.wms) != 1 || out.wms[0] != 2 {
		t.Errorf("watermarks %v, want [2] after the rows", out.wms)
	}
	got, col := out.rows()
	if want := refSort(rows, keys, 30); !rowsEqual(got, want) {
		t.Errorf("got %v\nwant %v", trunc(got), trunc(want))
	}
	if col != 1 {
		t.Errorf("%d columnar output batches, want 1", col)
	}
}

// The sort operator over every key type, records in (dictionary and LARGE
// strings gathered from one concatenation, the rest straight from the
// records), gives the reference comparator's stable order, row for row.
func TestSortOperatorKeyTypes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := randomKeyRows(rng, 20000)
	for trial := 0; trial < 6; trial++ {
		keys := randomSortKeys(rng)
		want := slices.Clone(rows)
		slices.SortStableFunc(want, rowComparator(keys))
		s := NewSort(keys, mem)
		out := &capture{}
		for start := 0; start < len(rows); start += 3000 {
			b := exec.NewColumnarBatch(keyTypesRecord(t, mem, rows[start:min(start+3000, len(rows))]))
			if _, err := exec.Dispatch(t.Context(), s, true, 0, b, out); err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		if err := s.Finish(t.Context(), 0, out); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if len(out.batches) != (len(rows)+emitChunk-1)/emitChunk {
			t.Errorf("%d output batches for %d rows", len(out.batches), len(rows))
		}
		got, _ := out.rows()
		if !slices.Equal(ids(got), ids(want)) {
			t.Fatalf("keys %v: got %v\nwant %v", keys, trunc64(ids(got)), trunc64(ids(want)))
		}
		// The gathered values are the rows' (printed: NaN is not DeepEqual
		// to itself).
		for i := range got {
			if g, w := fmt.Sprint(got[i]), fmt.Sprint(want[i]); g != w {
				t.Fatalf("row %d: got %s want %s", i, g, w)
			}
		}
	}
}
