package ops

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// gatherTypes is a record of every layout the gathers special-case, with
// NULLs: fixed widths, booleans, strings, decimals, timestamps, a struct
// (with a NULL struct row) and a list (the general path).
func gatherTypes(t *testing.T, mem memory.Allocator, n int, seed int64) arrow.RecordBatch {
	t.Helper()
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "r", Type: st, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
	}, nil)
	rng := rand.New(rand.NewSource(seed))
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	for i := 0; i < n; i++ {
		null := rng.Intn(5) == 0
		for c, f := range bld.Fields() {
			if null && c != 6 {
				f.AppendNull()
				continue
			}
			switch b := f.(type) {
			case *array.Int64Builder:
				b.Append(rng.Int63n(1000))
			case *array.Int32Builder:
				b.Append(rng.Int31n(1000))
			case *array.BooleanBuilder:
				b.Append(rng.Intn(2) == 0)
			case *array.StringBuilder:
				b.Append(fmt.Sprintf("s%d", rng.Intn(10000)))
			case *array.Decimal128Builder:
				b.Append(decimal128.FromI64(rng.Int63n(100000)))
			case *array.TimestampBuilder:
				b.Append(arrow.Timestamp(rng.Int63n(1 << 40)))
			case *array.StructBuilder:
				if rng.Intn(6) == 0 {
					b.AppendNull()
					continue
				}
				b.Append(true)
				b.FieldBuilder(0).(*array.Int64Builder).Append(rng.Int63n(50))
				if rng.Intn(4) == 0 {
					b.FieldBuilder(1).(*array.StringBuilder).AppendNull()
				} else {
					b.FieldBuilder(1).(*array.StringBuilder).Append(fmt.Sprintf("x%d", i))
				}
			case *array.ListBuilder:
				b.Append(true)
				for k := 0; k < rng.Intn(3); k++ {
					b.ValueBuilder().(*array.Int64Builder).Append(int64(k))
				}
			}
		}
	}
	return bld.NewRecordBatch()
}

// TestGatherMatchesRows: gather (one array) and gatherRefs (many) give,
// cell for cell, the rows the indices name, for every layout, from sliced
// arrays too.
func TestGatherMatchesRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var recs []arrow.RecordBatch
	var rows [][]exec.Row
	for k := 0; k < 3; k++ {
		r := gatherTypes(t, mem, 200, int64(k))
		if k == 1 {
			s := r.NewSlice(17, 190) // an offset into every buffer
			r.Release()
			r = s
		}
		recs = append(recs, r)
		rows = append(rows, exec.DecodeRows(r))
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	rng := rand.New(rand.NewSource(9))
	idx := make([]int32, 500)
	refs := make([]cellRef, 500)
	for i := range idx {
		idx[i] = int32(rng.Intn(int(recs[1].NumRows())))
		refs[i] = cellRef{arr: int32(rng.Intn(3)), row: 0}
		refs[i].row = int32(rng.Intn(int(recs[refs[i].arr].NumRows())))
	}
	for c := 0; c < int(recs[0].NumCols()); c++ {
		name := recs[0].Schema().Field(c).Name
		one, err := gather(mem, recs[1].Column(c), idx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		srcs := []arrow.Array{recs[0].Column(c), recs[1].Column(c), recs[2].Column(c)}
		many, err := gatherRefs(mem, srcs[0].DataType(), srcs, refs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for k := range idx {
			if got, want := exec.Value(one, k), rows[1][idx[k]][c]; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("gather %s[%d]: %v, want %v", name, k, got, want)
			}
			r := refs[k]
			if got, want := exec.Value(many, k), rows[r.arr][r.row][c]; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("gatherRefs %s[%d]: %v, want %v", name, k, got, want)
			}
		}
		one.Release()
		many.Release()
	}
}

// TestGatherRuns: indexes as a filter makes them (ascending runs of
// consecutive rows with gaps), with NULL picks (-1) and repeated rows
// between the runs, from a sliced array too: gatherBinary copies a run as
// one block and rebases its offsets, and every cell must still match.
func TestGatherRuns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	full := gatherTypes(t, mem, 600, 3)
	defer full.Release()
	rng := rand.New(rand.NewSource(11))
	for _, rec := range []arrow.RecordBatch{full, full.NewSlice(37, 580)} {
		rows := exec.DecodeRows(rec)
		n := int(rec.NumRows())
		var idx []int32
		for i := 0; i < n; {
			switch rng.Intn(6) {
			case 0:
				idx = append(idx, -1)
			case 1:
				idx = append(idx, int32(i), int32(i)) // a repeat is not a run
				i++
			default:
				run := 1 + rng.Intn(40)
				for j := 0; j < run && i < n; j++ {
					idx = append(idx, int32(i))
					i++
				}
				i += rng.Intn(3) // a gap
			}
		}
		idx = append(idx, int32(n-1), 0, 1, 2) // a run may also start over
		for c := 0; c < int(rec.NumCols()); c++ {
			got, err := gather(mem, rec.Column(c), idx)
			if err != nil {
				t.Fatal(err)
			}
			for k, i := range idx {
				var want any
				if i >= 0 {
					want = rows[i][c]
				}
				if g := exec.Value(got, k); fmt.Sprint(g) != fmt.Sprint(want) {
					t.Fatalf("%s[%d] (row %d): %v, want %v", rec.Schema().Field(c).Name, k, i, g, want)
				}
			}
			if v, ok := got.(interface{ ValidateFull() error }); ok {
				if err := v.ValidateFull(); err != nil {
					t.Fatalf("%s: %v", rec.Schema().Field(c).Name, err)
				}
			}
			got.Release()
		}
		if rec != full {
			rec.Release()
		}
	}
}
