package shuffle

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// TestTargetOfMatchesIndependentRule checks TargetOf against the range rule
// written out in refTarget, for every key group and parallelism.
//
// Verified to catch a routing shifted by one slot (temporarily mutate, run,
// restore): with TargetOf returning (target+1)%n, this test, every Split
// reference test (reference, sliced, skew, empty targets, dictionary,
// recycled) and the exchange's routing tests fail; with only the split's
// routing table shifted, the Split tests, the exchange tests and
// TestExchangeInGraph fail (rows and columns disagree); with only the row
// path shifted, TestExchangeInterleavesRowAndColumnarBatches,
// TestExchangeCoalesces and TestExchangeInGraph fail.
func TestTargetOfMatchesIndependentRule(t *testing.T) {
	for targets := 1; targets <= 300; targets++ {
		seen := make([]bool, targets)
		for h := uint64(0); h < 3*KeyGroups; h++ {
			got := TargetOf(h*0x9e3779b97f4a7c15, targets)
			want := refTarget(h*0x9e3779b97f4a7c15, targets)
			if got != want {
				t.Fatalf("TargetOf(%#x, %d) = %d, want %d", h*0x9e3779b97f4a7c15, targets, got, want)
			}
			seen[got] = true
		}
		if targets <= KeyGroups && slices.Contains(seen, false) {
			t.Fatalf("%d targets: some target owns no key group", targets)
		}
	}
}

// TestHashColumnsEqualsHashRow is the contract that lets row and columnar
// batches interleave: for every key type, with nulls, on a sliced record
// too, the columnar hash is the row hash of the decoded row.
func TestHashColumnsEqualsHashRow(t *testing.T) {
	mem := newMem(t)
	rng := rand.New(rand.NewPCG(1, 2))
	rows := genRows(rng, 0, 500, 40, 15)
	rec := encode(t, mem, allTypes, rows)
	defer rec.Release()
	sliced := rec.NewSlice(37, 411)
	defer sliced.Release()

	keySets := [][]int{{0}}
	for _, c := range keyTypeCols {
		keySets = append(keySets, []int{c})
	}
	keySets = append(keySets, []int{1, 7}, []int{7, 1}, []int{3, 6, 10, 11}, keyTypeCols)
	for _, r := range []arrow.RecordBatch{rec, sliced} {
		decoded := exec.DecodeRows(r)
		for _, keys := range keySets {
			hs := HashColumns(r, keys, nil)
			if len(hs) != len(decoded) {
				t.Fatalf("keys %v: %d hashes for %d rows", keys, len(hs), len(decoded))
			}
			for i, row := range decoded {
				if want := HashRow(row, keys); hs[i] != want {
					t.Fatalf("keys %v row %d %v: columnar hash %#x, row hash %#x", keys, i, row, hs[i], want)
				}
			}
		}
	}
}

func TestHashValueRules(t *testing.T) {
	h := func(v any) uint64 { return HashRow(exec.Row{v}, []int{0}) }
	if h(0.0) != h(math.Copysign(0, -1)) {
		t.Error("-0.0 and 0.0 hash differently")
	}
	if h(math.NaN()) != h(math.Float64frombits(0x7ff8000000000abc)) {
		t.Error("two NaNs hash differently")
	}
	if h(nil) != HashRow(exec.Row{int64(5), nil}, []int{1}) {
		t.Error("NULL hash depends on the position")
	}
	if h("ab") != h([]byte("ab")) {
		t.Error("a string and its bytes hash differently")
	}
	// Intervals = calls equal meet in one subtask: a month is 30 days is
	// 720 hours (PostgreSQL's interval_cmp), a day is 24 hours.
	for _, v := range sameMonth[1:] {
		if h(v) != h(sameMonth[0]) {
			t.Errorf("%v and %v hash differently", v, sameMonth[0])
		}
	}
	if h(arrow.MonthDayNanoInterval{Days: 1}) != h(arrow.MonthDayNanoInterval{Nanoseconds: 24 * 3600e9}) {
		t.Error("1 day and 24 hours hash differently")
	}
	if h(arrow.MonthDayNanoInterval{Days: 1}) == h(arrow.MonthDayNanoInterval{Days: 2}) {
		t.Error("1 day and 2 days collide")
	}
	if h(int64(1)) == h(int64(2)) || h("a") == h("b") || h(true) == h(false) {
		t.Error("distinct values collide")
	}
	// Multi-column keys are ordered: (a, b) and (b, a) are different keys.
	if HashRow(exec.Row{"a", "b"}, []int{0, 1}) == HashRow(exec.Row{"a", "b"}, []int{1, 0}) {
		t.Error("key order ignored")
	}
	// Sequential keys spread over the key groups.
	var groups [KeyGroups]int
	for i := range 128 * 100 {
		groups[h(int64(i))%KeyGroups]++
	}
	for g, c := range groups {
		if c < 50 || c > 150 {
			t.Fatalf("key group %d got %d of 12800 sequential keys", g, c)
		}
	}
}

// checkSplit splits rec and compares each target's rows, content and order,
// with the reference split of the same rows.
func checkSplit(t *testing.T, mem memory.Allocator, rec arrow.RecordBatch, keys []int, targets int, sc *Scratch) []arrow.RecordBatch {
	t.Helper()
	return checkSplitRows(t, mem, rec, exec.DecodeRows(rec), keys, targets, sc)
}

// checkSplitRows is checkSplit with rec's rows decoded once by the caller.
func checkSplitRows(t *testing.T, mem memory.Allocator, rec arrow.RecordBatch, rows []exec.Row, keys []int, targets int, sc *Scratch) []arrow.RecordBatch {
	t.Helper()
	want := refSplit(rows, keys, targets)
	got, err := Split(mem, rec, keys, targets, sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != targets {
		t.Fatalf("%d results for %d targets", len(got), targets)
	}
	for tg := range targets {
		if got[tg] == nil {
			if len(want[tg]) != 0 {
				t.Fatalf("keys %v, %d targets: target %d empty, want %d rows", keys, targets, tg, len(want[tg]))
			}
			continue
		}
		if got[tg].NumRows() == 0 {
			t.Fatalf("target %d: empty record instead of nil", tg)
		}
		if !got[tg].Schema().Equal(rec.Schema()) {
			t.Fatalf("target %d: schema %v", tg, got[tg].Schema())
		}
		g, w := rowsString(exec.DecodeRows(got[tg])), rowsString(want[tg])
		if !slices.Equal(g, w) {
			t.Fatalf("keys %v, %d targets: target %d got %d rows, want %d\n got %v\nwant %v", keys, targets, tg, len(g), len(w), g, w)
		}
	}
	return got
}

func TestSplitMatchesReference(t *testing.T) {
	mem := newMem(t)
	rng := rand.New(rand.NewPCG(3, 4))
	var sc Scratch // reused across every case, as the exchange does
	for _, n := range []int{1, 7, 300, 1500} {
		for _, nullPct := range []int{0, 20} {
			rows := genRows(rng, 0, n, 60, nullPct)
			rec := encode(t, mem, allTypes, rows)
			// Multi-column keys at every parallelism; each key type alone
			// at two.
			for _, keys := range [][]int{{1, 7}, {3, 6, 10, 11}, keyTypeCols} {
				for _, targets := range []int{1, 2, 3, 4, 7, 8, 16, 128, 200} {
					releaseAll(checkSplitRows(t, mem, rec, rows, keys, targets, &sc))
				}
			}
			for _, c := range keyTypeCols {
				for _, targets := range []int{3, 16} {
					releaseAll(checkSplitRows(t, mem, rec, rows, []int{c}, targets, &sc))
				}
			}
			rec.Release()
		}
	}
}

func TestSplitSlicedInput(t *testing.T) {
	mem := newMem(t)
	rec := encode(t, mem, allTypes, genRows(rand.New(rand.NewPCG(5, 6)), 0, 1000, 50, 10))
	defer rec.Release()
	sl := rec.NewSlice(101, 877)
	defer sl.Release()
	for _, targets := range []int{2, 5, 16} {
		releaseAll(checkSplit(t, mem, sl, keyTypeCols, targets, nil))
	}
}

// TestSplitSkew: every row has one key, so one target gets the whole batch
// (the input itself, shared) and every other target is nil.
func TestSplitSkew(t *testing.T) {
	mem := newMem(t)
	rows := genRows(rand.New(rand.NewPCG(7, 8)), 0, 1000, 1, 0)
	rec := encode(t, mem, allTypes, rows)
	defer rec.Release()
	for _, targets := range []int{2, 4, 16} {
		got := checkSplit(t, mem, rec, []int{1, 7}, targets, nil)
		nonNil := 0
		for _, r := range got {
			if r != nil {
				nonNil++
				if r.NumRows() != 1000 {
					t.Fatalf("skewed target got %d rows", r.NumRows())
				}
			}
		}
		if nonNil != 1 {
			t.Fatalf("%d targets got rows, want 1", nonNil)
		}
		releaseAll(got)
	}
}

// TestSplitEmptyTargets: 3 rows over 16 targets leave most targets nil.
func TestSplitEmptyTargets(t *testing.T) {
	mem := newMem(t)
	rec := encode(t, mem, allTypes, genRows(rand.New(rand.NewPCG(9, 10)), 0, 3, 1000, 0))
	defer rec.Release()
	got := checkSplit(t, mem, rec, []int{1}, 16, nil)
	nils := 0
	for _, r := range got {
		if r == nil {
			nils++
		}
	}
	if nils < 13 {
		t.Fatalf("%d nil targets of 16 for 3 rows", nils)
	}
	releaseAll(got)

	empty := encode(t, mem, allTypes, nil)
	defer empty.Release()
	got, err := Split(mem, empty, []int{1}, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	for tg, r := range got {
		if r != nil {
			t.Fatalf("empty input: target %d got a record", tg)
		}
	}
}

func TestSplitOneTarget(t *testing.T) {
	mem := newMem(t)
	rec := encode(t, mem, allTypes, genRows(rand.New(rand.NewPCG(11, 12)), 0, 100, 20, 10))
	defer rec.Release()
	got := checkSplit(t, mem, rec, []int{2}, 1, nil)
	if got[0].NumRows() != 100 {
		t.Fatalf("one target got %d rows", got[0].NumRows())
	}
	releaseAll(got)
}

func TestSplitErrors(t *testing.T) {
	mem := newMem(t)
	rec := encode(t, mem, allTypes, genRows(rand.New(rand.NewPCG(1, 1)), 0, 10, 5, 0))
	defer rec.Release()
	for _, tc := range []struct {
		keys    []int
		targets int
	}{{[]int{allTypes.NumFields()}, 2}, {[]int{-1}, 2}, {nil, 2}, {[]int{1}, 0}} {
		if got, err := Split(mem, rec, tc.keys, tc.targets, nil); err == nil {
			releaseAll(got)
			t.Errorf("keys %v targets %d: no error", tc.keys, tc.targets)
		}
	}
}

// TestSplitDoesNotMaterialise: the split reads Arrow arrays only.
func TestSplitDoesNotMaterialise(t *testing.T) {
	mem := newMem(t)
	b := exec.NewColumnarBatch(encode(t, mem, allTypes, genRows(rand.New(rand.NewPCG(2, 2)), 0, 2000, 100, 10)))
	defer b.Release()
	before := exec.Global.BatchesMaterialized.Load()
	got, err := Split(mem, b.Record(), keyTypeCols, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	releaseAll(got)
	if b.Materialized() || exec.Global.BatchesMaterialized.Load() != before {
		t.Fatal("Split materialised rows")
	}
}

// TestSplitDictionaryKey: a dictionary-encoded string key routes like the
// plain strings it stands for.
func TestSplitDictionaryKey(t *testing.T) {
	mem := newMem(t)
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	bld := array.NewDictionaryBuilder(mem, dt).(*array.BinaryDictionaryBuilder)
	defer bld.Release()
	words := []string{"a", "bb", "ccc", "dddd", "e"}
	for i := range 400 {
		if i%13 == 0 {
			bld.AppendNull()
			continue
		}
		if err := bld.AppendString(words[i%len(words)]); err != nil {
			t.Fatal(err)
		}
	}
	col := bld.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "w", Type: dt, Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, 400)
	defer rec.Release()
	hs := HashColumns(rec, []int{0}, nil)
	for i, r := range exec.DecodeRows(rec) {
		if hs[i] != HashRow(r, []int{0}) {
			t.Fatalf("row %d: dictionary hash differs from the row hash", i)
		}
	}
	releaseAll(checkSplit(t, mem, rec, []int{0}, 4, nil))
}
