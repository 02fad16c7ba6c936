package ops

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

var topNOut = arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...),
	arrow.Field{Name: "op", Type: arrow.BinaryTypes.String}), nil)

// refWindow is the reference answer: every row so far, stably sorted (ties
// in arrival order), ranks offset+1..offset+n, as a sorted multiset of
// printed rows.
func refWindow(rows []exec.Row, keys []SortKey, n, offset int) []string {
	all := slices.Clone(rows)
	slices.SortStableFunc(all, rowComparator(keys))
	var out []string
	for i := offset; i < min(len(all), offset+n); i++ {
		out = append(out, fmt.Sprint(all[i]))
	}
	sort.Strings(out)
	return out
}

// shown is the multiset of rows a top-n's changes (row kind last: +I or
// -D) have shown so far, by printed row.
type shown map[string]int

// apply applies one batch of changes; a -D of a row not shown fails t.
func (s shown) apply(t *testing.T, changes []exec.Row) {
	t.Helper()
	for _, r := range changes {
		key := fmt.Sprint(r[:len(r)-1])
		switch r[len(r)-1] {
		case OpInsert:
			s[key]++
		case OpDelete:
			if s[key] == 0 {
				t.Fatalf("-D of a row not in the result: %s", key)
			}
			s[key]--
		default:
			t.Fatalf("row kind %v", r[len(r)-1])
		}
	}
}

// rows are the rows shown, sorted.
func (s shown) rows() []string {
	var out []string
	for k, n := range s {
		for range n {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// multisetDiff counts the rows of a missing from b and of b missing from a.
func multisetDiff(a, b []string) int {
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	d := 0
	for _, c := range count {
		d += max(c, -c)
	}
	return d
}

// After every batch, the changelog applied so far is the reference top-n
// of every row so far, and the batch's changes are as few as possible (a
// row that enters and leaves within one batch emits nothing).
func TestUpdatingTopNChangelog(t *testing.T) {
	dups := func(nulls bool) []exec.Row { // many identical rows
		rows := make([]exec.Row, 60)
		for i := range rows {
			rows[i] = exec.Row{int64(i % 3), "x", int64(i * 7 % 5), 0.0, nil}
			if nulls && i%4 == 1 {
				rows[i][2] = nil
			}
		}
		return rows
	}
	type tc struct {
		name      string
		keys      []SortKey
		n, offset int
		rows      func(nulls bool) []exec.Row
	}
	var cases []tc
	for _, keys := range [][]SortKey{
		{{Col: 2, Desc: true, NullsFirst: true}},           // ORDER BY v DESC
		{{Col: 2}},                                         // ORDER BY v (NULLS LAST)
		{{Col: 1}, {Col: 2, Desc: true, NullsFirst: true}}, // s, v DESC
		{{Col: 3, Desc: true, NullsFirst: true}},           // f DESC: rises every row
	} {
		for _, lim := range [][2]int{{3, 0}, {1, 0}, {5, 2}, {0, 0}, {0, 3}, {500, 0}, {4, 100}} {
			cases = append(cases, tc{fmt.Sprintf("keys=%v/n=%d/offset=%d", keys, lim[0], lim[1]), keys, lim[0], lim[1],
				func(nulls bool) []exec.Row { return sampleRows(97, nulls) }})
		}
		cases = append(cases, tc{fmt.Sprintf("dups/keys=%v", keys), keys, 4, 3, dups})
	}
	for _, c := range cases {
		for _, nulls := range []bool{false, true} {
			for _, size := range []int{1, 3, 7, 1024} {
				for _, columnar := range []bool{false, true} {
					name := fmt.Sprintf("%s/nulls=%v/size=%d/columnar=%v", c.name, nulls, size, columnar)
					t.Run(name, func(t *testing.T) {
						mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
						defer mem.AssertSize(t, 0)
						op := NewUpdatingTopN(c.keys, int64(c.n), int64(c.offset), topNOut)
						defer op.Close()
						rows := c.rows(nulls)
						applied := shown{}
						var seen []exec.Row // the rows fed so far
						var prevRef []string
						for bi, b := range makeBatches(t, mem, input{SampleSchema, rows}, size, columnar) {
							seen = rows[:min(len(rows), (bi+1)*size)]
							out := &capture{}
							if _, err := exec.Dispatch(t.Context(), op, true, 0, b, out); err != nil {
								t.Fatal(err)
							}
							b.Release()
							got, _ := out.rows()
							applied.apply(t, got)
							now := applied.rows()
							ref := refWindow(seen, c.keys, c.n, c.offset)
							if strings.Join(now, "\n") != strings.Join(ref, "\n") {
								t.Fatalf("after %d rows: applied changelog\n%s\nwant\n%s", len(seen), strings.Join(now, "\n"), strings.Join(ref, "\n"))
							}
							if want := multisetDiff(prevRef, ref); len(got) != want {
								t.Fatalf("after %d rows: %d changes, the window changed by %d rows: %v", len(seen), len(got), want, got)
							}
							prevRef = ref
						}
						if err := op.Finish(t.Context(), 0, &capture{}); err != nil {
							t.Fatal(err)
						}
					})
				}
			}
		}
	}
}

// Within one batch the changes come as -D of the rows that left, then +I
// of the rows that entered, each in rank order; a row that entered and
// was pushed out again within the batch is not mentioned.
func TestUpdatingTopNOneBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	op := NewUpdatingTopN([]SortKey{{Col: 2, Desc: true, NullsFirst: true}}, 2, 0, topNOut)
	defer op.Close()
	row := func(k, v int64) exec.Row { return exec.Row{k, "s", v, 0.0, nil} }
	var lines []string
	feed := func(rows ...exec.Row) {
		c := &capture{}
		b := exec.NewRowBatch(SampleSchema, rows)
		if _, err := exec.Dispatch(t.Context(), op, true, 0, b, c); err != nil {
			t.Fatal(err)
		}
		b.Release()
		got, _ := c.rows()
		var ks []string
		for _, r := range got {
			ks = append(ks, fmt.Sprintf("%s%d", r[5], r[0]))
		}
		lines = append(lines, strings.Join(ks, " "))
	}
	feed(row(1, 10), row(2, 20))            // +I 2 (20), +I 1 (10)
	feed(row(3, 15), row(4, 30), row(5, 5)) // 15 enters then leaves: -D 1, +I 4
	feed(row(6, 20))                        // ties a kept row: arrived later, loses
	feed(row(7, 25), row(8, 1))             // -D 2, +I 7
	want := []string{"+I2 +I1", "-D1 +I4", "", "-D2 +I7"}
	if !slices.Equal(lines, want) {
		t.Fatalf("changes per batch %q, want %q", lines, want)
	}

	// LIMIT 1 OFFSET 1: a better row pushes an identical copy of the
	// visible row into view; the visible result did not change, so
	// nothing is said (not -D then +I of the same values).
	op = NewUpdatingTopN([]SortKey{{Col: 2, Desc: true, NullsFirst: true}}, 1, 1, topNOut)
	defer op.Close()
	lines = nil
	feed(row(1, 5), row(1, 5))
	feed(row(2, 9))
	feed(row(3, 7))
	if want := []string{"+I1", "", "-D1 +I3"}; !slices.Equal(lines, want) {
		t.Fatalf("with OFFSET: changes per batch %q, want %q", lines, want)
	}
}

// A misconfigured top-n is an error, not a panic.
func TestUpdatingTopNErrors(t *testing.T) {
	noOp := arrow.NewSchema(SampleSchema.Fields(), nil)
	b := exec.NewRowBatch(SampleSchema, sampleRows(3, false))
	defer b.Release()
	for name, op := range map[string]*UpdatingTopN{
		"no op column": NewUpdatingTopN([]SortKey{{Col: 0}}, 3, 0, noOp),
		"bad key":      NewUpdatingTopN([]SortKey{{Col: 9}}, 3, 0, topNOut),
		"negative":     NewUpdatingTopN([]SortKey{{Col: 0}}, -1, 0, topNOut),
	} {
		if _, err := exec.Dispatch(t.Context(), op, true, 0, b, &capture{}); err == nil || !strings.Contains(err.Error(), "updating top-n") {
			t.Errorf("%s: got %v", name, err)
		}
	}
}
