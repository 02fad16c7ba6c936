package expr

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

var (
	tInt   = arrow.PrimitiveTypes.Int32
	tBig   = arrow.PrimitiveTypes.Int64
	tF32   = arrow.PrimitiveTypes.Float32
	tF64   = arrow.PrimitiveTypes.Float64
	tStr   = arrow.BinaryTypes.String
	tBin   = arrow.BinaryTypes.Binary
	tBool  = arrow.FixedWidthTypes.Boolean
	tDate  = arrow.FixedWidthTypes.Date32
	tTsMs  = &arrow.TimestampType{Unit: arrow.Millisecond}
	tTsUs  = &arrow.TimestampType{Unit: arrow.Microsecond}
	tDec   = decType(10, 2)
	tDec33 = decType(3, 3)
	tIv    = arrow.FixedWidthTypes.MonthDayNanoInterval
	tTime  = arrow.FixedWidthTypes.Time64us
	tTime3 = arrow.FixedWidthTypes.Time32ms
)

// The shared test schema: every supported type, with NULLs.
var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i", Type: tInt, Nullable: true},     // 0
	{Name: "price", Type: tBig, Nullable: true}, // 1
	{Name: "f", Type: tF64, Nullable: true},     // 2
	{Name: "d", Type: tDec, Nullable: true},     // 3
	{Name: "s", Type: tStr, Nullable: true},     // 4
	{Name: "b", Type: tBool, Nullable: true},    // 5
	{Name: "ts", Type: tTsMs, Nullable: true},   // 6
	{Name: "day", Type: tDate, Nullable: true},  // 7
	{Name: "nul", Type: tInt, Nullable: true},   // 8: always NULL
	{Name: "g", Type: tF32, Nullable: true},     // 9
	{Name: "c", Type: tBool, Nullable: true},    // 10
	{Name: "tu", Type: tTsUs, Nullable: true},   // 11
	{Name: "bin", Type: tBin, Nullable: true},   // 12
	{Name: "j", Type: tInt, Nullable: true},     // 13: small, zero sometimes
	{Name: "t", Type: tStr, Nullable: true},     // 14: patterns / short strings
	{Name: "iv", Type: tIv, Nullable: true},     // 15: intervals, some negative
	{Name: "tm", Type: tTime, Nullable: true},   // 16: TIME
	{Name: "tm3", Type: tTime3, Nullable: true}, // 17: TIME(3), Time32 in Arrow
}, nil)

func col(name string) *ColRef {
	idx := testSchema.FieldIndices(name)[0]
	return Col(idx, testSchema.Field(idx).Type, name)
}

var words = []string{"", "a", "abc", "Apple", "banana", "ÄÖÜ straße", "日本語テキスト", "x%y", "a_b", "back\\slash", "abcabc", "ABC", "2015-07-15 00:00:05", "42", " 7 ", "true"}
var pats = []string{"%", "a%", "%c", "%b%", "a_c", "_", "", "\\%%", "%\\_%", "日%", "%ß%", "a%c%", "__", "x\\%y"}

// genRows makes n deterministic rows; roughly one value in six is NULL.
func genRows(n int, seed int64) []exec.Row {
	rng := rand.New(rand.NewSource(seed))
	times := rand.New(rand.NewSource(seed + 1))
	null := func() bool { return rng.Intn(6) == 0 }
	rows := make([]exec.Row, n)
	for r := range rows {
		row := make(exec.Row, len(testSchema.Fields()))
		set := func(c int, v any) {
			if !null() {
				row[c] = v
			}
		}
		set(0, int32(rng.Intn(2001)-1000))
		switch rng.Intn(10) {
		case 0:
			set(1, int64(math.MaxInt64-rng.Intn(3)))
		case 1:
			set(1, int64(math.MinInt64+rng.Intn(3)))
		default:
			set(1, rng.Int63n(10_000_000)-100)
		}
		fv := []float64{0, -0.5, 1.5, 1e300, math.Inf(1), math.NaN(), 3, 123.456}[rng.Intn(8)]
		if rng.Intn(2) == 0 {
			fv = rng.NormFloat64() * 1000
		}
		set(2, fv)
		set(3, decimal128.FromI64(rng.Int63n(2_000_000)-1_000_000))
		set(4, words[rng.Intn(len(words))])
		set(5, rng.Intn(2) == 0)
		set(6, arrow.Timestamp(1436918400000+rng.Int63n(86_400_000)-43_200_000))
		set(7, arrow.Date32(16000+rng.Intn(1000)-500))
		set(9, float32(rng.NormFloat64()*100))
		set(10, rng.Intn(2) == 0)
		set(11, arrow.Timestamp(1436918400000000+rng.Int63n(86_400_000_000)))
		set(12, []byte(words[rng.Intn(len(words))]))
		set(13, int32(rng.Intn(5)-2))
		set(14, pats[rng.Intn(len(pats))])
		set(15, arrow.MonthDayNanoInterval{Months: int32(rng.Intn(49) - 24), Days: int32(rng.Intn(61) - 30),
			Nanoseconds: rng.Int63n(2*86400e9) - 86400e9})
		// The TIME columns draw from their own source, so the columns
		// above hold what they always held.
		if times.Intn(6) != 0 {
			row[16] = arrow.Time64(times.Int63n(86400e6))
		}
		if times.Intn(6) != 0 {
			row[17] = arrow.Time64(times.Int63n(86400e3))
		}
		rows[r] = row
	}
	return rows
}

func newMem(t testing.TB) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

var (
	rowCache    = map[int][]exec.Row{}
	recCache    = map[*exec.Row]arrow.RecordBatch{}
	allNullRows = func() []exec.Row {
		rows := make([]exec.Row, 9)
		for i := range rows {
			rows[i] = make(exec.Row, len(testSchema.Fields()))
		}
		return rows
	}()
)

// cachedRows keeps the generated batches for the whole run: building them
// dominates the test time otherwise. Their records live in an unchecked
// allocator; everything an expression allocates is checked.
func cachedRows(n int) []exec.Row {
	if r, ok := rowCache[n]; ok {
		return r
	}
	r := genRows(n, int64(n))
	rowCache[n] = r
	return r
}

func mkRecord(t testing.TB, mem memory.Allocator, rows []exec.Row) arrow.RecordBatch {
	t.Helper()
	if len(rows) > 0 {
		if rec, ok := recCache[&rows[0]]; ok {
			rec.Retain()
			return rec
		}
		if len(rows) >= 7 || &rows[0] == &allNullRows[0] {
			rec, err := exec.EncodeRows(memory.NewGoAllocator(), testSchema, rows)
			if err != nil {
				t.Fatal(err)
			}
			recCache[&rows[0]] = rec
			rec.Retain()
			return rec
		}
	}
	rec, err := exec.EncodeRows(mem, testSchema, rows)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func must(e Expr, err error) Expr {
	if err != nil {
		panic(err)
	}
	return e
}

func sameValue(a, b any) bool {
	if fa, ok := a.(float64); ok {
		if fb, ok := b.(float64); ok && math.IsNaN(fa) && math.IsNaN(fb) {
			return true
		}
	}
	if fa, ok := a.(float32); ok {
		if fb, ok := b.(float32); ok && math.IsNaN(float64(fa)) && math.IsNaN(float64(fb)) {
			return true
		}
	}
	if ba, ok := a.([]byte); ok {
		if bb, ok := b.([]byte); ok && len(ba) == 0 && len(bb) == 0 {
			return true // exec.Value decodes an empty BYTES as nil
		}
	}
	return reflect.DeepEqual(a, b)
}

// evalBoth evaluates e over rows by the row path and over their record by
// the columnar path, fails unless the two agree value for value (or raise
// the same error), and returns the values (or the error).
func evalBoth(t *testing.T, mem memory.Allocator, e Expr, rows []exec.Row) ([]any, error) {
	t.Helper()
	var rowErr error
	got := make([]any, len(rows))
	for i, r := range rows {
		v, err := e.EvalRow(r)
		if err != nil {
			rowErr = err
			break
		}
		got[i] = v
	}
	rec := mkRecord(t, mem, rows)
	defer rec.Release()
	arr, colErr := e.EvalColumnar(mem, rec)
	if (rowErr == nil) != (colErr == nil) {
		if arr != nil {
			arr.Release()
		}
		t.Fatalf("%s: row error %v, columnar error %v", e, rowErr, colErr)
	}
	checkFused(t, mem, e, rec, got, rowErr)
	if rowErr != nil {
		if rowErr.Error() != colErr.Error() {
			t.Fatalf("%s: different errors: row %q, columnar %q", e, rowErr, colErr)
		}
		return nil, rowErr
	}
	defer arr.Release()
	if arr.Len() != len(rows) {
		t.Fatalf("%s: columnar gave %d values for %d rows", e, arr.Len(), len(rows))
	}
	if arr.DataType().ID() != arrow.NULL && !arrow.TypeEqual(arr.DataType(), e.Type()) {
		t.Fatalf("%s: columnar type %s, expression type %s", e, arr.DataType(), e.Type())
	}
	if v, ok := arr.(interface{ ValidateFull() error }); ok {
		if err := v.ValidateFull(); err != nil {
			t.Fatalf("%s: invalid array: %v", e, err)
		}
	}
	if nn := countNulls(arr); nn != arr.NullN() {
		t.Fatalf("%s: NullN %d but %d values are null", e, arr.NullN(), nn)
	}
	for i := range rows {
		cv := exec.Value(arr, i)
		if !sameValue(got[i], cv) {
			t.Fatalf("%s: row %d (%v): row path %#v, columnar %#v", e, i, rows[i], got[i], cv)
		}
	}
	return got, nil
}

// batchSizes: 2500 rows are three fused chunks, the last one partial.
var batchSizes = []int{0, 1, 7, 1000, 2500}

// checkAgree runs e over every batch size, plus a sliced record (non-zero
// array offsets) and an all-NULL batch.
func checkAgree(t *testing.T, e Expr) {
	t.Helper()
	mem := newMem(t)
	for _, n := range batchSizes {
		evalBoth(t, mem, e, cachedRows(n))
	}
	evalBoth(t, mem, e, allNullRows)
	checkSliced(t, mem, e)
}

// checkSliced evaluates over a record slice starting at row 3, so every
// bitmap and value buffer has a non-byte-aligned offset.
func checkSliced(t *testing.T, mem memory.Allocator, e Expr) {
	t.Helper()
	rows := genRows(40, 99)
	rec := mkRecord(t, mem, rows)
	defer rec.Release()
	sl := rec.NewSlice(3, 40)
	defer sl.Release()
	arr, colErr := e.EvalColumnar(mem, sl)
	var rowErr error
	want := make([]any, 0, 37)
	for _, r := range rows[3:] {
		v, err := e.EvalRow(r)
		if err != nil {
			rowErr = err
			break
		}
		want = append(want, v)
	}
	if (rowErr == nil) != (colErr == nil) {
		t.Fatalf("%s sliced: row error %v, columnar error %v", e, rowErr, colErr)
	}
	if colErr != nil {
		return
	}
	defer arr.Release()
	for i, w := range want {
		if cv := exec.Value(arr, i); !sameValue(w, cv) {
			t.Fatalf("%s sliced: row %d: row path %#v, columnar %#v", e, i, w, cv)
		}
	}
}

// one evaluates e over a single row given as column values (by name).
func one(t *testing.T, e Expr, vals map[string]any) (any, error) {
	t.Helper()
	row := make(exec.Row, len(testSchema.Fields()))
	for k, v := range vals {
		row[testSchema.FieldIndices(k)[0]] = v
	}
	mem := newMem(t)
	got, err := evalBoth(t, mem, e, []exec.Row{row, row})
	if err != nil {
		return nil, err
	}
	return got[0], nil
}

func dec(s string, p, sc int32) decimal128.Num {
	n, err := parseDecimal(s, p, sc)
	if err != nil {
		panic(err)
	}
	return n
}

func fmtV(v any, t arrow.DataType) string { return fmt.Sprintf("%s", FormatValue(v, t)) }

func countNulls(a arrow.Array) int {
	n := 0
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			n++
		}
	}
	return n
}

var _ = array.NewBuilder
