package dispatch

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// The kernel spells values as the shell and CAST(x AS VARCHAR) do (the
// canonical text of package sqlvalue): it once printed 1.0E20 where the
// shell printed 100000000000000000000; both print 1e+20 now.
func TestCellsUseTheCanonicalText(t *testing.T) {
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	for _, c := range []struct {
		v    any
		t    arrow.DataType
		want string
	}{
		{1e20, arrow.PrimitiveTypes.Float64, "1e+20"},
		{true, arrow.FixedWidthTypes.Boolean, "true"},
		{arrow.MonthDayNanoInterval{Months: 1, Days: 2, Nanoseconds: 3 * 3600e9}, arrow.FixedWidthTypes.MonthDayNanoInterval, "1 month 2 days 03:00:00"},
		{exec.Row{nil}, st, "{a=NULL}"},
		{"NULL", arrow.BinaryTypes.String, "NULL"},
	} {
		got := cellOf(c.v, c.t)
		if got.null || got.s != c.want {
			t.Errorf("cellOf(%v) = %+v, want %q", c.v, got, c.want)
		}
	}
	if got := cellOf(nil, arrow.PrimitiveTypes.Int64); !got.null {
		t.Errorf("NULL cell: %+v", got)
	}
}
