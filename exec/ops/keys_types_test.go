package ops

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// INTERVAL and TIME as keys. Intervals compare as PostgreSQL's
// interval_cmp does (a month is 30 days, a day 24 hours), so '1 month',
// '30 days' and '720 hours' are one group, one join key, one set member,
// and peers in ORDER BY; the classes below are worked out by hand.

var (
	ivT      = arrow.FixedWidthTypes.MonthDayNanoInterval
	tmT      = arrow.FixedWidthTypes.Time64us
	tm3T     = arrow.FixedWidthTypes.Time32ms
	kvSchema = arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "iv", Type: ivT, Nullable: true},
		{Name: "tm", Type: tmT, Nullable: true},
		{Name: "tm3", Type: tm3T, Nullable: true},
	}, nil)
)

func iv(months, days int32, ns int64) arrow.MonthDayNanoInterval {
	return arrow.MonthDayNanoInterval{Months: months, Days: days, Nanoseconds: ns}
}

const hour = int64(3600e9)

// kvRows: id, interval, TIME (µs since midnight), TIME(3) (ms).
func kvRows() []exec.Row {
	tm := func(h, m, s, us int64) any { return arrow.Time64(((h*60+m)*60+s)*1e6 + us) }
	return []exec.Row{
		{int64(0), iv(1, 0, 0), tm(12, 0, 0, 0), arrow.Time64(1000)},               // class A
		{int64(1), iv(0, 30, 0), tm(1, 0, 0, 0), arrow.Time64(1000)},               // A
		{int64(2), iv(0, 0, 720*hour), tm(12, 0, 0, 0), nil},                       // A
		{int64(3), iv(0, 1, 0), nil, arrow.Time64(500)},                            // B
		{int64(4), iv(0, 0, 24*hour), tm(1, 0, 0, 0), arrow.Time64(500)},           // B
		{int64(5), iv(0, 0, 25*hour), tm(23, 59, 59, 999999), arrow.Time64(2000)},  // C
		{int64(6), nil, tm(12, 0, 0, 0), nil},                                      // NULL
		{int64(7), iv(0, -1, 0), tm(0, 0, 0, 0), arrow.Time64(500)},                // D
		{int64(8), iv(0, 0, 24*hour-1000), tm(0, 0, 0, 1), arrow.Time64(86399999)}, // E
	}
}

// ivClass is each row's interval class (-1: NULL).
var ivClass = []int{0, 0, 0, 1, 1, 2, -1, 3, 4}

func kvInput(bool) []input { return []input{{kvSchema, kvRows()}} }

func TestIntervalGroupBy(t *testing.T) {
	out := arrow.NewSchema([]arrow.Field{
		{Name: "iv", Type: ivT, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
		{Name: "first", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "d", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	aggs := []AggSpec{
		{Func: "count_star", Col: -1, Type: arrow.PrimitiveTypes.Int64},
		{Func: "min", Col: 0, Type: arrow.PrimitiveTypes.Int64},
		// COUNT(DISTINCT iv) within the group: the three spellings of a
		// month are one value.
		{Func: "count", Distinct: true, Col: 1, Type: arrow.PrimitiveTypes.Int64},
	}
	runCase(t, opCase{
		name:   "group by interval",
		newOp:  func(mem memory.Allocator) exec.Operator { return NewHashAggregate([]int{1}, aggs, out, mem) },
		inputs: kvInput,
		want: func([]input) []exec.Row {
			// A group shows the key of its first row.
			return []exec.Row{
				{iv(1, 0, 0), int64(3), int64(0), int64(1)},
				{iv(0, 1, 0), int64(2), int64(3), int64(1)},
				{iv(0, 0, 25*hour), int64(1), int64(5), int64(1)},
				{nil, int64(1), int64(6), int64(0)},
				{iv(0, -1, 0), int64(1), int64(7), int64(1)},
				{iv(0, 0, 24*hour-1000), int64(1), int64(8), int64(1)},
			}
		},
	})
}

func TestTimeGroupBy(t *testing.T) {
	out := arrow.NewSchema([]arrow.Field{
		{Name: "tm3", Type: tm3T, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
		{Name: "lo", Type: tmT, Nullable: true},
		{Name: "hi", Type: tmT, Nullable: true},
	}, nil)
	aggs := []AggSpec{
		{Func: "count_star", Col: -1, Type: arrow.PrimitiveTypes.Int64},
		{Func: "min", Col: 2, Type: tmT},
		{Func: "max", Col: 2, Type: tmT},
	}
	runCase(t, opCase{
		name:   "group by TIME(3)",
		newOp:  func(mem memory.Allocator) exec.Operator { return NewHashAggregate([]int{3}, aggs, out, mem) },
		inputs: kvInput,
		want: func([]input) []exec.Row {
			noon, one := arrow.Time64(12*hour/1000), arrow.Time64(hour/1000)
			return []exec.Row{
				{arrow.Time64(1000), int64(2), one, noon},
				{nil, int64(2), noon, noon},
				{arrow.Time64(500), int64(3), arrow.Time64(0), one},
				{arrow.Time64(2000), int64(1), arrow.Time64(86399999999), arrow.Time64(86399999999)},
				{arrow.Time64(86399999), int64(1), arrow.Time64(1), arrow.Time64(1)},
			}
		},
	})
}

// ORDER BY interval: -1 day < 23:59:59.999 < 1 day = 24 hours < 25 hours
// < 1 month = 30 days = 720 hours, NULL last; ties by id.
func TestIntervalAndTimeOrderBy(t *testing.T) {
	byID := func(ids ...int) func([]input) []exec.Row {
		return func(ins []input) []exec.Row {
			var out []exec.Row
			for _, id := range ids {
				out = append(out, ins[0].rows[id])
			}
			return out
		}
	}
	for _, c := range []struct {
		name string
		keys []SortKey
		want []int
	}{
		{"interval", []SortKey{{Col: 1}, {Col: 0}}, []int{7, 8, 3, 4, 5, 0, 1, 2, 6}},
		{"interval desc", []SortKey{{Col: 1, Desc: true, NullsFirst: true}, {Col: 0}}, []int{6, 0, 1, 2, 5, 3, 4, 8, 7}},
		{"time", []SortKey{{Col: 2, NullsFirst: true}, {Col: 0}}, []int{3, 7, 8, 1, 4, 0, 2, 6, 5}},
		{"time(3) desc nulls last", []SortKey{{Col: 3, Desc: true}, {Col: 0, Desc: true}}, []int{8, 5, 1, 0, 7, 4, 3, 6, 2}},
	} {
		runCase(t, opCase{
			name:    c.name,
			newOp:   func(mem memory.Allocator) exec.Operator { return NewSort(c.keys, -1, mem) },
			inputs:  kvInput,
			want:    byID(c.want...),
			ordered: true,
		})
	}
}

// An equi-join on an interval matches the equal intervals, not only the
// identical ones; on a TIME, the equal times.
func TestIntervalAndTimeJoinKeys(t *testing.T) {
	out := arrow.NewSchema(append(append([]arrow.Field(nil), kvSchema.Fields()...), kvSchema.Fields()...), nil)
	for _, c := range []struct {
		name string
		key  int
		same func(i, j int) bool
	}{
		{"interval", 1, func(i, j int) bool { return ivClass[i] >= 0 && ivClass[i] == ivClass[j] }},
		{"time", 2, func(i, j int) bool {
			a, b := kvRows()[i][2], kvRows()[j][2]
			return a != nil && a == b
		}},
	} {
		runCase(t, opCase{
			name: "join on " + c.name,
			newOp: func(mem memory.Allocator) exec.Operator {
				return NewHashJoin(Inner, []int{c.key}, []int{c.key}, out, mem)
			},
			inputs: func(bool) []input { return []input{{kvSchema, kvRows()}, {kvSchema, kvRows()}} },
			want: func([]input) []exec.Row {
				rows := kvRows()
				var want []exec.Row
				for i := range rows {
					for j := range rows {
						if c.same(i, j) {
							want = append(want, append(append(exec.Row(nil), rows[i]...), rows[j]...))
						}
					}
				}
				return want
			},
		})
	}
}

// INTERSECT and EXCEPT compare intervals as =: {1 month, 1 day, 25 hours,
// NULL} INTERSECT {720 hours, 24 hours, NULL, -1 day} is {1 month, 1 day,
// NULL}, EXCEPT leaves {25 hours}.
func TestIntervalSetOps(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "iv", Type: ivT, Nullable: true}}, nil)
	left := []exec.Row{{iv(1, 0, 0)}, {iv(0, 1, 0)}, {iv(0, 0, 25*hour)}, {nil}, {iv(0, 30, 0)}}
	right := []exec.Row{{iv(0, 0, 720*hour)}, {iv(0, 0, 24*hour)}, {nil}, {iv(0, -1, 0)}}
	for _, c := range []struct {
		kind SetOpKind
		want []exec.Row
	}{
		{Intersect, []exec.Row{{iv(1, 0, 0)}, {iv(0, 1, 0)}, {nil}}},
		{Except, []exec.Row{{iv(0, 0, 25*hour)}}},
	} {
		runCase(t, opCase{
			name:   c.kind.String(),
			newOp:  func(mem memory.Allocator) exec.Operator { return NewSetOp(c.kind, false, schema, mem) },
			inputs: func(bool) []input { return []input{{schema, left}, {schema, right}} },
			want:   func([]input) []exec.Row { return c.want },
		})
	}
}

// The key encoding is the one both paths and every operator share: equal
// intervals encode equally from a row value and from a column, TIME(3)
// and TIME(6) values as their ticks.
func TestKeyEncodingTypes(t *testing.T) {
	rows := kvRows()
	rec, err := exec.EncodeRows(memory.NewGoAllocator(), kvSchema, rows)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	for c := 1; c < 4; c++ {
		for i, r := range rows {
			fromRow := appendKeyValue(nil, r[c])
			fromArr, _ := appendKeyArr(nil, rec.Column(c), i)
			if string(fromRow) != string(fromArr) {
				t.Errorf("column %d row %d: row encoding %x, column encoding %x", c, i, fromRow, fromArr)
			}
		}
	}
	for i := range rows {
		for j := range rows {
			same := string(appendKeyValue(nil, rows[i][1])) == string(appendKeyValue(nil, rows[j][1]))
			if want := ivClass[i] == ivClass[j]; same != want {
				t.Errorf("intervals of rows %d and %d encode equal: %v, want %v", i, j, same, want)
			}
		}
	}
	// The retracting top-n keys rows bit for bit: a month is not 30 days.
	if string(appendExactValue(nil, iv(1, 0, 0))) == string(appendExactValue(nil, iv(0, 30, 0))) {
		t.Error("exact encoding: '1 month' = '30 days'")
	}
	if fmt.Sprint(appendExactValue(nil, rows[0][2])) != fmt.Sprint(appendKeyValue(nil, rows[0][2])) {
		t.Error("exact encoding of a TIME differs from the key encoding")
	}
}
