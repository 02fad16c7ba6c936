package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// refSetOp answers a set operation over multisets: a row's key is its
// values printed with their Go types (NULL is <nil>, so NULLs are equal).
func refSetOp(kind SetOpKind, all bool, left, right []exec.Row) []exec.Row {
	key := func(r exec.Row) string { return fmt.Sprintf("%#v", r) }
	n := map[string]int{}
	for _, r := range right {
		n[key(r)]++
	}
	m := map[string]int{}
	var order []exec.Row // each distinct left row once, first copy
	for _, r := range left {
		if m[key(r)] == 0 {
			order = append(order, r)
		}
		m[key(r)]++
	}
	var out []exec.Row
	for _, r := range order {
		mk, nk := m[key(r)], n[key(r)]
		copies := 0
		switch {
		case kind == Intersect && all:
			copies = min(mk, nk)
		case kind == Intersect:
			copies = min(1, mk, nk)
		case all:
			copies = max(mk-nk, 0)
		case nk == 0:
			copies = 1
		}
		for range copies {
			out = append(out, r)
		}
	}
	return out
}

func setOpRows(rng *rand.Rand, schema *arrow.Schema, n int) []exec.Row {
	rows := make([]exec.Row, n)
	for i := range rows {
		r := make(exec.Row, schema.NumFields())
		for c, f := range schema.Fields() {
			if rng.IntN(6) == 0 {
				continue // NULL
			}
			switch f.Type.ID() {
			case arrow.INT64:
				r[c] = int64(rng.IntN(4))
			case arrow.STRING:
				r[c] = []string{"x", "y", ""}[rng.IntN(3)]
			case arrow.FLOAT64:
				r[c] = []float64{0.5, 1.5}[rng.IntN(2)]
			}
		}
		rows[i] = r
	}
	return rows
}

// TestSetOp: INTERSECT and EXCEPT, DISTINCT and ALL, over one BIGINT, one
// VARCHAR and three mixed columns (the key index's three layouts), with
// duplicates, NULLs and empty sides, against the multiset reference.
func TestSetOp(t *testing.T) {
	schemas := map[string]*arrow.Schema{
		"bigint":  arrow.NewSchema([]arrow.Field{{Name: "a", Type: i64, Nullable: true}}, nil),
		"varchar": arrow.NewSchema([]arrow.Field{{Name: "a", Type: str, Nullable: true}}, nil),
		"mixed": arrow.NewSchema([]arrow.Field{{Name: "a", Type: i64, Nullable: true},
			{Name: "b", Type: str, Nullable: true}, {Name: "c", Type: f64, Nullable: true}}, nil),
	}
	for sname, schema := range schemas {
		for _, kind := range []SetOpKind{Intersect, Except} {
			for _, all := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/all=%v", kind, sname, all)
				t.Run(name, func(t *testing.T) {
					for seed := 0; seed < 8; seed++ {
						rng := rand.New(rand.NewPCG(uint64(seed), 11))
						left, right := setOpRows(rng, schema, rng.IntN(60)), setOpRows(rng, schema, rng.IntN(40))
						if seed == 0 {
							right = nil
						}
						if seed == 1 {
							left = nil
						}
						want := sortedRows(refSetOp(kind, all, left, right))
						for _, size := range []int{1, 5, 1024} {
							for _, colIn := range []bool{false, true} {
								for _, colOn := range []bool{false, true} {
									mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
									res := runOp(t, mem, NewSetOp(kind, all, schema, mem), []input{{schema, left}, {schema, right}}, size, colIn, colOn)
									if got := sortedRows(res.rows); !rowsEqual(got, want) {
										t.Errorf("seed=%d size=%d colIn=%v colOn=%v:\ngot  %d rows %v\nwant %d rows %v",
											seed, size, colIn, colOn, len(got), trunc(got), len(want), trunc(want))
									}
									if colIn && colOn && res.outCol != res.outBatches {
										t.Errorf("seed=%d size=%d: %d of %d output batches columnar", seed, size, res.outCol, res.outBatches)
									}
									mem.AssertSize(t, 0)
								}
							}
						}
					}
				})
			}
		}
	}
}

// A right input whose columns differ from the schema is an error.
func TestSetOpSchemaMismatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: i64}}, nil)
	other := arrow.NewSchema([]arrow.Field{{Name: "a", Type: str}}, nil)
	s := NewSetOp(Intersect, false, schema, mem)
	defer s.Close()
	b := makeBatches(t, mem, input{other, []exec.Row{{"x"}}}, 1, true)[0]
	defer b.Release()
	if _, err := exec.Dispatch(t.Context(), s, true, 1, b, &capture{}); err == nil {
		t.Fatal("want a schema error")
	}
}
