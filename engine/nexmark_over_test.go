package engine

import (
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// The Nexmark queries built on ROW_NUMBER() OVER (q9, q18, q19) in batch
// mode, over the bounded generator. Their ORDER BY leaves ties, so which
// row a rank picks among equals may differ from any one reference: each
// is checked by the properties that hold whatever the tie-break, computed
// from the Parquet copy's rows.
func TestNexmarkOverBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s, "SET 'parallelism' = '2'")
	mustExec(t, s, nexmarkDDL(t, "ddl_gen.sql", "nexmark")...)
	d := parquetCopy(t, s)
	mustExec(t, s, "SET 'execution.runtime-mode' = 'batch'")
	ms := func(v any) int64 { return int64(v.(arrow.Timestamp)) }
	byAuction := map[int64][]nxBid{}
	for _, b := range d.bids {
		byAuction[b.auction] = append(byAuction[b.auction], b)
	}

	t.Run("q19", func(t *testing.T) { // the top 10 bids of each auction by price
		_, sel := nexmarkQuery(t, "q19")
		rows := runRows(t, s, sel)
		got := map[int64][]exec.Row{}
		for _, r := range rows {
			got[r[0].(int64)] = append(got[r[0].(int64)], r)
		}
		if len(got) != len(byAuction) {
			t.Fatalf("%d auctions, want %d", len(got), len(byAuction))
		}
		for a, bids := range byAuction {
			prices := make([]int64, len(bids))
			for i, b := range bids {
				prices[i] = b.price
			}
			sort.Slice(prices, func(i, j int) bool { return prices[i] > prices[j] })
			k := min(10, len(prices))
			rs := got[a]
			if len(rs) != k {
				t.Fatalf("auction %d: %d rows, want %d", a, len(rs), k)
			}
			sort.Slice(rs, func(i, j int) bool { return rs[i][7].(int64) < rs[j][7].(int64) })
			for i, r := range rs {
				if r[7].(int64) != int64(i+1) || r[2].(int64) != prices[i] {
					t.Fatalf("auction %d: rank %d is (%v, price %v), want (%d, price %d)", a, i+1, r[7], r[2], i+1, prices[i])
				}
			}
		}
	})

	t.Run("q18", func(t *testing.T) { // each bidder's last bid per auction
		_, sel := nexmarkQuery(t, "q18")
		rows := runRows(t, s, sel)
		last := map[[2]int64]int64{}
		for _, b := range d.bids {
			k := [2]int64{b.bidder, b.auction}
			if v, ok := last[k]; !ok || b.ms > v {
				last[k] = b.ms
			}
		}
		if len(rows) != len(last) {
			t.Fatalf("%d rows, want one per (bidder, auction): %d", len(rows), len(last))
		}
		seen := map[[2]int64]bool{}
		for _, r := range rows {
			k := [2]int64{r[1].(int64), r[0].(int64)}
			if seen[k] {
				t.Fatalf("(bidder, auction) %v twice", k)
			}
			seen[k] = true
			if ms(r[5]) != last[k] {
				t.Fatalf("(bidder, auction) %v: time %d, want the last, %d", k, ms(r[5]), last[k])
			}
		}
	})

	t.Run("q9", func(t *testing.T) { // each auction's winning bid: highest price, earliest on ties
		_, sel := nexmarkQuery(t, "q9")
		rows := runRows(t, s, sel)
		type win struct{ price, ms int64 }
		want := map[int64]win{}
		for _, a := range d.auctions {
			for _, b := range byAuction[a.id] {
				if b.ms < a.ms || b.ms > a.expires {
					continue
				}
				w, ok := want[a.id]
				if !ok || b.price > w.price || (b.price == w.price && b.ms < w.ms) {
					want[a.id] = win{b.price, b.ms}
				}
			}
		}
		if len(rows) != len(want) {
			t.Fatalf("%d rows, want one per auction with a valid bid: %d", len(rows), len(want))
		}
		for _, r := range rows {
			id := r[0].(int64)
			if got := (win{r[12].(int64), ms(r[13])}); got != want[id] {
				t.Fatalf("auction %d: winner %v, want %v", id, got, want[id])
			}
		}
	})
}
