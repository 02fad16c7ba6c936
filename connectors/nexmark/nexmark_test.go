package nexmark

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

var tsMs = &arrow.TimestampType{Unit: arrow.Millisecond}

func TestRegistered(t *testing.T) {
	f, ok := connectors.Lookup("nexmark")
	if !ok {
		t.Fatal("nexmark connector is not registered")
	}
	tab, err := f(map[string]string{"connector": "nexmark", "events.num": "10"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !tab.Bounded() {
		t.Error("events.num=10 should be bounded")
	}
	if !strings.Contains(tab.Describe(), "events.num=10") {
		t.Errorf("Describe() = %q", tab.Describe())
	}
	unb, err := f(map[string]string{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if unb.Bounded() {
		t.Error("no events.num should be unbounded")
	}
}

func TestWideSchemaMatchesDDL(t *testing.T) {
	tab, err := NewTable(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	person := arrow.StructOf(
		arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "emailAddress", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "creditCard", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "city", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "state", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "dateTime", Type: tsMs, Nullable: true},
		arrow.Field{Name: "extra", Type: arrow.BinaryTypes.String, Nullable: true},
	)
	want := []string{"event_type", "person", "auction", "bid", "dateTime"}
	got := tab.Schema()
	if got.NumFields() != len(want) {
		t.Fatalf("schema %s", got)
	}
	for i, n := range want {
		if got.Field(i).Name != n {
			t.Errorf("column %d = %q, want %q", i, got.Field(i).Name, n)
		}
	}
	if !arrow.TypeEqual(got.Field(1).Type, person) {
		t.Errorf("person type %s, want %s", got.Field(1).Type, person)
	}
	if got.Field(0).Type.ID() != arrow.INT32 || !arrow.TypeEqual(got.Field(4).Type, tsMs) {
		t.Errorf("event_type/dateTime types: %s", got)
	}
	for table, cols := range map[string]string{
		"bid":     "auction,bidder,price,channel,url,dateTime,extra",
		"auction": "id,itemName,description,initialBid,reserve,dateTime,expires,seller,category,extra",
		"person":  "id,name,emailAddress,creditCard,city,state,dateTime,extra",
	} {
		tab, err := NewTable(map[string]string{"table": table}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range tab.Schema().Fields() {
			names = append(names, f.Name)
		}
		if strings.Join(names, ",") != cols {
			t.Errorf("table %s columns %v, want %s", table, names, cols)
		}
	}
}

// The CREATE TABLE of ddl_gen.sql declares no dateTime column (the planner
// computes it); names may come back in another case.
func TestDeclaredSubsetAndCase(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	gen, _ := NewTable(nil, nil)
	fs := gen.Schema().Fields()
	lower := func(typ arrow.DataType) arrow.DataType {
		st, ok := typ.(*arrow.StructType)
		if !ok {
			return typ
		}
		var out []arrow.Field
		for _, f := range st.Fields() {
			out = append(out, arrow.Field{Name: strings.ToLower(f.Name), Type: f.Type, Nullable: true})
		}
		return arrow.StructOf(out...)
	}
	declared := arrow.NewSchema([]arrow.Field{
		{Name: "event_type", Type: fs[0].Type, Nullable: true},
		{Name: "BID", Type: lower(fs[3].Type), Nullable: true},
	}, nil)
	tab := newTestTable(t, mem, map[string]string{"events.num": "100"}, declared)
	if tab.Schema() != declared {
		t.Errorf("schema should be the declared one")
	}
	c := scan(t, tab, connectors.ScanSpec{})
	defer c.release()
	if got := c.recs[0].Schema().Field(1).Name; got != "BID" {
		t.Errorf("declared name not kept: %q", got)
	}
	rows := c.rows()
	full := scanRows(t, newTestTable(t, mem, map[string]string{"events.num": "100"}, nil), connectors.ScanSpec{})
	for i := range rows {
		if !reflect.DeepEqual(rows[i], exec.Row{full[i][0], full[i][3]}) {
			t.Fatalf("row %d: %v, want %v", i, rows[i], full[i])
		}
	}
}

func TestOptionErrors(t *testing.T) {
	cases := []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"events.nmu": "1"}, "unknown option 'events.nmu'"},
		{map[string]string{"events.num": "ten"}, "'events.num' = 'ten': not an integer"},
		{map[string]string{"events.num": "-1"}, "'events.num' = '-1': must be at least 0"},
		{map[string]string{"first-event.rate": "1.5"}, "'first-event.rate'"},
		{map[string]string{"batch.size": "0"}, "'batch.size' = '0'"},
		{map[string]string{"seed": "x"}, "'seed' = 'x'"},
		{map[string]string{"table": "bids"}, "'table' = 'bids'"},
		{map[string]string{"person.proportion": "0"}, "'person.proportion' = 0"},
		{map[string]string{"auction.proportion": "0"}, "'auction.proportion' = 0"},
	}
	for _, tc := range cases {
		_, err := NewTable(tc.opts, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewTable(%v) error %v, want it to contain %q", tc.opts, err, tc.want)
		}
	}
}

func TestDeclaredMismatch(t *testing.T) {
	cases := []struct {
		fields []arrow.Field
		want   string
	}{
		{[]arrow.Field{{Name: "price", Type: arrow.PrimitiveTypes.Int32}}, `column "price" (position 1) is declared int32 but the generator produces int64`},
		{[]arrow.Field{{Name: "auction", Type: arrow.PrimitiveTypes.Int64}, {Name: "bidprice", Type: arrow.PrimitiveTypes.Int64}}, `declared column "bidprice" (position 2) is not generated`},
		{[]arrow.Field{{Name: "dateTime", Type: &arrow.TimestampType{Unit: arrow.Microsecond}}}, `column "dateTime" (position 1) is declared timestamp[us]`},
		{[]arrow.Field{{Name: "url", Type: arrow.BinaryTypes.String}, {Name: "URL", Type: arrow.BinaryTypes.String}}, `"URL" (position 2) is declared twice`},
	}
	for _, tc := range cases {
		_, err := NewTable(map[string]string{"table": "bid"}, arrow.NewSchema(tc.fields, nil))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("declared %v: error %v, want it to contain %q", tc.fields, err, tc.want)
		}
	}
	// A ROW whose fields are out of order does not match either.
	bad := arrow.StructOf(
		arrow.Field{Name: "bidder", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "auction", Type: arrow.PrimitiveTypes.Int64},
	)
	_, err := NewTable(nil, arrow.NewSchema([]arrow.Field{{Name: "bid", Type: bad}}, nil))
	if err == nil || !strings.Contains(err.Error(), `column "bid" (position 1) is declared struct<bidder`) {
		t.Errorf("out-of-order ROW: %v", err)
	}
}

func TestOpenColumnOutOfRange(t *testing.T) {
	tab, _ := NewTable(map[string]string{"table": "bid"}, nil)
	if _, err := tab.Open(connectors.ScanSpec{Columns: []int{7}}); err == nil || !strings.Contains(err.Error(), "scan column 7 out of range") {
		t.Errorf("got %v", err)
	}
}

func TestClock(t *testing.T) {
	base := time.Date(2015, 7, 15, 0, 0, 0, 0, time.UTC).UnixMilli()
	c := newClock(0, 0)
	if got := c.timeMs(0); got != base {
		t.Errorf("event 0 at %d, want %d", got, base)
	}
	if got := c.timeMs(10_000); got != base+1000 {
		t.Errorf("default rate: event 10000 at +%d ms, want +1000", got-base)
	}
	c = newClock(3, 3)
	if got := c.offsetUs(1); got != 333_333 {
		t.Errorf("rate 3: event 1 at %d µs", got)
	}
	// Square wave: 10/s for 300 s (3000 events), then 20/s for 300 s.
	c = newClock(10, 20)
	for _, tc := range []struct{ n, us int64 }{
		{0, 0}, {3000, 300_000_000}, {3020, 301_000_000}, {9000, 600_000_000}, {9010, 601_000_000},
	} {
		if got := c.offsetUs(tc.n); got != tc.us {
			t.Errorf("square wave: event %d at %d µs, want %d", tc.n, got, tc.us)
		}
	}
	var prev int64 = -1
	for n := int64(0); n < 20000; n += 7 {
		if o := c.offsetUs(n); o < prev {
			t.Fatalf("time goes back at %d", n)
		} else {
			prev = o
		}
	}
	// No overflow far out.
	if got := mulDiv(1<<50, 1_000_000, 7); got <= 0 {
		t.Errorf("mulDiv overflowed: %d", got)
	}
}

func TestKindArithmetic(t *testing.T) {
	g := newGen(&config{personProp: 2, auctionProp: 3, bidProp: 5})
	var counts [3]int64
	for n := int64(0); n < 1000; n++ {
		k := g.kind(n)
		counts[k]++
		for kk := uint8(0); kk < 3; kk++ {
			if got, want := g.countOfKind(n+1, kk), counts[kk]; got != want {
				t.Fatalf("countOfKind(%d, %d) = %d, want %d", n+1, kk, got, want)
			}
			next := g.nextOfKind(n, kk)
			if g.kind(next) != kk || next < n {
				t.Fatalf("nextOfKind(%d, %d) = %d", n, kk, next)
			}
			for m := n; m < next; m++ {
				if g.kind(m) == kk {
					t.Fatalf("nextOfKind(%d, %d) = %d skips %d", n, kk, next, m)
				}
			}
		}
	}
	if counts != [3]int64{200, 300, 500} {
		t.Errorf("counts %v", counts)
	}
}

func TestStrings(t *testing.T) {
	r := rng{s: 42}
	var buf []byte
	for i := 0; i < 2000; i++ {
		s := nextString(buf[:0], &r, 20, ' ')
		if len(s) > 19 || (len(s) > 0 && (s[0] == ' ' || s[len(s)-1] == ' ')) {
			t.Fatalf("nextString %q", s)
		}
		e := nextExactString(buf[:0], &r, i%37)
		if len(e) != i%37 || !regexp.MustCompile(`^[a-z]*$`).Match(e) {
			t.Fatalf("nextExactString(%d) = %q", i%37, e)
		}
	}
	// Letters are about uniform and 1 in 13 characters of nextString is
	// the special one.
	var letters [26]int
	buf = nextExactString(buf[:0], &r, 260_000)
	for _, c := range buf {
		letters[c-'a']++
	}
	for i, n := range letters {
		if n < 9000 || n > 11000 {
			t.Errorf("letter %c appears %d times in 260000, want ~10000", 'a'+i, n)
		}
	}
	special, total := 0, 0
	for i := 0; i < 20000; i++ {
		s := nextString(buf[:0], &r, 100, '_')
		special += strings.Count(string(s), "_")
		total += len(s)
	}
	if frac := float64(special) / float64(total); frac < 0.07 || frac > 0.084 {
		t.Errorf("special fraction %.4f, want ~1/13", frac)
	}
	if got := string(appendPadded4(nil, 42)); got != "0042" {
		t.Errorf("appendPadded4(42) = %q", got)
	}
}

// A TIMESTAMP(3) the binder tags with a zone is accepted and kept.
func TestDeclaredTimestampZone(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	declared := arrow.NewSchema([]arrow.Field{
		{Name: "price", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "dateTime", Type: arrow.FixedWidthTypes.Timestamp_ms, Nullable: true},
	}, nil)
	tab := newTestTable(t, mem, map[string]string{"table": "bid", "events.num": "100"}, declared)
	c := scan(t, tab, connectors.ScanSpec{})
	defer c.release()
	if got := c.recs[0].Column(1).DataType(); !arrow.TypeEqual(got, arrow.FixedWidthTypes.Timestamp_ms) {
		t.Errorf("dateTime built as %s", got)
	}
	if c.numRows() != 92 {
		t.Errorf("%d rows, want 92", c.numRows())
	}
}
