package ops

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// keyTypesSchema has a column of every GROUP BY key type the key index
// packs or encodes, and a value column to aggregate.
var keyTypesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "dec15", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}, Nullable: true},
	{Name: "dec30", Type: &arrow.Decimal128Type{Precision: 30, Scale: 2}, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "c", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// keyTypesRows repeat small domains per column at different periods, so
// single keys and composites both make several groups of several rows.
// dec15 holds one value outside int64 (its precision allows none, but a
// packed key must not lose it) and extreme integers appear, so a key
// lands in every table: packed words, and the spilled general encoding.
func keyTypesRows(n int, nulls bool) []exec.Row {
	big := decimal128.New(7, 42) // 7 * 2^64 + 42
	rows := make([]exec.Row, n)
	for i := range rows {
		dec15 := decimal128.FromI64(int64(i%5-2) * 1234)
		if i%17 == 0 {
			dec15 = big
		}
		k := int64(i%6) * 1_000_000_007
		if i%23 == 0 {
			k = math.MinInt64
		}
		r := exec.Row{
			int32(i%7 - 3),
			i%3 == 0,
			arrow.Date32(18000 + i%5),
			arrow.Timestamp(1_600_000_000_000_000 + int64(i%4)*1000),
			dec15,
			decimal128.New(int64(i%3-1), uint64(i%4)),
			fmt.Sprintf("str-%d", i%6),
			string(rune('A' + i%3)),
			k,
			float64(i%4) / 2,
			int64(i),
		}
		if nulls {
			for c := 0; c < len(r)-1; c++ {
				if (i+c)%(5+c) == 0 {
					r[c] = nil
				}
			}
		}
		rows[i] = r
	}
	return rows
}

// TestHashAggregateKeyTypes runs GROUP BY over every key type alone and in
// the composite shapes the benchmarks group by (packed into one word, two
// words, with a VARCHAR, wider than two words) under the operator
// harness, against the independent reference GROUP BY.
func TestHashAggregateKeyTypes(t *testing.T) {
	specs := []AggSpec{
		{Func: "count_star", Col: -1, Type: i64},
		{Func: "sum", Col: 10, Type: i64},
		{Func: "min", Col: 6, Type: str},
	}
	groupings := [][]int{
		{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9},
		{0, 6},        // (INT, VARCHAR)
		{7, 7},        // TPC-H Q1's two 1-char VARCHARs (one column twice)
		{8, 2, 0},     // (BIGINT, DATE, INT): two words
		{8, 8},        // (BIGINT, BIGINT): two words
		{0, 1, 2},     // one word
		{4, 0},        // (DECIMAL(15,2), INT)
		{8, 2, 0, 1},  // past two words: the general encoding
		{5, 3, 6, 9},  // DECIMAL(30,2), TIMESTAMP, VARCHAR, DOUBLE
		{1, 7, 4, 10}, // BOOLEAN, VARCHAR, DECIMAL, BIGINT
	}
	for _, groups := range groupings {
		out := aggSchema(keyTypesSchema, groups, specs)
		var names []string
		for _, g := range groups {
			names = append(names, keyTypesSchema.Field(g).Name)
		}
		runCase(t, opCase{
			name: strings.Join(names, ","),
			newOp: func(mem memory.Allocator) exec.Operator {
				return NewHashAggregate(groups, specs, out, mem)
			},
			inputs: func(nulls bool) []input {
				return []input{{keyTypesSchema, keyTypesRows(200, nulls)}}
			},
			want: func(ins []input) []exec.Row { return refAgg(ins[0].rows, groups, specs) },
		})
	}
}

// refKey is a key's identity for the reference index: SQL equality, so
// -0.0 is 0.0 and every NaN is one NaN; integers of every width are
// their value.
func refKey(vals []any) string {
	var sb strings.Builder
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			sb.WriteString("N|")
		case float64:
			switch {
			case x != x:
				sb.WriteString("f:NaN|")
			case x == 0:
				sb.WriteString("f:0|")
			default:
				fmt.Fprintf(&sb, "f:%v|", x)
			}
		case int32:
			fmt.Fprintf(&sb, "i:%d|", x)
		case int64:
			fmt.Fprintf(&sb, "i:%d|", x)
		default:
			fmt.Fprintf(&sb, "%T:%v|", v, v)
		}
	}
	return sb.String()
}

// randKeyColumn is a column type and a generator of its values from a
// small domain (so keys repeat) with extremes.
type randKeyColumn struct {
	typ arrow.DataType
	gen func(r *rand.Rand) any
}

var randKeyColumns = []randKeyColumn{
	{arrow.PrimitiveTypes.Int32, func(r *rand.Rand) any {
		return []int32{0, -1, 1, math.MaxInt32, math.MinInt32, 7, 100}[r.Intn(7)]
	}},
	{arrow.PrimitiveTypes.Int64, func(r *rand.Rand) any {
		return []int64{0, -1, 1 << 40, math.MaxInt64, math.MinInt64, 7}[r.Intn(6)]
	}},
	{arrow.FixedWidthTypes.Boolean, func(r *rand.Rand) any { return r.Intn(2) == 0 }},
	{arrow.FixedWidthTypes.Date32, func(r *rand.Rand) any { return arrow.Date32(r.Intn(5) - 2) }},
	{&arrow.TimestampType{Unit: arrow.Microsecond}, func(r *rand.Rand) any { return arrow.Timestamp(r.Intn(4) * 1000) }},
	{&arrow.Decimal128Type{Precision: 15, Scale: 2}, func(r *rand.Rand) any {
		if r.Intn(8) == 0 {
			return decimal128.New(int64(r.Intn(3)-1), uint64(r.Intn(2))<<63) // outside int64
		}
		return decimal128.FromI64(int64(r.Intn(5) - 2))
	}},
	{&arrow.Decimal128Type{Precision: 38, Scale: 0}, func(r *rand.Rand) any {
		return decimal128.New(int64(r.Intn(3)-1), uint64(r.Intn(3)))
	}},
	{arrow.PrimitiveTypes.Float64, func(r *rand.Rand) any {
		return []float64{0, math.Copysign(0, -1), math.NaN(), math.Float64frombits(0x7ff8000000000abc), 1.5, -2}[r.Intn(6)]
	}},
	{arrow.BinaryTypes.String, func(r *rand.Rand) any { return []string{"", "a", "ab", "b", "longer string value"}[r.Intn(5)] }},
}

// TestKeyIndexRandomised feeds random keys of random column shapes to one
// key index, alternating columnar batches and rows (both feed one table),
// and checks every id against a map-based reference: one id per distinct
// key under SQL equality, NULL one key (GROUP BY) or no match (join), and
// lookups without insert finding exactly the keys inserted.
func TestKeyIndexRandomised(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for iter := 0; iter < 300; iter++ {
		ncols := 1 + r.Intn(4)
		var cols []randKeyColumn
		var fs []arrow.Field
		for c := 0; c < ncols; c++ {
			rc := randKeyColumns[r.Intn(len(randKeyColumns))]
			cols = append(cols, rc)
			fs = append(fs, arrow.Field{Name: fmt.Sprintf("c%d", c), Type: rc.typ, Nullable: true})
		}
		schema := arrow.NewSchema(fs, nil)
		types := make([]arrow.DataType, ncols)
		for i, f := range fs {
			types[i] = f.Type
		}
		nullKeys := r.Intn(3) > 0
		k := newKeyIndex(chooseKeyKind(types), nullKeys)
		ref := map[string]int32{}
		check := func(what string, key []any, got int32, insert bool) {
			t.Helper()
			hasNull := false
			for _, v := range key {
				hasNull = hasNull || v == nil
			}
			if hasNull && !nullKeys {
				if got != -1 {
					t.Fatalf("iter %d %s: NULL key %v got id %d in a join index", iter, what, key, got)
				}
				return
			}
			rk := refKey(key)
			want, ok := ref[rk]
			if !ok && insert {
				want = int32(len(ref))
				ref[rk] = want
			} else if !ok {
				want = -1
			}
			if got != want {
				t.Fatalf("iter %d %s (%v): key %v got id %d, want %d", iter, what, types, key, got, want)
			}
		}
		for batch := 0; batch < 6; batch++ {
			n := 1 + r.Intn(300)
			rows := make([]exec.Row, n)
			for i := range rows {
				row := make(exec.Row, ncols)
				for c, rc := range cols {
					if r.Intn(10) > 0 {
						row[c] = rc.gen(r)
					}
				}
				rows[i] = row
			}
			insert := batch < 4 || r.Intn(2) == 0
			if r.Intn(3) == 0 {
				for _, row := range rows {
					id, _, err := k.idRow(row, insert)
					if err != nil {
						t.Fatal(err)
					}
					check("row", row, id, insert)
				}
			} else {
				rec, err := exec.EncodeRows(mem, schema, rows)
				if err != nil {
					t.Fatal(err)
				}
				kc := recordColumns(rec)
				var dicts []arrow.Array
				if r.Intn(2) == 0 {
					// VARCHAR columns as a scan may hand them out: codes into a
					// dictionary with its own order, a duplicate and a NULL entry.
					for c, f := range fs {
						if f.Type.ID() == arrow.STRING {
							d := testDict(mem, []string{"longer string value", "b", "<null>", "", "a", "ab", "b"})
							kc[c] = dictColumn(t, mem, d, rows, c)
							d.Release()
							dicts = append(dicts, kc[c])
						}
					}
				}
				ids, err := k.idsColumnar(kc, n, insert, nil, nil)
				rec.Release()
				for _, d := range dicts {
					d.Release()
				}
				if err != nil {
					t.Fatal(err)
				}
				for i, row := range rows {
					check("columnar", row, ids[i], insert)
				}
			}
			if k.len() != len(ref) {
				t.Fatalf("iter %d: index has %d keys, reference %d", iter, k.len(), len(ref))
			}
		}
		k.release()
	}
}

// A narrower integer array than the key was planned for (SMALLINT,
// TINYINT arrays under an INT key) packs by value, as its row form does.
func TestKeyIndexNarrowIntegers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b16 := array.NewInt16Builder(mem)
	b16.AppendValues([]int16{1, -1, math.MaxInt16, 1}, []bool{true, true, true, true})
	b16.AppendNull()
	a16 := b16.NewArray()
	b16.Release()
	defer a16.Release()
	b8 := array.NewInt8Builder(mem)
	b8.AppendValues([]int8{1, -1, 5, 1, 0}, nil)
	a8 := b8.NewArray()
	b8.Release()
	defer a8.Release()
	for _, types := range [][]arrow.DataType{
		{arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int8},
		{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int32},
	} {
		k := newKeyIndex(chooseKeyKind(types), true)
		ids, err := k.idsColumnar([]arrow.Array{a16, a8}, 5, true, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Rows 0 and 3 are (1, 1); the rest differ; row 4 has a NULL.
		if want := []int32{0, 1, 2, 0, 3}; fmt.Sprint(ids) != fmt.Sprint(want) {
			t.Fatalf("%v: ids %v, want %v", types, ids, want)
		}
		for i, row := range []exec.Row{{int32(1), int32(1)}, {int32(-1), int32(-1)}, {int32(math.MaxInt16), int32(5)}, {nil, int32(0)}} {
			id, created, err := k.idRow(row, true)
			if err != nil || created || id != []int32{0, 1, 2, 3}[i] {
				t.Fatalf("%v: row %v: id %d created %v err %v", types, row, id, created, err)
			}
		}
	}
}
