package ops

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

var buildSchema = arrow.NewSchema([]arrow.Field{
	{Name: "rk", Type: i64, Nullable: true},
	{Name: "name", Type: str, Nullable: true},
	{Name: "w", Type: f64, Nullable: true},
}, nil)

// buildRows repeat keys (duplicates on the build side) and miss some probe
// keys (k = 5, 6 never match).
func buildRows(n int, nulls bool) []exec.Row {
	rows := make([]exec.Row, n)
	for i := range rows {
		rows[i] = exec.Row{int64(i % 5), fmt.Sprintf("s%d", i%3), float64(i)}
		if nulls && i%4 == 1 {
			rows[i][0] = nil
		}
		if nulls && i%5 == 2 {
			rows[i][1] = nil
		}
	}
	return rows
}

func joinSchema() *arrow.Schema {
	return arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...), buildSchema.Fields()...), nil)
}

// refJoin is a nested-loop equi-join: NULL never equals anything.
func refJoin(typ JoinType, left, right []exec.Row, lk, rk []int) []exec.Row {
	var out []exec.Row
	for _, l := range left {
		matched := false
		for _, r := range right {
			eq := true
			for i := range lk {
				if l[lk[i]] == nil || r[rk[i]] == nil || !reflect.DeepEqual(l[lk[i]], r[rk[i]]) {
					eq = false
					break
				}
			}
			if eq {
				matched = true
				out = append(out, append(append(exec.Row{}, l...), r...))
			}
		}
		if !matched && typ == Left {
			out = append(out, append(append(exec.Row{}, l...), nil, nil, nil))
		}
	}
	return out
}

func TestHashJoin(t *testing.T) {
	for _, typ := range []JoinType{Inner, Left, Full} {
		for _, keys := range [][2][]int{{{0}, {0}}, {{1}, {1}}, {{0, 1}, {0, 1}}} {
			lk, rk := keys[0], keys[1]
			runCase(t, opCase{
				name: fmt.Sprintf("%s/keys%v=%v", typ, lk, rk),
				newOp: func(mem memory.Allocator) exec.Operator {
					return NewHashJoin(typ, lk, rk, joinSchema(), mem)
				},
				inputs: func(nulls bool) []input {
					return []input{{SampleSchema, sampleRows(60, nulls)}, {buildSchema, buildRows(12, nulls)}}
				},
				want: func(ins []input) []exec.Row {
					if typ == Full {
						return refFull(ins[0].rows, ins[1].rows, lk, rk, SampleSchema.NumFields())
					}
					return refJoin(typ, ins[0].rows, ins[1].rows, lk, rk)
				},
			})
		}
	}
}

// An empty build side: INNER gives nothing, LEFT gives every probe row
// with NULLs on the right.
func TestHashJoinEmptyBuild(t *testing.T) {
	for _, typ := range []JoinType{Inner, Left} {
		runCase(t, opCase{
			name: fmt.Sprintf("%s/empty build", typ),
			newOp: func(mem memory.Allocator) exec.Operator {
				return NewHashJoin(typ, []int{0}, []int{0}, joinSchema(), mem)
			},
			inputs: func(nulls bool) []input {
				return []input{{SampleSchema, sampleRows(10, nulls)}, {buildSchema, nil}}
			},
			want: func(ins []input) []exec.Row { return refJoin(typ, ins[0].rows, nil, []int{0}, []int{0}) },
		})
	}
}

// A key type mismatch is a clear error, not a silent non-match.
func TestHashJoinKeyTypeMismatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	j := NewHashJoin(Inner, []int{0}, []int{1}, joinSchema(), mem) // BIGINT = VARCHAR
	defer j.Close()
	b := makeBatches(t, mem, input{buildSchema, buildRows(3, false)}, 3, true)[0]
	defer b.Release()
	if _, err := exec.Dispatch(t.Context(), j, true, 1, b, &capture{}); err == nil {
		t.Fatal("want a key type error")
	}
}

// With columnar output on, the probe's output is born columnar (until the
// damper backs off on small emissions).
func TestHashJoinOutputForm(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	j := NewHashJoin(Inner, []int{0}, []int{0}, joinSchema(), mem)
	res := runOp(t, mem, j, []input{{SampleSchema, sampleRows(3000, false)}, {buildSchema, buildRows(50, false)}}, 1000, true, true)
	if res.outCol != res.outBatches || res.outBatches == 0 {
		t.Fatalf("%d of %d output batches columnar", res.outCol, res.outBatches)
	}
	// Small emissions: after 4 under 64 rows the damper holds output back to rows.
	mem2 := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem2.AssertSize(t, 0)
	j2 := NewHashJoin(Inner, []int{0}, []int{0}, joinSchema(), mem2)
	res = runOp(t, mem2, j2, []input{{SampleSchema, sampleRows(40, false)}, {buildSchema, buildRows(5, false)}}, 2, true, true)
	if res.outCol != 4 || !j2.Damper().BackedOff() {
		t.Fatalf("%d columnar emissions (want 4), backed off %v", res.outCol, j2.Damper().BackedOff())
	}
}
