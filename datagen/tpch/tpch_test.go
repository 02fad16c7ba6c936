package tpch

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/datagen"
	"github.com/clink-sql/clink/datagen/internal/pqread"
)

// The generated SF 0.1 data, shared by the tests that only read it.
var (
	sf01Once sync.Once
	sf01Dir  string
	sf01Err  error
)

func sf01(t *testing.T) string {
	t.Helper()
	sf01Once.Do(func() {
		sf01Dir, sf01Err = os.MkdirTemp("", "tpch-sf0.1-")
		if sf01Err == nil {
			_, sf01Err = Generate(context.Background(), Options{SF: 0.1, Dir: sf01Dir, Seed: DefaultSeed})
		}
	})
	if sf01Err != nil {
		t.Fatal(sf01Err)
	}
	return sf01Dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sf01Dir != "" {
		os.RemoveAll(sf01Dir)
	}
	os.Exit(code)
}

func read(t *testing.T, dir, table string) *pqread.Table {
	t.Helper()
	tbl, err := pqread.ReadAll(context.Background(), filepath.Join(dir, table, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tbl.Release)
	return tbl
}

func i64(t *pqread.Table, c string) *array.Int64      { return t.Cols[c].(*array.Int64) }
func i32(t *pqread.Table, c string) *array.Int32      { return t.Cols[c].(*array.Int32) }
func str(t *pqread.Table, c string) *array.String     { return t.Cols[c].(*array.String) }
func date(t *pqread.Table, c string) *array.Date32    { return t.Cols[c].(*array.Date32) }
func dec(t *pqread.Table, c string) *array.Decimal128 { return t.Cols[c].(*array.Decimal128) }

func cents(a *array.Decimal128, i int) int64 { return int64(a.Value(i).LowBits()) }

// specCounts are clause 4.2.5.1's cardinalities at SF 1.
var specCounts = map[string]int64{
	Part: 200_000, Supplier: 10_000, PartSupp: 800_000, Customer: 150_000, Orders: 1_500_000,
	Nation: 25, Region: 5,
}

func TestRowCountFunction(t *testing.T) {
	for table, n := range specCounts {
		if got := RowCount(table, 1); got != n {
			t.Errorf("RowCount(%s, 1) = %d, want %d", table, got, n)
		}
		want := n / 10
		if table == Nation || table == Region {
			want = n
		}
		if got := RowCount(table, 0.1); got != want {
			t.Errorf("RowCount(%s, 0.1) = %d, want %d", table, got, want)
		}
	}
	if RowCount(Lineitem, 1) != -1 {
		t.Error("lineitem's count is random; RowCount must say so (-1)")
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1), 0.0001} {
		if _, err := newScale(bad); err == nil {
			t.Errorf("scale factor %v accepted", bad)
		}
	}
}

// checkCounts compares the files' row counts, as clink reads them (the
// first column only: the whole tables are read by the SF 0.1 tests), with
// the specification's (scaled) and the manifest's, and lineitem with its
// expected 4 per order.
func checkCounts(t *testing.T, dir string, sf float64) {
	t.Helper()
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range Tables() {
		_, n, err := pqread.ClinkScan(context.Background(), filepath.Join(dir, table), 0)
		if err != nil {
			t.Fatalf("%s: clink cannot read it: %v", table, err)
		}
		if m.Rows[table] != n {
			t.Errorf("%s: manifest says %d rows, the files hold %d", table, m.Rows[table], n)
		}
		if want, ok := specCounts[table]; ok {
			if table != Nation && table != Region {
				want = int64(float64(want) * sf)
			}
			if n != want {
				t.Errorf("%s: %d rows, the specification says %d at SF %v", table, n, want, sf)
			}
		}
	}
	// 1..7 lines per order, uniformly: mean 4, variance 4 per order.
	orders := float64(m.Rows[Orders])
	lines := float64(m.Rows[Lineitem])
	if dev := math.Abs(lines-4*orders) / math.Sqrt(4*orders); dev > 5 {
		t.Errorf("lineitem: %v rows for %v orders, %.1f standard deviations from 4 per order", lines, orders, dev)
	}
}

func TestCountsSF01(t *testing.T) { checkCounts(t, sf01(t), 0.1) }

// TestCountsSF1 generates SF 1 (about 10 s on 2 cores) and checks the
// specification's counts; -short skips it, saying so.
func TestCountsSF1(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: SF 1 generation skipped (SF 0.1 is checked by TestCountsSF01)")
	}
	dir := t.TempDir()
	if _, err := Generate(context.Background(), Options{SF: 1, Dir: dir, Seed: DefaultSeed}); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, dir, 1)
	// A file per ~1M rows, one row group each (~1M rows).
	groups, err := pqread.RowGroups(filepath.Join(dir, Lineitem, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range groups {
		if len(g) != 1 || g[0] < 900_000 || g[0] > 1_100_000 {
			t.Errorf("lineitem file %d has row groups of %v rows, want one of about 1M", i, g)
		}
	}
	if len(groups) != 6 {
		t.Errorf("lineitem at SF 1 is in %d files, want 6 (about 1M rows each)", len(groups))
	}
}

func TestSchemasAreDuckDBs(t *testing.T) {
	dir := sf01(t)
	for _, table := range Tables() {
		schema, _, err := pqread.ClinkScan(context.Background(), filepath.Join(dir, table))
		if err != nil {
			t.Fatal(err)
		}
		want := Schema(table)
		if schema.NumFields() != want.NumFields() {
			t.Fatalf("%s: clink reads %d columns, want %d", table, schema.NumFields(), want.NumFields())
		}
		for i, f := range want.Fields() {
			got := schema.Field(i)
			if got.Name != f.Name || !arrow.TypeEqual(got.Type, f.Type) {
				t.Errorf("%s column %d: clink reads %s %s, want %s %s", table, i, got.Name, got.Type, f.Name, f.Type)
			}
		}
	}
	// Spot checks of the types DuckDB's tpch extension declares.
	for table, col := range map[string]string{Lineitem: "l_extendedprice", Orders: "o_totalprice", Part: "p_retailprice"} {
		f, _ := Schema(table).FieldsByName(col)
		if d, ok := f[0].Type.(*arrow.Decimal128Type); !ok || d.Precision != 15 || d.Scale != 2 {
			t.Errorf("%s.%s is %s, want DECIMAL(15,2)", table, col, f[0].Type)
		}
	}
}

func TestOrdersAndLines(t *testing.T) {
	dir := sf01(t)
	o, l := read(t, dir, Orders), read(t, dir, Lineitem)
	customers := RowCount(Customer, 0.1)

	okey, ocust, ostatus, ototal, odate := i64(o, "o_orderkey"), i64(o, "o_custkey"), str(o, "o_orderstatus"), dec(o, "o_totalprice"), date(o, "o_orderdate")
	type agg struct {
		total        int64
		lines, final int
		lastLine     int64
	}
	orders := make(map[int64]*agg, o.Rows)
	dateOf := make(map[int64]int32, o.Rows)
	var maxKey int64
	for i := 0; i < o.Rows; i++ {
		k := okey.Value(i)
		if _, dup := orders[k]; dup {
			t.Fatalf("o_orderkey %d repeats", k)
		}
		// Sparse keys: the first 8 of every 32.
		if k <= 0 || k&31 >= 8 {
			t.Fatalf("o_orderkey %d is not one of the first 8 keys of a group of 32", k)
		}
		maxKey = max(maxKey, k)
		orders[k] = &agg{}
		dateOf[k] = int32(odate.Value(i))
		c := ocust.Value(i)
		if c < 1 || c > customers || c%3 == 0 {
			t.Fatalf("o_custkey %d: want 1..%d and not a multiple of 3", c, customers)
		}
		if d := int32(odate.Value(i)); d < startDate || d > lastOrderDate {
			t.Fatalf("o_orderdate %v outside 1992-01-01 .. 1998-08-02", odate.Value(i).ToTime())
		}
	}
	if want := orderKey(int64(o.Rows)); maxKey != want {
		t.Errorf("largest o_orderkey %d, want %d", maxKey, want)
	}

	lkey, lnum, lpart := i64(l, "l_orderkey"), i64(l, "l_linenumber"), i64(l, "l_partkey")
	qty, price, disc, tax := dec(l, "l_quantity"), dec(l, "l_extendedprice"), dec(l, "l_discount"), dec(l, "l_tax")
	flag, status := str(l, "l_returnflag"), str(l, "l_linestatus")
	ship, commit, receipt := date(l, "l_shipdate"), date(l, "l_commitdate"), date(l, "l_receiptdate")
	flags := map[string]int{}
	var open int
	for i := 0; i < l.Rows; i++ {
		a := orders[lkey.Value(i)]
		if a == nil {
			t.Fatalf("l_orderkey %d has no order", lkey.Value(i))
		}
		if n := lnum.Value(i); n != a.lastLine+1 || n > 7 {
			t.Fatalf("order %d: line %d follows line %d", lkey.Value(i), n, a.lastLine)
		}
		a.lastLine++
		q, d, x := cents(qty, i), cents(disc, i), cents(tax, i)
		if q%100 != 0 || q < 100 || q > 5000 || d < 0 || d > 10 || x < 0 || x > 8 {
			t.Fatalf("line %d: quantity %d, discount %d, tax %d (cents) out of range", i, q, d, x)
		}
		ep := cents(price, i)
		if ep != q/100*retailPrice(lpart.Value(i)) {
			t.Fatalf("line %d: extended price %d != quantity x retail price of part %d", i, ep, lpart.Value(i))
		}
		a.total += ep * (100 - d) / 100 * (100 + x) / 100
		a.lines++
		od := dateOf[lkey.Value(i)]
		s, c, r := int32(ship.Value(i)), int32(commit.Value(i)), int32(receipt.Value(i))
		if s-od < 1 || s-od > 121 || c-od < 30 || c-od > 90 || r-s < 1 || r-s > 30 {
			t.Fatalf("line %d: ship %+d, commit %+d days after the order, receipt %+d after shipping", i, s-od, c-od, r-s)
		}
		if r > endDate {
			t.Fatalf("line %d received after 1998-12-31", i)
		}
		f, st := flag.Value(i), status.Value(i)
		if (f == "N") != (r > currentDate) || (f != "N" && f != "R" && f != "A") {
			t.Fatalf("line %d: return flag %q with receipt %v (current date 1995-06-17)", i, f, receipt.Value(i).ToTime())
		}
		if (st == "O") != (s > currentDate) || (st != "O" && st != "F") {
			t.Fatalf("line %d: line status %q with ship date %v", i, st, ship.Value(i).ToTime())
		}
		if st == "F" {
			a.final++
		} else {
			open++
		}
		flags[f]++
	}
	for i := 0; i < o.Rows; i++ {
		a := orders[okey.Value(i)]
		if a.lines == 0 {
			t.Fatalf("order %d has no lines", okey.Value(i))
		}
		if got := cents(ototal, i); got != a.total {
			t.Fatalf("order %d: o_totalprice %d cents, its lines sum to %d", okey.Value(i), got, a.total)
		}
		want := "P"
		if a.final == a.lines {
			want = "F"
		} else if a.final == 0 {
			want = "O"
		}
		if st := ostatus.Value(i); st != want {
			t.Fatalf("order %d: status %s, its lines say %s", okey.Value(i), st, want)
		}
	}
	// R and A split the received lines evenly; about a quarter of the
	// lines (received after mid-1995 of a 1992-1998 span) are N.
	n := float64(l.Rows)
	if r, a := float64(flags["R"]), float64(flags["A"]); math.Abs(r-a) > 5*math.Sqrt(r+a) {
		t.Errorf("return flags R %v, A %v: not an even split", r, a)
	}
	if frac := float64(flags["N"]) / n; frac < 0.45 || frac > 0.55 {
		t.Errorf("return flag N on %.3f of the lines, want about half (received after 1995-06-17)", frac)
	}
	if frac := float64(open) / n; math.Abs(frac-float64(flags["N"])/n) > 0.01 {
		t.Errorf("open lines %.3f vs not-received %.3f: they should nearly coincide", frac, float64(flags["N"])/n)
	}
}

func TestPartsSuppliersCustomers(t *testing.T) {
	dir := sf01(t)
	p, ps, s, c, l := read(t, dir, Part), read(t, dir, PartSupp), read(t, dir, Supplier), read(t, dir, Customer), read(t, dir, Lineitem)
	parts, suppliers := int64(p.Rows), int64(s.Rows)

	colorSet := map[string]bool{}
	for _, c := range colors {
		colorSet[c] = true
	}
	types := map[string]bool{}
	for _, a := range typeS1 {
		for _, b := range typeS2 {
			for _, c := range typeS3 {
				types[a+" "+b+" "+c] = true
			}
		}
	}
	pkey, pname, mfgr, brand, ptype := i64(p, "p_partkey"), str(p, "p_name"), str(p, "p_mfgr"), str(p, "p_brand"), str(p, "p_type")
	size, cont, retail, pcomment := i32(p, "p_size"), str(p, "p_container"), dec(p, "p_retailprice"), str(p, "p_comment")
	seenTypes, seenContainers := map[string]bool{}, map[string]bool{}
	for i := 0; i < p.Rows; i++ {
		if pkey.Value(i) != int64(i+1) {
			t.Fatalf("part %d has key %d", i+1, pkey.Value(i))
		}
		words := strings.Split(pname.Value(i), " ")
		distinct := map[string]bool{}
		for _, w := range words {
			distinct[w] = colorSet[w]
		}
		if len(words) != 5 || len(distinct) != 5 {
			t.Fatalf("p_name %q: want 5 distinct colours", pname.Value(i))
		}
		for w, ok := range distinct {
			if !ok {
				t.Fatalf("p_name %q: %q is not one of the 92 colours", pname.Value(i), w)
			}
		}
		m := strings.TrimPrefix(mfgr.Value(i), "Manufacturer#")
		br := strings.TrimPrefix(brand.Value(i), "Brand#")
		if len(m) != 1 || m < "1" || m > "5" || len(br) != 2 || br[0] != m[0] || br[1] < '1' || br[1] > '5' {
			t.Fatalf("p_mfgr %q, p_brand %q: want Manufacturer#M and Brand#MN, M and N in 1..5", mfgr.Value(i), brand.Value(i))
		}
		if !types[ptype.Value(i)] {
			t.Fatalf("p_type %q is not one of the 150 types", ptype.Value(i))
		}
		seenTypes[ptype.Value(i)] = true
		seenContainers[cont.Value(i)] = true
		if sz := size.Value(i); sz < 1 || sz > 50 {
			t.Fatalf("p_size %d", sz)
		}
		if cents(retail, i) != retailPrice(pkey.Value(i)) {
			t.Fatalf("p_retailprice of part %d: %d cents", pkey.Value(i), cents(retail, i))
		}
		if n := len(pcomment.Value(i)); n < 5 || n > 22 {
			t.Fatalf("p_comment of %d characters", n)
		}
	}
	if len(seenTypes) != 150 || len(seenContainers) != 40 {
		t.Errorf("%d types and %d containers used, want all 150 and 40", len(seenTypes), len(seenContainers))
	}
	// The spec's formula, written out independently of partSupplier.
	if got := retailPrice(1234); got != 90000+123+100*234 {
		t.Errorf("retail price of part 1234: %d cents", got)
	}

	// partsupp: 4 distinct suppliers per part, in range.
	pspart, pssupp, qty, cost := i64(ps, "ps_partkey"), i64(ps, "ps_suppkey"), i64(ps, "ps_availqty"), dec(ps, "ps_supplycost")
	pairs := make(map[[2]int64]bool, ps.Rows)
	for i := 0; i < ps.Rows; i++ {
		k := [2]int64{pspart.Value(i), pssupp.Value(i)}
		if pairs[k] {
			t.Fatalf("partsupp (%d, %d) repeats", k[0], k[1])
		}
		pairs[k] = true
		if k[0] < 1 || k[0] > parts || k[1] < 1 || k[1] > suppliers {
			t.Fatalf("partsupp (%d, %d) out of range", k[0], k[1])
		}
		if q := qty.Value(i); q < 1 || q > 9999 {
			t.Fatalf("ps_availqty %d", q)
		}
		if c := cents(cost, i); c < 100 || c > 100000 {
			t.Fatalf("ps_supplycost %d cents", c)
		}
	}
	if int64(ps.Rows) != 4*parts {
		t.Errorf("partsupp has %d rows for %d parts", ps.Rows, parts)
	}
	// Every lineitem's (part, supplier) is a partsupp row.
	lp, ls := i64(l, "l_partkey"), i64(l, "l_suppkey")
	for i := 0; i < l.Rows; i++ {
		if !pairs[[2]int64{lp.Value(i), ls.Value(i)}] {
			t.Fatalf("lineitem %d: (part %d, supplier %d) is not in partsupp", i, lp.Value(i), ls.Value(i))
		}
	}

	// Suppliers and customers: names, phones by nation, balances.
	check := func(tbl *pqread.Table, prefix, tag string, minComment, maxComment int) {
		key, name, nation, phone := i64(tbl, prefix+"key"), str(tbl, prefix[:2]+"name"), i32(tbl, prefix[:2]+"nationkey"), str(tbl, prefix[:2]+"phone")
		bal, comment, addr := dec(tbl, prefix[:2]+"acctbal"), str(tbl, prefix[:2]+"comment"), str(tbl, prefix[:2]+"address")
		for i := 0; i < tbl.Rows; i++ {
			if want := tag + strings.Repeat("0", 9-len(strconv.FormatInt(key.Value(i), 10))) + strconv.FormatInt(key.Value(i), 10); name.Value(i) != want {
				t.Fatalf("%s name %q, want %q", prefix, name.Value(i), want)
			}
			n := nation.Value(i)
			ph := phone.Value(i)
			if n < 0 || n > 24 || len(ph) != 15 || ph[:3] != strconv.Itoa(int(n)+10)+"-" {
				t.Fatalf("%s nation %d, phone %q: want the country code nation+10", prefix, n, ph)
			}
			if b := cents(bal, i); b < -99999 || b > 999999 {
				t.Fatalf("%s account balance %d cents", prefix, b)
			}
			if a := len(addr.Value(i)); a < 10 || a > 40 {
				t.Fatalf("%s address of %d characters", prefix, a)
			}
			if c := len(comment.Value(i)); c < minComment || c > maxComment {
				t.Fatalf("%s comment of %d characters", prefix, c)
			}
		}
	}
	check(s, "s_supp", "Supplier#", 25, 100)
	check(c, "c_cust", "Customer#", 29, 116)
	segs := map[string]int{}
	for i := 0; i < c.Rows; i++ {
		segs[str(c, "c_mktsegment").Value(i)]++
	}
	for _, s := range segments {
		if f := float64(segs[s]) / float64(c.Rows); f < 0.18 || f > 0.22 {
			t.Errorf("segment %s on %.3f of the customers, want 0.2", s, f)
		}
	}
}

func TestComplaintsAreSFTimesFive(t *testing.T) {
	g := &generator{seed: DefaultSeed}
	var c, r int
	for k := int64(1); k <= 10_000; k++ {
		switch g.complaint(k) {
		case 'C':
			c++
		case 'R':
			r++
		}
	}
	if c != 5 || r != 5 {
		t.Fatalf("SF 1: %d complaints and %d recommendations, want 5 and 5", c, r)
	}
	for i := uint64(0); i < 200; i++ {
		r := datagen.NewRand(1, 2, i)
		base := strings.Repeat("x", 25+int(i%76))
		for _, kind := range []byte{'C', 'R'} {
			got := string(appendBBB(nil, base, &r, kind))
			want := `^x*Customer x*Complaintsx*$`
			if kind == 'R' {
				want = `^x*Customer x*Recommendsx*$`
			}
			if len(got) != len(base) || !regexp.MustCompile(want).MatchString(got) {
				t.Fatalf("BBB comment %q (from %d characters)", got, len(base))
			}
		}
	}
}

func TestNationsAndRegions(t *testing.T) {
	dir := sf01(t)
	n, r := read(t, dir, Nation), read(t, dir, Region)
	// Clause 4.2.3's table, spot-checked independently of the list.
	want := map[int32][2]any{0: {"ALGERIA", int32(0)}, 3: {"CANADA", int32(1)}, 7: {"GERMANY", int32(3)},
		18: {"CHINA", int32(2)}, 20: {"SAUDI ARABIA", int32(4)}, 24: {"UNITED STATES", int32(1)}}
	for i := 0; i < n.Rows; i++ {
		k := i32(n, "n_nationkey").Value(i)
		if k != int32(i) {
			t.Fatalf("nation row %d has key %d", i, k)
		}
		if w, ok := want[k]; ok && (str(n, "n_name").Value(i) != w[0] || i32(n, "n_regionkey").Value(i) != w[1]) {
			t.Errorf("nation %d: %s in region %d, want %v", k, str(n, "n_name").Value(i), i32(n, "n_regionkey").Value(i), w)
		}
	}
	var names []string
	for i := 0; i < r.Rows; i++ {
		names = append(names, str(r, "r_name").Value(i))
	}
	if got := strings.Join(names, ","); got != "AFRICA,AMERICA,ASIA,EUROPE,MIDDLE EAST" {
		t.Errorf("regions %s", got)
	}
}

// TestCommentsFollowTheGrammar: comments are cut from sentences of the
// grammar, so the words the queries look for occur, in the phrases they
// look for, at plausible rates.
func TestCommentsFollowTheGrammar(t *testing.T) {
	dir := sf01(t)
	o := read(t, dir, Orders)
	c := str(o, "o_comment")
	q13 := regexp.MustCompile(`special.*requests`)
	var matched int
	for i := 0; i < o.Rows; i++ {
		v := c.Value(i)
		if len(v) < 19 || len(v) > 78 {
			t.Fatalf("o_comment of %d characters", len(v))
		}
		if q13.MatchString(v) {
			matched++
		}
	}
	// dbgen's data excludes about 1% of the orders in Q13.
	if f := float64(matched) / float64(o.Rows); f < 0.002 || f > 0.05 {
		t.Errorf("%.4f of the order comments match '%%special%%requests%%'", f)
	}
	pool := newTextPool(7)
	words := strings.Fields(pool.text[:1<<16])
	known := map[string]bool{"the": true}
	for _, l := range [][]word{nouns, verbs, adjectives, adverbs, prepositions, auxiliaries} {
		for _, w := range l {
			for _, part := range strings.Fields(w.text) {
				known[part] = true
			}
		}
	}
	for _, w := range words[1 : len(words)-1] {
		w = strings.TrimRight(w, ".;:?!-,")
		if !known[w] {
			t.Fatalf("the text pool has %q, which is no word of the grammar", w)
		}
	}
}

// TestDeterministic: the same seed gives byte-identical files whatever the
// number of workers; another seed gives other data.
func TestDeterministic(t *testing.T) {
	ctx := context.Background()
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	if _, err := Generate(ctx, Options{SF: 0.01, Dir: a, Seed: 5, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(ctx, Options{SF: 0.01, Dir: b, Seed: 5, Workers: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(ctx, Options{SF: 0.01, Dir: c, Seed: 6, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	for _, table := range Tables() {
		ha, hb, hc := hashDir(t, a, table), hashDir(t, b, table), hashDir(t, c, table)
		if ha != hb {
			t.Errorf("%s: 1 and 3 workers wrote different files", table)
		}
		if ha == hc && table != Nation && table != Region {
			t.Errorf("%s: seeds 5 and 6 wrote the same files", table)
		}
	}
}

func hashDir(t *testing.T, dir, table string) [32]byte {
	t.Helper()
	h, n, err := pqread.HashFiles(filepath.Join(dir, table, "*.parquet"))
	if err != nil || n == 0 {
		t.Fatalf("%s: %d files, %v", table, n, err)
	}
	return h
}

func TestGenerateCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	if _, err := Generate(ctx, Options{SF: 0.01, Dir: dir, Seed: 1}); err == nil {
		t.Fatal("a cancelled generation succeeded")
	}
	if _, err := ReadManifest(dir); err == nil {
		t.Fatal("a cancelled generation left a manifest")
	}
}
