package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// The Nexmark queries built on OVER (q9, q18, q19, q6_valid) in batch
// mode, over the bounded generator. Their ORDER BY leaves ties, so which
// row a rank picks among equals may differ from any one reference: each
// is checked by the properties that hold whatever the tie-break, computed
// from the Parquet copy's rows.
//
// Then the same queries as streams (Flink's plans: q19 a Top-N, q18 a
// deduplication keeping the last row, q9 a Top-1 over a streaming join,
// q6 a retracting OVER aggregate over it), at parallelism 1 and 2: each
// result is an updating changelog that, applied, is the final answer,
// which the same checks judge.
func TestNexmarkOver(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s, "SET 'parallelism' = '2'")
	mustExec(t, s, nexmarkDDL(t, "ddl_gen.sql", "nexmark")...)
	d := parquetCopy(t, s)
	mustExec(t, s, "SET 'execution.runtime-mode' = 'batch'")
	for _, q := range []string{"q19", "q18", "q9", "q6_valid"} {
		t.Run(q+"/batch", func(t *testing.T) {
			_, sel := nexmarkQuery(t, q)
			nexmarkOverCheck[q](t, d, runRows(t, s, sel))
		})
	}

	mustExec(t, s, "SET 'execution.runtime-mode' = 'streaming'")
	shape := map[string]string{"q19": "StreamRank Top-10", "q18": "StreamRank deduplication keeping the last row", "q9": "StreamRank Top-1",
		"q6_valid": "RetractingOverAggregate"}
	for _, par := range []string{"1", "2"} {
		mustExec(t, s, "SET 'parallelism' = '"+par+"'")
		for _, q := range []string{"q19", "q18", "q9", "q6_valid"} {
			t.Run(q+"/p"+par, func(t *testing.T) {
				_, sel := nexmarkQuery(t, q)
				nexmarkOverCheck[q](t, d, applyChanges(t, streamRows(t, s, sel)))
				plan := strings.Join(explainLines(t, s, "EXPLAIN "+sel), "\n")
				if !strings.Contains(plan, shape[q]) {
					t.Errorf("%s: the plan has no %q:\n%s", q, shape[q], plan)
				}
			})
		}
	}
}

// The same over Kafka: the stream produced to a 2-partition topic, read
// back as a stream at parallelism 1 and 2.
func TestNexmarkOverKafka(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) }) // after the sessions close
	ks, d := nexmarkOverKafka(t, mem)
	mustExec(t, ks, "SET 'execution.runtime-mode' = 'streaming'")
	for _, par := range []string{"1", "2"} {
		mustExec(t, ks, "SET 'parallelism' = '"+par+"'")
		for _, q := range []string{"q19", "q18", "q9", "q6_valid"} {
			t.Run(q+"/p"+par, func(t *testing.T) {
				_, sel := nexmarkQuery(t, q)
				nexmarkOverCheck[q](t, d, applyChanges(t, streamRows(t, ks, sel)))
			})
		}
	}
}

// streamRows runs an updating query and returns its changelog (row kind
// first).
func streamRows(t *testing.T, s *Session, sel string) []exec.Row {
	t.Helper()
	w := &rowsWriter{}
	if _, err := s.Execute(context.Background(), sel, w, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(w.names) == 0 || w.names[0] != "op" {
		t.Fatalf("columns %v, want an updating result (op first)", w.names)
	}
	return w.rows
}

// applyChanges applies a changelog (row kind first) by value, in time
// linear in its length, failing on a retraction of a row not held.
func applyChanges(t *testing.T, rows []exec.Row) []exec.Row {
	t.Helper()
	held := map[string][]exec.Row{}
	for i, r := range rows {
		k := fmt.Sprint(r[1:])
		switch r[0] {
		case "+I", "+U":
			held[k] = append(held[k], r[1:])
		case "-U", "-D":
			if len(held[k]) == 0 {
				t.Fatalf("change %d %v retracts a row not held", i, r)
			}
			held[k] = held[k][1:]
		default:
			t.Fatalf("change %d: row kind %v", i, r[0])
		}
	}
	var out []exec.Row
	for _, rs := range held {
		out = append(out, rs...)
	}
	return out
}

// nexmarkOverCheck judges each query's (final) rows against the Parquet
// copy.
var nexmarkOverCheck = map[string]func(t *testing.T, d *nxData, rows []exec.Row){
	"q19": checkQ19, "q18": checkQ18, "q9": checkQ9, "q6_valid": checkQ6,
}

func bidsByAuction(d *nxData) map[int64][]nxBid {
	byAuction := map[int64][]nxBid{}
	for _, b := range d.bids {
		byAuction[b.auction] = append(byAuction[b.auction], b)
	}
	return byAuction
}

// checkQ19: the top 10 bids of each auction by price.
func checkQ19(t *testing.T, d *nxData, rows []exec.Row) {
	byAuction := bidsByAuction(d)
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
}

// checkQ18: each bidder's last bid per auction.
func checkQ18(t *testing.T, d *nxData, rows []exec.Row) {
	ms := func(v any) int64 { return int64(v.(arrow.Timestamp)) }
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
}

// checkQ9: each auction's winning bid: highest price, earliest on ties.
func checkQ9(t *testing.T, d *nxData, rows []exec.Row) {
	ms := func(v any) int64 { return int64(v.(arrow.Timestamp)) }
	byAuction := bidsByAuction(d)
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
}

// checkQ6: per seller, the average price of each winning bid (an
// auction's highest valid bid) with the 10 winning bids before it by
// time. A tie (two highest bids of an auction at different times, or two
// winning bids of a seller at one time) leaves which rows are averaged to
// the tie-break: such sellers are checked by their row count only.
func checkQ6(t *testing.T, d *nxData, rows []exec.Row) {
	byAuction := bidsByAuction(d)
	type win struct{ price, ms int64 }
	winners := map[int64][]win{} // by seller
	ambiguous := map[int64]bool{}
	for _, a := range d.auctions {
		var w *win
		tie := false
		for _, b := range byAuction[a.id] {
			if b.ms < a.ms || b.ms > a.expires {
				continue
			}
			switch {
			case w == nil || b.price > w.price:
				w, tie = &win{b.price, b.ms}, false
			case b.price == w.price && b.ms != w.ms:
				tie = true
			}
		}
		if w != nil {
			winners[a.seller] = append(winners[a.seller], *w)
			ambiguous[a.seller] = ambiguous[a.seller] || tie
		}
	}
	var want []string
	count := map[int64]int{}
	for seller, ws := range winners {
		count[seller] = len(ws)
		sort.Slice(ws, func(i, j int) bool { return ws[i].ms < ws[j].ms })
		for i, w := range ws {
			if i > 0 && ws[i-1].ms == w.ms {
				ambiguous[seller] = true
			}
		}
		if ambiguous[seller] {
			continue
		}
		for i := range ws {
			var sum int64
			frame := ws[max(0, i-10) : i+1]
			for _, f := range frame {
				sum += f.price
			}
			want = append(want, fmt.Sprint(seller, float64(sum)/float64(len(frame))))
		}
	}
	var got []string
	for _, r := range rows {
		seller := r[0].(int64)
		count[seller]--
		if !ambiguous[seller] {
			got = append(got, fmt.Sprint(seller, r[1]))
		}
	}
	for seller, n := range count {
		if n != 0 {
			t.Fatalf("seller %d: %d rows more than winning bids", seller, -n)
		}
	}
	if len(want) == 0 {
		t.Fatal("no seller without ties: the check checks nothing")
	}
	t.Logf("%d rows checked by value, %d rows in all", len(want), len(rows))
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%d rows of sellers without ties, want %d; first got %v, want %v", len(got), len(want), got[:min(5, len(got))], want[:min(5, len(want))])
	}
}
