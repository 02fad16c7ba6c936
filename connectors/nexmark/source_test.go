package nexmark

import (
	"context"
	"errors"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

func TestSourceCapabilities(t *testing.T) {
	tab, _ := NewTable(nil, nil)
	src, err := tab.Open(connectors.ScanSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if src.Kind() != "nexmark-source" || !src.Capabilities().EmitsColumnar {
		t.Errorf("kind %q caps %+v", src.Kind(), src.Capabilities())
	}
}

// Event n is the same whatever the batch size and however often it is
// generated; a different seed changes the values.
func TestDeterminism(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, table := range []string{"nexmark", "bid", "auction", "person"} {
		opts := func(batch, seed string) map[string]string {
			return map[string]string{"table": table, "events.num": "3000", "batch.size": batch, "seed": seed}
		}
		ref := scanRows(t, newTestTable(t, mem, opts("8192", "0"), nil), connectors.ScanSpec{})
		if len(ref) == 0 {
			t.Fatalf("%s: no rows", table)
		}
		for _, bs := range []string{"8192", "7", "1000"} {
			got := scanRows(t, newTestTable(t, mem, opts(bs, "0"), nil), connectors.ScanSpec{})
			if !reflect.DeepEqual(got, ref) {
				t.Fatalf("%s: batch.size=%s gives different rows", table, bs)
			}
		}
		// One-row batches, over a prefix (a bounded table is a prefix of
		// the unbounded sequence).
		one := opts("1", "0")
		one["events.num"] = "300"
		got := scanRows(t, newTestTable(t, mem, one, nil), connectors.ScanSpec{})
		if len(got) == 0 || !reflect.DeepEqual(got, ref[:len(got)]) {
			t.Fatalf("%s: batch.size=1 gives different rows", table)
		}
		other := scanRows(t, newTestTable(t, mem, opts("8192", "7"), nil), connectors.ScanSpec{})
		if len(other) != len(ref) {
			t.Fatalf("%s: seed changed the row count", table)
		}
		if reflect.DeepEqual(other, ref) {
			t.Errorf("%s: seed 7 gives the same rows as seed 0", table)
		}
	}
}

func TestBatchSizeFromSpec(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tab := newTestTable(t, mem, map[string]string{"events.num": "1000"}, nil)
	c := scan(t, tab, connectors.ScanSpec{BatchSize: 300})
	defer c.release()
	var sizes []int64
	for _, r := range c.recs {
		sizes = append(sizes, r.NumRows())
	}
	if !reflect.DeepEqual(sizes, []int64{300, 300, 300, 100}) {
		t.Errorf("batch sizes %v", sizes)
	}
	// An explicit 'batch.size' wins over the planner's preference.
	tab = newTestTable(t, mem, map[string]string{"events.num": "1000", "batch.size": "600"}, nil)
	c2 := scan(t, tab, connectors.ScanSpec{BatchSize: 300})
	defer c2.release()
	if len(c2.recs) != 2 || c2.recs[0].NumRows() != 600 {
		t.Errorf("batch.size=600: %d batches", len(c2.recs))
	}
}

func TestProportions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct {
		opts map[string]string
		want [3]int
	}{
		{map[string]string{"events.num": "50000"}, [3]int{1000, 3000, 46000}},
		{map[string]string{"events.num": "50000", "person.proportion": "2", "auction.proportion": "2", "bid.proportion": "6"}, [3]int{10000, 10000, 30000}},
		{map[string]string{"events.num": "1000", "bid.proportion": "0"}, [3]int{250, 750, 0}},
	} {
		tab := newTestTable(t, mem, tc.opts, nil)
		rows := scanRows(t, tab, connectors.ScanSpec{Columns: []int{0}})
		var got [3]int
		for _, r := range rows {
			got[r[0].(int32)]++
		}
		if got != tc.want {
			t.Errorf("%v: counts %v, want %v", tc.opts, got, tc.want)
		}
		// The flat tables hold exactly their kind's share.
		for k, table := range []string{"person", "auction", "bid"} {
			opts := map[string]string{"table": table}
			for key, v := range tc.opts {
				opts[key] = v
			}
			c := scan(t, newTestTable(t, mem, opts, nil), connectors.ScanSpec{Columns: []int{0}})
			if n := c.numRows(); n != tc.want[k] {
				t.Errorf("%v table %s: %d rows, want %d", tc.opts, table, n, tc.want[k])
			}
			c.release()
		}
	}
}

func TestProjection(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, table := range []string{"nexmark", "bid", "auction", "person"} {
		opts := map[string]string{"table": table, "events.num": "2000", "batch.size": "333"}
		tab := newTestTable(t, mem, opts, nil)
		full := scanRows(t, tab, connectors.ScanSpec{})
		ncol := tab.Schema().NumFields()
		cols := []int{ncol - 1, 0, ncol / 2}
		c := scan(t, tab, connectors.ScanSpec{Columns: cols})
		sch := c.recs[0].Schema()
		for i, ci := range cols {
			if sch.Field(i).Name != tab.Schema().Field(ci).Name {
				t.Errorf("%s: projected column %d is %q", table, i, sch.Field(i).Name)
			}
		}
		got := c.rows()
		c.release()
		if len(got) != len(full) {
			t.Fatalf("%s: %d rows projected, %d full", table, len(got), len(full))
		}
		for i := range got {
			want := exec.Row{full[i][cols[0]], full[i][cols[1]], full[i][cols[2]]}
			if !reflect.DeepEqual(got[i], want) {
				t.Fatalf("%s row %d: %v, want %v", table, i, got[i], want)
			}
		}
	}
}

// A scan of no columns (COUNT(*)) still carries its row counts.
func TestNoColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tab := newTestTable(t, mem, map[string]string{"events.num": "5000", "table": "bid"}, nil)
	c := scan(t, tab, connectors.ScanSpec{Columns: []int{}})
	defer c.release()
	if n := c.numRows(); n != 4600 {
		t.Errorf("%d rows, want 4600", n)
	}
	if c.recs[0].NumCols() != 0 {
		t.Errorf("%d columns", c.recs[0].NumCols())
	}
}

// The flat tables are the wide table's rows of their kind: the view columns
// of ddl_views.sql are exactly the ROW's fields, in order.
func TestFlatTablesAgreeWithWide(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	wide := scanRows(t, newTestTable(t, mem, map[string]string{"events.num": "5000", "seed": "3"}, nil), connectors.ScanSpec{})
	for k, table := range []string{"person", "auction", "bid"} {
		flat := scanRows(t, newTestTable(t, mem, map[string]string{"events.num": "5000", "seed": "3", "table": table, "batch.size": "100"}, nil), connectors.ScanSpec{})
		var want []exec.Row
		for _, r := range wide {
			et := int(r[0].(int32))
			for c := 1; c <= 3; c++ {
				if (r[c] != nil) != (c == et+1) {
					t.Fatalf("event_type %d row: column %d null=%v: %v", et, c, r[c] == nil, r)
				}
			}
			if et != k {
				continue
			}
			row := r[k+1].(exec.Row)
			if !reflect.DeepEqual(row[fieldIndex(table, "dateTime")], r[4]) {
				t.Fatalf("%s: ROW dateTime %v differs from the event's %v", table, row, r[4])
			}
			want = append(want, row)
		}
		if !reflect.DeepEqual(flat, want) {
			t.Fatalf("%s: flat table (%d rows) differs from the wide table's rows (%d)", table, len(flat), len(want))
		}
	}
}

func fieldIndex(table, name string) int {
	tab, _ := NewTable(map[string]string{"table": table}, nil)
	return tab.Schema().FieldIndices(name)[0]
}

func TestEventTimesAndWatermarks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	base := time.Date(2015, 7, 15, 0, 0, 0, 0, time.UTC).UnixMilli()
	// Rate 2000/s: 200 events take 0.1 s of pacing and event n is at n/2 ms.
	tab := newTestTable(t, mem, map[string]string{"events.num": "200", "first-event.rate": "2000", "next-event.rate": "2000"}, nil)
	c := scan(t, tab, connectors.ScanSpec{Columns: []int{4}})
	defer c.release()
	rows := c.rows()
	if len(rows) != 200 {
		t.Fatalf("%d rows", len(rows))
	}
	for n, r := range rows {
		if got, want := int64(r[0].(arrow.Timestamp)), base+int64(n)/2; got != want {
			t.Fatalf("event %d at %d, want %d", n, got, want)
		}
	}
	// One watermark per batch plus the final one; non-decreasing, each the
	// batch's last event time in µs.
	if len(c.wms) != len(c.recs)+1 || c.wms[len(c.wms)-1] != exec.MaxWatermark {
		t.Fatalf("%d batches, watermarks %v", len(c.recs), c.wms)
	}
	seen := 0
	for i, r := range c.recs {
		seen += int(r.NumRows())
		if want := int64(rows[seen-1][0].(arrow.Timestamp)) * 1000; c.wms[i] != want {
			t.Errorf("watermark %d = %d, want %d", i, c.wms[i], want)
		}
		if i > 0 && c.wms[i] < c.wms[i-1] {
			t.Errorf("watermark went back: %v", c.wms)
		}
	}
}

func TestBoundedStopsAtEventsNum(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var p exec.Progress
	tab := newTestTable(t, mem, map[string]string{"events.num": "10001", "batch.size": "4096"}, nil)
	c := scan(t, tab, connectors.ScanSpec{Progress: &p, Columns: []int{0}})
	defer c.release()
	if n := c.numRows(); n != 10001 {
		t.Errorf("%d rows, want 10001", n)
	}
	if p.RowsRead.Load() != 10001 || p.RowsTotal.Load() != 10001 {
		t.Errorf("progress %d/%d", p.RowsRead.Load(), p.RowsTotal.Load())
	}
	if c.wms[len(c.wms)-1] != exec.MaxWatermark {
		t.Errorf("last watermark %d", c.wms[len(c.wms)-1])
	}
	var bp exec.Progress
	c2 := scan(t, newTestTable(t, mem, map[string]string{"events.num": "10001", "table": "auction"}, nil), connectors.ScanSpec{Progress: &bp})
	defer c2.release()
	if bp.RowsTotal.Load() != 600 || c2.numRows() != 600 {
		t.Errorf("auction: total %d, rows %d, want 600", bp.RowsTotal.Load(), c2.numRows())
	}
}

func TestErrStop(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tab := newTestTable(t, mem, map[string]string{"batch.size": "100"}, nil) // unbounded
	src, _ := tab.OpenSource(connectors.ScanSpec{})
	c := &collector{stopAfter: 3}
	defer c.release()
	if err := src.Run(context.Background(), c); err != nil {
		t.Fatalf("Run after ErrStop: %v", err)
	}
	if len(c.recs) != 3 {
		t.Errorf("%d batches after ErrStop on the 3rd", len(c.recs))
	}
	for _, wm := range c.wms {
		if wm == exec.MaxWatermark {
			t.Error("a stopped unbounded source must not emit the final watermark")
		}
	}
}

type failingEmitter struct{ collector }

var errSink = errors.New("sink broke")

func (f *failingEmitter) Emit(context.Context, *exec.Batch) error { return errSink }

func TestEmitErrorPropagates(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src, _ := newTestTable(t, mem, map[string]string{"events.num": "100"}, nil).OpenSource(connectors.ScanSpec{})
	if err := src.Run(context.Background(), &failingEmitter{}); !errors.Is(err, errSink) {
		t.Errorf("Run = %v, want the sink's error", err)
	}
}

// Cancelling an unbounded paced source returns promptly, both while it
// sleeps for the next event and between batches. The bound is a generous
// timeout, not a timing assertion.
func TestCancelPaced(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, rate := range []string{"1", "100000"} {
		tab := newTestTable(t, mem, map[string]string{"first-event.rate": rate}, nil)
		src, _ := tab.OpenSource(connectors.ScanSpec{})
		ctx, cancel := context.WithCancel(context.Background())
		first := make(chan struct{})
		c := &collector{onBatch: func(*exec.Batch) {
			select {
			case <-first:
			default:
				close(first)
			}
		}}
		done := make(chan error, 1)
		go func() { done <- src.Run(ctx, c) }()
		select {
		case <-first:
		case <-time.After(5 * time.Second):
			t.Fatalf("rate %s: no batch within 5s", rate)
		}
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("rate %s: Run = %v, want context.Canceled", rate, err)
			}
			t.Logf("rate %s: returned %v after cancel", rate, time.Since(start))
		case <-time.After(5 * time.Second):
			t.Fatalf("rate %s: Run did not return within 5s of cancel", rate)
		}
		c.release()
	}
}

// Pacing: at 1 event/s only the first event is due at once.
func TestPacedEmitsDueEvents(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tab := newTestTable(t, mem, map[string]string{"first-event.rate": "1", "events.num": "100"}, nil)
	src, _ := tab.OpenSource(connectors.ScanSpec{})
	c := &collector{stopAfter: 1}
	defer c.release()
	if err := src.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if c.recs[0].NumRows() != 1 {
		t.Errorf("first paced batch has %d rows, want 1", c.recs[0].NumRows())
	}
}

// Plausible values: the shapes of the reference generator.
func TestValueShapes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const events = 20000
	opts := func(table string) map[string]string {
		return map[string]string{"table": table, "events.num": strconv.Itoa(events)}
	}
	card := regexp.MustCompile(`^\d{4} \d{4} \d{4} \d{4}$`)
	email := regexp.MustCompile(`^[a-z ]*@[a-z ]*\.com$`)
	persons := scanRows(t, newTestTable(t, mem, opts("person"), nil), connectors.ScanSpec{})
	for i, r := range persons {
		if r[0].(int64) != firstPersonID+int64(i) {
			t.Fatalf("person %d has id %v", i, r[0])
		}
		name := strings.Split(r[1].(string), " ")
		if len(name) != 2 || !contains(firstNames, name[0]) || !contains(lastNames, name[1]) {
			t.Errorf("name %q", r[1])
		}
		if !email.MatchString(r[2].(string)) || !card.MatchString(r[3].(string)) {
			t.Errorf("email %q card %q", r[2], r[3])
		}
		if !contains(usCities, r[4].(string)) || !contains(usStates, r[5].(string)) {
			t.Errorf("city %q state %q", r[4], r[5])
		}
		if l := len(r[7].(string)); l < 80 || l > 180 {
			t.Errorf("person extra of %d bytes", l)
		}
	}
	auctions := scanRows(t, newTestTable(t, mem, opts("auction"), nil), connectors.ScanSpec{})
	for i, r := range auctions {
		if r[0].(int64) != firstAuctionID+int64(i) {
			t.Fatalf("auction %d has id %v", i, r[0])
		}
		initial, reserve := r[3].(int64), r[4].(int64)
		if initial < 100 || initial > 100_000_000 || reserve <= initial {
			t.Errorf("initialBid %d reserve %d", initial, reserve)
		}
		if r[6].(arrow.Timestamp) <= r[5].(arrow.Timestamp) {
			t.Errorf("expires %v not after %v", r[6], r[5])
		}
		// A seller is a person created by then (or within the id lead).
		if s := r[7].(int64); s < firstPersonID || s > firstPersonID+int64(len(persons))+personIDLead {
			t.Errorf("seller %d", s)
		}
		if c := r[8].(int64); c < firstCategoryID || c >= firstCategoryID+numCategories {
			t.Errorf("category %d", c)
		}
	}
	bids := scanRows(t, newTestTable(t, mem, opts("bid"), nil), connectors.ScanSpec{})
	hot, auctionCounts := 0, map[int64]int{}
	for _, r := range bids {
		a, bidder, price := r[0].(int64), r[1].(int64), r[2].(int64)
		auctionCounts[a]++
		if a < firstAuctionID || a > firstAuctionID+int64(len(auctions))+auctionIDLead {
			t.Errorf("bid on auction %d", a)
		}
		if bidder < firstPersonID || bidder > firstPersonID+int64(len(persons))+personIDLead {
			t.Errorf("bidder %d", bidder)
		}
		if price < 100 || price > 100_000_000 {
			t.Errorf("price %d", price)
		}
		ch, url := r[3].(string), r[4].(string)
		if contains(hotChannel, ch) {
			hot++
		} else if !strings.HasPrefix(ch, "channel-") {
			t.Errorf("channel %q", ch)
		}
		if !strings.HasPrefix(url, "https://www.nexmark.com/") || !strings.Contains(url, "/item.htm?query=1") {
			t.Errorf("url %q", url)
		}
	}
	// Half the bids go through a hot channel; the hot auction skew makes
	// one auction far more popular than an average one.
	if frac := float64(hot) / float64(len(bids)); frac < 0.45 || frac > 0.55 {
		t.Errorf("hot channel share %.3f", frac)
	}
	top := 0
	for _, n := range auctionCounts {
		top = max(top, n)
	}
	if avg := len(bids) / len(auctionCounts); top < 10*avg {
		t.Errorf("no hot auction: top %d bids, average %d", top, avg)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The string columns' data buffers are reserved from avgLen; an estimate
// that falls short costs a copy per batch.
func TestAvgLen(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, table := range []string{"person", "auction", "bid"} {
		tab := newTestTable(t, mem, map[string]string{"table": table, "events.num": "200000"}, nil)
		c := scan(t, tab, connectors.ScanSpec{})
		for i, col := range tab.cols {
			if col.leaf.typ != valString {
				continue
			}
			var bytes, rows int
			for _, r := range c.recs {
				a := r.Column(i).(*array.String)
				bytes += len(a.ValueBytes())
				rows += a.Len()
			}
			avg := float64(bytes) / float64(rows)
			t.Logf("%s.%s: %.1f (avgLen %d)", table, col.name, avg, col.leaf.avgLen)
			if avg > float64(col.leaf.avgLen)*1.15 || avg < float64(col.leaf.avgLen)*0.7 {
				t.Errorf("%s.%s: average length %.1f, avgLen says %d", table, col.name, avg, col.leaf.avgLen)
			}
		}
		c.release()
	}
}
