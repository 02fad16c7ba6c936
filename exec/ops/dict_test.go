package ops

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// dictStrType is what the Parquet scan hands out for a dictionary-encoded
// VARCHAR.
var dictStrType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// testDict is a dictionary the way files have them: an order of its own,
// a duplicate entry and a NULL entry.
func testDict(mem memory.Allocator, vals []string) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for _, v := range vals {
		if v == "<null>" {
			b.AppendNull()
		} else {
			b.Append(v)
		}
	}
	return b.NewArray()
}

// dictColumn encodes rows[*][col] (strings or nil) as codes into dict. A
// NULL alternates between a NULL code and a code of the dictionary's NULL
// entry; a value with two entries alternates between them.
func dictColumn(t *testing.T, mem memory.Allocator, dict arrow.Array, rows []exec.Row, col int) arrow.Array {
	t.Helper()
	vals := dict.(*array.String)
	pos := map[string][]int32{}
	nullEntry := int32(-1)
	for j := 0; j < vals.Len(); j++ {
		if vals.IsNull(j) {
			nullEntry = int32(j)
			continue
		}
		pos[vals.Value(j)] = append(pos[vals.Value(j)], int32(j))
	}
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	for i, r := range rows {
		switch v := r[col].(type) {
		case nil:
			if i%2 == 0 || nullEntry < 0 {
				ib.AppendNull()
			} else {
				ib.Append(nullEntry)
			}
		case string:
			ps := pos[v]
			if len(ps) == 0 {
				t.Fatalf("value %q is not in the dictionary", v)
			}
			ib.Append(ps[i%len(ps)])
		}
	}
	codes := ib.NewArray()
	defer codes.Release()
	return array.NewDictionaryArray(dictStrType, codes, dict)
}

// dictBatches cuts rows into batches of size whose column col is
// dictionary-encoded: batches share dictionary A, then B (another order),
// and every fourth batch is plain, as a scan hands them out when a file's
// column chunk falls back to plain pages.
func dictBatches(t *testing.T, mem memory.Allocator, rows []exec.Row, col, size int) []*exec.Batch {
	t.Helper()
	a := testDict(mem, []string{"s3", "s0", "<null>", "s1", "s2", "s0", "unused"})
	b := testDict(mem, []string{"s2", "s1", "s0", "s3"})
	defer a.Release()
	defer b.Release()
	var out []*exec.Batch
	for k, start := 0, 0; start < len(rows); k, start = k+1, start+size {
		end := min(start+size, len(rows))
		rec, err := exec.EncodeRows(mem, SampleSchema, rows[start:end])
		if err != nil {
			t.Fatal(err)
		}
		if k%4 == 3 {
			out = append(out, exec.NewColumnarBatch(rec))
			continue
		}
		dict := a
		if k%4 == 2 {
			dict = b
		}
		cols := recordColumns(rec)
		cols[col] = dictColumn(t, mem, dict, rows[start:end], col)
		fields := append([]arrow.Field(nil), SampleSchema.Fields()...)
		fields[col].Type = dictStrType
		drec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(end-start))
		cols[col].Release()
		rec.Release()
		out = append(out, exec.NewColumnarBatch(drec))
	}
	return out
}

// feedColumnar runs batches through op's columnar hook and returns what it emitted.
func feedColumnar(t *testing.T, op exec.Operator, batches []*exec.Batch) []exec.Row {
	t.Helper()
	ctx := context.Background()
	out := &capture{}
	if s, ok := op.(exec.ColumnarOutputSetter); ok {
		s.SetColumnarOutput(true)
	}
	before := exec.Global.BatchesMaterialized.Load()
	for i, b := range batches {
		took, err := exec.Dispatch(ctx, op, true, 0, b, out)
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if !took {
			t.Fatalf("batch %d: the columnar path did not take it", i)
		}
	}
	if err := op.Finish(ctx, 0, out); err != nil {
		t.Fatal(err)
	}
	if d := exec.Global.BatchesMaterialized.Load() - before; d != 0 {
		t.Errorf("%d batches materialised", d)
	}
	rows, _ := out.rows()
	return rows
}

// A GROUP BY over a dictionary-encoded VARCHAR key gives the answer of
// the plain column: across two dictionaries, plain batches in between,
// NULL codes and codes of a NULL entry, duplicate entries, and with the
// key also read by MIN/MAX (decoded for the accumulator).
func TestHashAggregateDictionaryKeys(t *testing.T) {
	for _, groups := range [][]int{{1}, {0, 1}, {1, 0}, {0}, {}} {
		for _, size := range []int{1, 7, 100} {
			t.Run(fmt.Sprintf("group%v/size=%d", groups, size), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				rows := sampleRows(300, true)
				batches := dictBatches(t, mem, rows, 1, size)
				out := aggSchema(SampleSchema, groups, sampleAggs)
				op := NewHashAggregate(groups, sampleAggs, out, mem)
				got := feedColumnar(t, op, batches)
				op.Close()
				for _, b := range batches {
					b.Release()
				}
				want := refAgg(rows, groups, sampleAggs)
				if !rowsEqual(sortedRows(got), sortedRows(want)) {
					t.Errorf("got %v\nwant %v", trunc(sortedRows(got)), trunc(sortedRows(want)))
				}
			})
		}
	}
}

// The dictionary's ids are remembered per dictionary: a second batch with
// the same dictionary looks no string up, and a new dictionary starts over.
func TestKeyIndexDictionaryMemo(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := sampleRows(40, false)
	batches := dictBatches(t, mem, rows, 1, 10) // A, A, B, plain
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	k := newKeyIndex(keyString, true)
	defer k.release()
	for i, b := range batches {
		ids, err := k.idsColumnar([]arrow.Array{b.Record().Column(1)}, b.Len(), true, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for r, id := range ids {
			want, _, _ := k.idRow([]any{rows[i*10+r][1]}, false)
			if id != want {
				t.Fatalf("batch %d row %d: id %d, the string's id is %d", i, r, id, want)
			}
		}
		if i == 1 && k.dict.dict != batches[0].Record().Column(1).Data().Dictionary() {
			t.Errorf("the second batch of dictionary A did not keep A's ids")
		}
	}
	if k.len() != 4 {
		t.Errorf("%d keys, want 4", k.len())
	}
}

// A filter gathers codes and shares the dictionary; a projection passes a
// dictionary column on by reference, with a schema that says so.
func TestFilterProjectKeepDictionary(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := sampleRows(128, true)
	batches := dictBatches(t, mem, rows, 1, 32) // A, A, B, plain
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	f := NewFilter(tGt{col: 2, k: 3}, mem)
	defer f.Close()
	proj := NewProject([]expr.Expr{tCol{col: 1, typ: arrow.BinaryTypes.String}, tCol{col: 0, typ: arrow.PrimitiveTypes.Int64}},
		arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil), mem)
	ctx := context.Background()
	for i, b := range batches {
		fo := &capture{}
		if _, err := exec.Dispatch(ctx, f, true, 0, b, fo); err != nil {
			t.Fatal(err)
		}
		if len(fo.batches) != 1 {
			t.Fatalf("batch %d: filter emitted %d batches", i, len(fo.batches))
		}
		fb := fo.batches[0]
		col := fb.Record().Column(1)
		if !arrow.TypeEqual(col.DataType(), b.Record().Column(1).DataType()) || col.Data().Dictionary() != b.Record().Column(1).Data().Dictionary() {
			t.Errorf("batch %d: filter output column is %s, or a different dictionary", i, col.DataType())
		}
		po := &capture{}
		if _, err := exec.Dispatch(ctx, proj, true, 0, fb, po); err != nil {
			t.Fatal(err)
		}
		pc := po.batches[0].Record()
		if !arrow.TypeEqual(pc.Schema().Field(0).Type, col.DataType()) || pc.Column(0).Data().Dictionary() != col.Data().Dictionary() {
			t.Errorf("batch %d: projection output %s", i, pc.Schema())
		}
		got, _ := po.rows()
		var want []exec.Row
		for _, r := range rows[i*32 : i*32+32] {
			if r[2] != nil && r[2].(int64) > 3 {
				want = append(want, exec.Row{r[1], r[0]})
			}
		}
		if !rowsEqual(got, want) {
			t.Errorf("got %v\nwant %v", trunc(got), trunc(want))
		}
		fo.rows()
	}
}

// A code past the dictionary is an error naming it, whatever the key's
// shape: one VARCHAR column, or one column of several (the general
// encoding), not a panic out of the string array.
func TestKeyIndexDictionaryCodeOutOfRange(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"a", "b"}, nil)
	dict := sb.NewArray()
	sb.Release()
	defer dict.Release()
	ib := array.NewInt32Builder(mem)
	ib.AppendValues([]int32{0, 1, 5}, nil)
	codes := ib.NewArray()
	ib.Release()
	defer codes.Release()
	col := array.NewDictionaryArray(dictStrType, codes, dict)
	defer col.Release()
	lb := array.NewInt64Builder(mem)
	lb.AppendValues([]int64{1, 2, 3}, nil)
	other := lb.NewArray()
	lb.Release()
	defer other.Release()

	for _, tc := range []struct {
		name string
		kind keyKind
		cols []arrow.Array
	}{
		{"varchar", keyString, []arrow.Array{col}},
		{"general", keyGeneral, []arrow.Array{other, col}},
		{"packed", chooseKeyKind([]arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String}), []arrow.Array{other, col}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKeyIndex(tc.kind, true)
			defer k.release()
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				_, err = k.idsColumnar(tc.cols, 3, true, nil, func(int) {})
			}()
			if err == nil || !strings.Contains(err.Error(), "code 5 out of range") {
				t.Errorf("got %v, want an out-of-range error", err)
			}
		})
	}
}
