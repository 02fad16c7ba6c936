package ops

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// GROUP BY over an unbounded input is a changelog: +I for a new group,
// -U/+U for an update, nothing for a group whose result did not change;
// columnar and row input give the same changelog.
func TestUpdatingAggregateChangelog(t *testing.T) {
	for _, columnar := range []bool{false, true} {
		t.Run(fmt.Sprint("columnar=", columnar), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			out := arrow.NewSchema([]arrow.Field{
				{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
				{Name: "n", Type: arrow.PrimitiveTypes.Int64},
				{Name: "mx", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
				{Name: "op", Type: arrow.BinaryTypes.String},
			}, nil)
			u := NewUpdatingAggregate([]int{1}, []AggSpec{
				{Func: "count_star", Col: -1, Type: arrow.PrimitiveTypes.Int64},
				{Func: "max", Col: 2, Type: arrow.PrimitiveTypes.Int64},
			}, out, mem)
			defer u.Close()
			if u.Capabilities().IngestsColumnar || u.Capabilities().EmitsColumnar {
				t.Fatal("a changelog is row form by construction")
			}
			c := &capture{}
			row := func(k int64, s any, v any) exec.Row { return exec.Row{k, s, v, 0.0, nil} }
			feed := func(rows ...exec.Row) {
				for _, b := range makeBatches(t, mem, input{SampleSchema, rows}, len(rows), columnar) {
					if _, err := exec.Dispatch(t.Context(), u, true, 0, b, c); err != nil {
						t.Fatal(err)
					}
					b.Release()
				}
			}
			feed(row(1, "a", int64(5)), row(2, "b", int64(1)), row(3, "a", int64(2)))
			feed(row(4, "b", nil), row(5, "c", int64(7)))
			feed(row(6, "a", int64(9)))
			if err := u.Finish(t.Context(), 0, c); err != nil {
				t.Fatal(err)
			}
			got, _ := c.rows()
			var lines []string
			for _, r := range got {
				lines = append(lines, fmt.Sprint(r))
			}
			want := []string{
				"[a 2 5 +I]", "[b 1 1 +I]",
				"[b 1 1 -U]", "[b 2 1 +U]", "[c 1 7 +I]",
				"[a 2 5 -U]", "[a 3 9 +U]",
			}
			if strings.Join(lines, " ") != strings.Join(want, " ") {
				t.Fatalf("changelog\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
