package changelog

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/changelog/changelogtest"
	"github.com/clink-sql/clink/exec/ops"
)

// naive is the table as a slice, each retraction a scan: the definition
// the Table must match (a +U right after its -U takes the -U's place).
type naive struct {
	rows []exec.Row
	hole int
}

func (n *naive) apply(kind string, row exec.Row) bool {
	hole := n.hole
	n.hole = -1
	switch kind {
	case Insert:
		n.rows = append(n.rows, row)
	case UpdateAfter:
		if hole >= 0 {
			n.rows = slices.Insert(n.rows, hole, row)
		} else {
			n.rows = append(n.rows, row)
		}
	default:
		j := slices.IndexFunc(n.rows, func(r exec.Row) bool { return ops.SameRow(r, row) })
		if j < 0 {
			return false
		}
		n.rows = slices.Delete(n.rows, j, j+1)
		if kind == UpdateBefore {
			n.hole = j
		}
	}
	return true
}

// groupByChangelog is what an updating count per key emits: +I for a new
// key, -U old then +U new for a known one, and now and then a -D.
func groupByChangelog(r *rand.Rand, n, keys int) (kinds []string, rows []exec.Row) {
	counts := map[int64]int64{}
	for range n {
		k := int64(r.IntN(keys))
		c, ok := counts[k]
		switch {
		case !ok:
			counts[k] = 1
			kinds, rows = append(kinds, Insert), append(rows, exec.Row{k, int64(1)})
		case r.IntN(10) == 0:
			delete(counts, k)
			kinds, rows = append(kinds, Delete), append(rows, exec.Row{k, c})
		default:
			counts[k] = c + 1
			kinds, rows = append(kinds, UpdateBefore, UpdateAfter), append(rows, exec.Row{k, c}, exec.Row{k, c + 1})
		}
	}
	return kinds, rows
}

func TestTableMatchesNaiveOnGroupByChangelog(t *testing.T) {
	for _, key := range [][]int{nil, {0}} {
		r := rand.New(rand.NewPCG(1, 2))
		kinds, rows := groupByChangelog(r, 5000, 300)
		tab := NewTable(key, nil)
		ref := &naive{hole: -1}
		for i := range kinds {
			if err := tab.Apply(kinds[i], rows[i]); err != nil {
				t.Fatalf("key %v change %d: %v", key, i, err)
			}
			ref.apply(kinds[i], rows[i])
			if i%997 == 0 || i == len(kinds)-1 {
				if got := tab.Rows(-1); !reflect.DeepEqual(got, ref.rows) {
					t.Fatalf("key %v after change %d: table\n%v\nwant\n%v", key, i, got, ref.rows)
				}
			}
		}
		if tab.Len() != len(ref.rows) || tab.Changes() != int64(len(kinds)) {
			t.Errorf("key %v: Len %d Changes %d, want %d %d", key, tab.Len(), tab.Changes(), len(ref.rows), len(kinds))
		}
	}
}

func TestTableDuplicateRowsAreCounted(t *testing.T) {
	tab := NewTable(nil, nil)
	a, b := exec.Row{"a"}, exec.Row{"b"}
	for _, ch := range []struct {
		kind string
		row  exec.Row
	}{{Insert, a}, {Insert, b}, {Insert, a}, {Delete, a}} {
		if err := tab.Apply(ch.kind, ch.row); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := tab.Rows(-1), []exec.Row{a, b}; !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if err := tab.Apply(Delete, a); err != nil {
		t.Fatal(err)
	}
	err := tab.Apply(Delete, a)
	if !errors.Is(err, ErrNotInTable) {
		t.Fatalf("third -D of a: %v, want ErrNotInTable", err)
	}
	if got := tab.Rows(-1); !reflect.DeepEqual(got, []exec.Row{b}) {
		t.Fatalf("rows %v, want [b]", got)
	}
}

func TestTableUpdateKeepsPlace(t *testing.T) {
	tab := NewTable(nil, nil)
	apply := func(kind string, row ...any) {
		t.Helper()
		if err := tab.Apply(kind, row); err != nil {
			t.Fatal(err)
		}
	}
	apply(Insert, "x", int64(1))
	apply(Insert, "y", int64(1))
	apply(Insert, "z", int64(1))
	apply(UpdateBefore, "x", int64(1))
	apply(UpdateAfter, "x", int64(2))
	apply(UpdateBefore, "z", int64(1))
	apply(UpdateAfter, "z", int64(2))
	want := []exec.Row{{"x", int64(2)}, {"y", int64(1)}, {"z", int64(2)}}
	if got := tab.Rows(-1); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if got := tab.Rows(2); !reflect.DeepEqual(got, want[:2]) {
		t.Fatalf("Rows(2) %v", got)
	}
	// z then x changed last; y is the oldest.
	if got, w := tab.LastChanged(2), []exec.Row{{"x", int64(2)}, {"z", int64(2)}}; !reflect.DeepEqual(got, w) {
		t.Fatalf("LastChanged(2) %v, want %v", got, w)
	}
}

// A retraction names the row bit for bit: NaN finds NaN, -0 is not 0.
func TestTableRetractsFloatsByBits(t *testing.T) {
	tab := NewTable(nil, nil)
	nan, negZero := math.NaN(), math.Copysign(0, -1)
	for _, v := range []float64{nan, negZero} {
		if err := tab.Apply(Insert, exec.Row{v}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tab.Apply(Delete, exec.Row{0.0}); !errors.Is(err, ErrNotInTable) {
		t.Fatalf("-D 0 with only -0 in the table: %v", err)
	}
	for _, v := range []float64{negZero, nan} {
		if err := tab.Apply(Delete, exec.Row{v}); err != nil {
			t.Fatalf("-D %v: %v", v, err)
		}
	}
	if tab.Len() != 0 {
		t.Fatalf("%d rows left", tab.Len())
	}
}

func TestTableUpsertKeyReplacesRow(t *testing.T) {
	tab := NewTable([]int{0}, nil)
	_ = tab.Apply(Insert, exec.Row{"a", int64(1)})
	_ = tab.Apply(Insert, exec.Row{"b", int64(1)})
	_ = tab.Apply(UpdateAfter, exec.Row{"a", int64(5)}) // no -U: an upsert
	want := []exec.Row{{"a", int64(5)}, {"b", int64(1)}}
	if got := tab.Rows(-1); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	// A retraction finds its row by key.
	if err := tab.Apply(Delete, exec.Row{"a", int64(5)}); err != nil {
		t.Fatal(err)
	}
	if got := tab.Rows(-1); !reflect.DeepEqual(got, want[1:]) {
		t.Fatalf("rows %v", got)
	}
}

func TestTableRankOrder(t *testing.T) {
	desc := func(a, b exec.Row) int { return cmp.Compare(b[1].(int64), a[1].(int64)) }
	tab := NewTable(nil, desc)
	_ = tab.Apply(Insert, exec.Row{"a", int64(1)})
	_ = tab.Apply(Insert, exec.Row{"b", int64(3)})
	_ = tab.Apply(Insert, exec.Row{"c", int64(3)})
	_ = tab.Apply(UpdateBefore, exec.Row{"a", int64(1)})
	_ = tab.Apply(UpdateAfter, exec.Row{"a", int64(7)})
	if err := tab.Apply(Delete, exec.Row{"c", int64(3)}); err != nil {
		t.Fatal(err)
	}
	want := []exec.Row{{"a", int64(7)}, {"b", int64(3)}}
	if got := tab.Rows(-1); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}

func TestApplyBatchColumnarAndRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "op", Type: arrow.BinaryTypes.String},
		{Name: "k", Type: arrow.BinaryTypes.String},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	rows := []exec.Row{
		{Insert, "a", int64(1)}, {Insert, "b", int64(1)},
		{UpdateBefore, "a", int64(1)}, {UpdateAfter, "a", int64(2)},
		{Delete, "zz", int64(9)}, // absent: skipped, reported
		{Delete, "b", int64(1)},
	}
	rec, err := exec.EncodeRows(mem, schema, rows)
	if err != nil {
		t.Fatal(err)
	}
	col := exec.NewColumnarBatch(rec) // takes rec's reference
	defer col.Release()
	row := exec.NewRowBatch(schema, rows)
	defer row.Release()
	for name, b := range map[string]*exec.Batch{"columnar": col, "rows": row} {
		tab := NewTable(nil, nil)
		if err := tab.ApplyBatch(b, b.Len()); !errors.Is(err, ErrNotInTable) {
			t.Errorf("%s: %v, want ErrNotInTable for zz", name, err)
		}
		if got, want := tab.Rows(-1), []exec.Row{{"a", int64(2)}}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: rows %v, want %v", name, got, want)
		}
	}
}

func TestApplyUnknownKind(t *testing.T) {
	if err := NewTable(nil, nil).Apply("+X", exec.Row{1}); err == nil || errors.Is(err, ErrNotInTable) {
		t.Fatalf("kind +X: %v", err)
	}
}

// BenchmarkGroupByChangelog applies a count-per-key changelog over many
// keys; each change must cost the same whatever the table's size.
func BenchmarkGroupByChangelog(b *testing.B) {
	kinds, rows := groupByChangelog(rand.New(rand.NewPCG(3, 4)), 200000, 50000)
	b.ResetTimer()
	for range b.N {
		tab := NewTable(nil, nil)
		for i := range kinds {
			_ = tab.Apply(kinds[i], rows[i])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(kinds)), "ns/change")
}

// The Table leaves the shared fixture's table (the one the shell's and the
// kernel's displays are tested against), the absent retraction reported.
func TestTableMatchesDisplayFixture(t *testing.T) {
	changes, want := changelogtest.ReadFixture(t, "../../testdata/changelog/display.txt")
	tab := NewTable(nil, nil)
	absent := 0
	for _, c := range changes {
		if err := tab.Apply(c[0], c[1:]); errors.Is(err, ErrNotInTable) {
			absent++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, r := range tab.Rows(-1) {
		got = append(got, fmt.Sprintf("%s,%d", r[0], r[1]))
	}
	if !slices.Equal(got, want) || absent != 1 {
		t.Errorf("rows %v (%d absent retractions), want %v (1)", got, absent, want)
	}
}
