package expr

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/exec"
)

// TestInColumnarForms: a constant IN (and a comparison with a constant)
// over a VARCHAR column answers the
// same for the column plain and dictionary-encoded (a NULL code, a NULL
// dictionary entry, entries no row uses), with short lists (searched in
// order) and long ones (hashed), NOT IN and a NULL item, and as the row
// path does; the same for BIGINT and INT lists past the short length.
func TestInColumnarForms(t *testing.T) {
	mem := newMem(t)
	words := []string{"AIR", "AIR REG", "MAIL", "RAIL", "SHIP", "TRUCK", "FOB", "REG AIR", "x", "y"}
	dictB := array.NewStringBuilder(mem)
	for _, w := range words {
		dictB.Append(w)
	}
	dictB.AppendNull()
	dict := dictB.NewArray()
	dictB.Release()
	defer dict.Release()
	codesB := array.NewInt32Builder(mem)
	plainB := array.NewStringBuilder(mem)
	intB := array.NewInt64Builder(mem)
	const n = 200
	for i := 0; i < n; i++ {
		switch {
		case i%13 == 0:
			codesB.AppendNull()
			plainB.AppendNull()
		case i%17 == 0:
			codesB.Append(int32(len(words))) // the NULL entry
			plainB.AppendNull()
		default:
			c := (i * 7) % 8 // entries 8 and 9 unused
			codesB.Append(int32(c))
			plainB.Append(words[c])
		}
		intB.Append(int64(i % 23))
	}
	codes, plain, ints := codesB.NewArray(), plainB.NewArray(), intB.NewArray()
	codesB.Release()
	plainB.Release()
	intB.Release()
	defer codes.Release()
	defer plain.Release()
	defer ints.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	enc := array.NewDictionaryArray(dt, codes, dict)
	defer enc.Release()
	schema := func(t arrow.DataType) *arrow.Schema {
		return arrow.NewSchema([]arrow.Field{{Name: "s", Type: t, Nullable: true}}, nil)
	}
	recPlain := array.NewRecordBatch(schema(tStr), []arrow.Array{plain}, n)
	defer recPlain.Release()
	recDict := array.NewRecordBatch(schema(dt), []arrow.Array{enc}, n)
	defer recDict.Release()
	recInt := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "i", Type: tBig}}, nil), []arrow.Array{ints}, n)
	defer recInt.Release()

	strLists := [][]Expr{
		{Lit("AIR", tStr), Lit("AIR REG", tStr)},
		{Lit("MAIL", tStr), Lit(nil, arrow.Null)},
	}
	var long []Expr
	for _, w := range append(words[2:], "q1", "q2", "q3") {
		long = append(long, Lit(w, tStr))
	}
	strLists = append(strLists, long)
	for li, list := range strLists {
		for _, neg := range []bool{false, true} {
			e := must(NewIn(Col(0, tStr, "s"), list, neg))
			a, err := e.EvalColumnar(mem, recPlain)
			if err != nil {
				t.Fatal(err)
			}
			b, err := e.EvalColumnar(mem, recDict)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				var row exec.Row = exec.Row{nil}
				if plain.IsValid(i) {
					row[0] = plain.(*array.String).Value(i)
				}
				want, err := e.EvalRow(row)
				if err != nil {
					t.Fatal(err)
				}
				got, gotDict := exec.Value(a, i), exec.Value(b, i)
				if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(gotDict) != fmt.Sprint(want) {
					t.Fatalf("list %d not=%v row %d (%v): plain %v, dictionary %v, row path %v", li, neg, i, row[0], got, gotDict, want)
				}
			}
			a.Release()
			b.Release()
		}
	}
	// Comparisons with a constant, either side, decided per entry.
	for _, op := range []string{"=", "<>", "<", "<=", ">", ">="} {
		for _, flip := range []bool{false, true} {
			l, r := Expr(Col(0, tStr, "s")), Expr(Lit("MAIL", tStr))
			if flip {
				l, r = r, l
			}
			e := must(NewBinary(op, l, r))
			a, err := e.EvalColumnar(mem, recPlain)
			if err != nil {
				t.Fatal(err)
			}
			b, err := e.EvalColumnar(mem, recDict)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				if fmt.Sprint(exec.Value(a, i)) != fmt.Sprint(exec.Value(b, i)) {
					t.Fatalf("%s row %d: plain %v, dictionary %v", e, i, exec.Value(a, i), exec.Value(b, i))
				}
			}
			a.Release()
			b.Release()
		}
	}
	var intList []Expr
	for _, v := range []string{"1", "3", "5", "7", "9", "11", "13", "15", "17", "40"} {
		intList = append(intList, must(NumberLit(v)))
	}
	e := must(NewIn(Col(0, tBig, "i"), intList, false))
	a, err := e.EvalColumnar(mem, recInt)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	for i := 0; i < n; i++ {
		v := int64(i % 23)
		want := v%2 == 1 && v <= 17
		if got := a.(*array.Boolean).Value(i); got != want {
			t.Fatalf("%d IN (...10 items): %v, want %v", v, got, want)
		}
	}
}
