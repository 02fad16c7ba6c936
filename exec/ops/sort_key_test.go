package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// sortKeyTypesSchema has a column of every key type with a normalised form
// (the string column twice more: dictionary-encoded and LARGE in the
// columnar form; SMALLINT and UINTEGER, INT and BIGINT in row form), then
// id, the row's position.
var sortKeyTypesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}, Nullable: true},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "sdict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	{Name: "slarge", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
}, nil)

const keyTypeCols = 14 // the columns before id

// Values chosen to hit the encodings' edges: extremes, signs, -0 and NaN
// (cmpFloat: -0 = 0, NaN above everything, all NaNs equal), strings that
// share a prefix longer than the key keeps, differ only in trailing zero
// bytes, or end exactly at the prefix.
var (
	edgeInts   = []int64{math.MinInt64, math.MinInt64 + 1, -1 << 32, -1, 0, 1, 255, 256, 1 << 32, math.MaxInt64}
	edgeInt32s = []int32{math.MinInt32, -65536, -1, 0, 1, 255, 256, math.MaxInt32}
	edgeFloats = []float64{math.NaN(), math.Float64frombits(0xFFF8000000000001), math.Inf(1), math.Inf(-1), 0,
		math.Copysign(0, -1), 1.5, -1.5, 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64, 1e10, -1e10}
	long15     = strings.Repeat("p", strPrefix)
	edgeString = []string{"", "a", "a\x00", "a\x00\x00", "ab", "b", "\xff", "\xff\xff", long15, long15 + "\x00",
		long15 + "a", long15 + "b", long15 + "aa", long15 + "a\x00", long15[:14] + "q", "Zürich", "zz", long15 + long15}
	edgeDecimals = []decimal128.Num{decimal128.FromI64(-1), decimal128.FromI64(0), decimal128.FromI64(1),
		decimal128.New(1, 0), decimal128.New(-1, 0), decimal128.New(-1, math.MaxUint64), decimal128.New(math.MaxInt64, math.MaxUint64),
		decimal128.New(math.MinInt64, 0), decimal128.FromI64(12345), decimal128.FromI64(-12345)}
)

func randomKeyRows(rng *rand.Rand, n int) []exec.Row {
	pick := func(k int) int {
		if rng.IntN(3) == 0 {
			return -1 // a random value, not an edge
		}
		return rng.IntN(k)
	}
	rows := make([]exec.Row, n)
	for i := range rows {
		r := make(exec.Row, keyTypeCols+1)
		if k := pick(len(edgeInts)); k >= 0 {
			r[0] = edgeInts[k]
		} else {
			r[0] = rng.Int64N(21) - 10
		}
		if k := pick(len(edgeInt32s)); k >= 0 {
			r[1] = edgeInt32s[k]
		} else {
			r[1] = int32(rng.IntN(21) - 10)
		}
		if k := pick(len(edgeFloats)); k >= 0 {
			r[2] = edgeFloats[k]
			r[3] = float32(edgeFloats[k])
		} else {
			r[2] = float64(rng.IntN(9)-4) / 2
			r[3] = float32(rng.IntN(9)-4) / 2
		}
		var s string
		switch rng.IntN(4) {
		case 0:
			s = fmt.Sprintf("%s%d", long15[:rng.IntN(strPrefix+1)], rng.IntN(30))
		case 1:
			// sharing one to three windows of a radix sort, then differing
			s = fmt.Sprintf("%s%d%s", strings.Repeat("p", rng.IntN(4*strPrefix)), rng.IntN(3), long15[:rng.IntN(3)])
		default:
			s = edgeString[rng.IntN(len(edgeString))]
		}
		r[4], r[5], r[10], r[11] = s, []byte(s), s, s
		r[6] = rng.IntN(2) == 0
		if k := pick(len(edgeDecimals)); k >= 0 {
			r[7] = edgeDecimals[k]
		} else {
			r[7] = decimal128.FromI64(rng.Int64N(11) - 5)
		}
		r[8] = arrow.Date32(edgeInt32s[rng.IntN(len(edgeInt32s))])
		r[9] = arrow.Timestamp(edgeInts[rng.IntN(len(edgeInts))])
		r[12] = int32(int16(edgeInt32s[rng.IntN(len(edgeInt32s))]))
		r[13] = int64(uint32(edgeInts[rng.IntN(len(edgeInts))]))
		for c := 0; c < keyTypeCols; c++ {
			if rng.IntN(8) == 0 {
				r[c] = nil
			}
		}
		r[keyTypeCols] = int64(i)
		rows[i] = r
	}
	return rows
}

// keyTypesRecord encodes rows of sortKeyTypesSchema: EncodeRows for the plain
// columns, builders for the dictionary, LARGE string and small and
// unsigned integer ones.
func keyTypesRecord(t testing.TB, mem memory.Allocator, rows []exec.Row) arrow.RecordBatch {
	t.Helper()
	built := map[int]bool{10: true, 11: true, 12: true, 13: true}
	var plain []arrow.Field
	var idx []int
	for c, f := range sortKeyTypesSchema.Fields() {
		if !built[c] {
			plain = append(plain, f)
			idx = append(idx, c)
		}
	}
	proj := make([]exec.Row, len(rows))
	for i, r := range rows {
		for _, c := range idx {
			proj[i] = append(proj[i], r[c])
		}
	}
	rec, err := exec.EncodeRows(mem, arrow.NewSchema(plain, nil), proj)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	db := array.NewDictionaryBuilder(mem, sortKeyTypesSchema.Field(10).Type.(*arrow.DictionaryType)).(*array.BinaryDictionaryBuilder)
	defer db.Release()
	lb := array.NewLargeStringBuilder(mem)
	defer lb.Release()
	sb := array.NewInt16Builder(mem)
	defer sb.Release()
	ub := array.NewUint32Builder(mem)
	defer ub.Release()
	for _, r := range rows {
		if r[10] == nil {
			db.AppendNull()
		} else if err := db.AppendString(r[10].(string)); err != nil {
			t.Fatal(err)
		}
		if r[11] == nil {
			lb.AppendNull()
		} else {
			lb.Append(r[11].(string))
		}
		if r[12] == nil {
			sb.AppendNull()
		} else {
			sb.Append(int16(r[12].(int32)))
		}
		if r[13] == nil {
			ub.AppendNull()
		} else {
			ub.Append(uint32(r[13].(int64)))
		}
	}
	cols := make([]arrow.Array, sortKeyTypesSchema.NumFields())
	for k, c := range idx {
		cols[c] = rec.Column(k)
		cols[c].Retain()
	}
	cols[10], cols[11], cols[12], cols[13] = db.NewArray(), lb.NewArray(), sb.NewArray(), ub.NewArray()
	defer releaseAll(cols)
	return array.NewRecordBatch(sortKeyTypesSchema, cols, int64(len(rows)))
}

func randomSortKeys(rng *rand.Rand) []SortKey {
	keys := make([]SortKey, 1+rng.IntN(3))
	for i := range keys {
		keys[i] = SortKey{Col: rng.IntN(keyTypeCols), Desc: rng.IntN(2) == 0, NullsFirst: rng.IntN(2) == 0}
	}
	return keys
}

// referenceOrder is the ids of rows stably sorted by rowComparator.
func referenceOrder(rows []exec.Row, keys []SortKey) []int64 {
	sorted := slices.Clone(rows)
	slices.SortStableFunc(sorted, rowComparator(keys))
	return ids(sorted)
}

func ids(rows []exec.Row) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r[len(r)-1].(int64)
	}
	return out
}

// Sorting by normalised keys, from rows and from records cut in pieces,
// gives exactly the stable order of the reference comparator, over every
// key type, NULLS FIRST/LAST, DESC, one to three keys, ties, NaN and
// strings longer than the key's prefix.
func TestNormalisedSortMatchesComparator(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, n := range []int{2, 17, 60, 3000} {
		rows := randomKeyRows(rng, n)
		// The pieces are slices of one record, so their arrays start at
		// an offset into shared buffers, as a sliced batch's do.
		whole := keyTypesRecord(t, mem, rows)
		var recs []arrow.RecordBatch
		for start := 0; start < n; {
			end := min(n, start+1+rng.IntN(max(n/3, 1)))
			recs = append(recs, whole.NewSlice(int64(start), int64(end)))
			start = end
		}
		whole.Release()
		for trial := 0; trial < 150; trial++ {
			keys := randomSortKeys(rng)
			want := referenceOrder(rows, keys)
			sorted, err := sortRows(sortKeyTypesSchema, keys, slices.Clone(rows))
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(sorted); !slices.Equal(got, want) {
				t.Fatalf("n=%d keys %v, rows: got %v\nwant %v", n, keys, trunc64(got), trunc64(want))
			}
			order, err := sortRecords(mem, sortKeyTypesSchema, keys, newRecordRows(recs))
			if err != nil {
				t.Fatal(err)
			}
			got := make([]int64, len(order))
			for i, o := range order {
				got[i] = int64(o)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d keys %v, records: got %v\nwant %v", n, keys, trunc64(got), trunc64(want))
			}
		}
		for _, r := range recs {
			r.Release()
		}
	}
}

// The top-n keeps the reference order's first n, on both paths, over
// every key type.
func TestTopNMatchesComparator(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := randomKeyRows(rng, 2000)
	whole := keyTypesRecord(t, mem, rows)
	defer whole.Release()
	for trial := 0; trial < 120; trial++ {
		keys := randomSortKeys(rng)
		limit := []int64{0, 1, 3, 10, 100, 1999, 5000}[rng.IntN(7)]
		want := referenceOrder(rows, keys)
		want = want[:min(int(limit), len(want))]
		size := 1 + rng.IntN(400)
		for _, columnar := range []bool{false, true} {
			top := NewTopN(keys, limit, mem)
			out := &capture{}
			for start := 0; start < len(rows); start += size {
				part := rows[start:min(start+size, len(rows))]
				var b *exec.Batch
				if columnar {
					// A slice: its arrays start at an offset.
					b = exec.NewColumnarBatch(whole.NewSlice(int64(start), int64(start+len(part))))
				} else {
					b = exec.NewRowBatch(sortKeyTypesSchema, part)
				}
				took, err := exec.Dispatch(t.Context(), top, true, 0, b, out)
				b.Release()
				if err != nil {
					t.Fatal(err)
				}
				if took != columnar {
					t.Fatalf("columnar path took the batch: %v", took)
				}
			}
			if err := top.Finish(t.Context(), 0, out); err != nil {
				t.Fatal(err)
			}
			top.Close()
			got, _ := out.rows()
			if g := ids(got); !slices.Equal(g, want) {
				t.Fatalf("keys %v limit %d size %d columnar=%v: got %v\nwant %v", keys, limit, size, columnar, trunc64(g), trunc64(want))
			}
		}
	}
}

func trunc64(v []int64) []int64 {
	if len(v) > 20 {
		return v[:20]
	}
	return v
}

// Every key type with a normalised form orders as compareValues does,
// pair by pair, including the NULL byte's placement.
func TestNormalisedKeyPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rows := randomKeyRows(rng, 400)
	for c := 0; c < keyTypeCols; c++ {
		for _, k := range []SortKey{{Col: c}, {Col: c, Desc: true}, {Col: c, NullsFirst: true}, {Col: c, Desc: true, NullsFirst: true}} {
			nk, ok := newNormKeys(sortKeyTypesSchema, []SortKey{k})
			if !ok {
				t.Fatalf("column %s has no normalised form", sortKeyTypesSchema.Field(c).Name)
			}
			keys := make([][]byte, len(rows))
			longs := make([]bool, len(rows))
			for i, r := range rows {
				keys[i] = make([]byte, nk.width)
				l, err := nk.encodeRow(keys[i], r)
				if err != nil {
					t.Fatal(err)
				}
				longs[i] = l
			}
			cmp := rowComparator([]SortKey{k})
			for i := range rows {
				for j := range rows {
					want := cmp(rows[i], rows[j])
					got := strings.Compare(string(keys[i]), string(keys[j]))
					if got == 0 && longs[i] && longs[j] {
						continue // the prefix is all the key says: ties break on the values
					}
					if got != want {
						t.Fatalf("%s %+v: %q vs %q: key order %d, comparator %d", sortKeyTypesSchema.Field(c).Name, k, fmt.Sprint(rows[i][c]), fmt.Sprint(rows[j][c]), got, want)
					}
				}
			}
		}
	}
}
