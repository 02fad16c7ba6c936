package clickbench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/clink-sql/clink/datagen/internal/pqread"
)

const testRows = 100_000

var (
	dataOnce sync.Once
	dataDir  string
	dataErr  error
)

// data is testRows rows in two files, shared by the read-only tests.
func data(t *testing.T) string {
	t.Helper()
	dataOnce.Do(func() {
		dataDir, dataErr = os.MkdirTemp("", "hits-")
		if dataErr == nil {
			_, dataErr = Generate(context.Background(), Options{Rows: testRows, Dir: dataDir, Seed: DefaultSeed, RowsPerFile: 60_000})
		}
	})
	if dataErr != nil {
		t.Fatal(dataErr)
	}
	return dataDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dataDir != "" {
		os.RemoveAll(dataDir)
	}
	os.Exit(code)
}

func readHits(t *testing.T) *pqread.Table {
	t.Helper()
	tbl, err := pqread.ReadAll(context.Background(), filepath.Join(data(t), "hits", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tbl.Release)
	return tbl
}

// TestSchemaIsCreateSQLs checks the columns against ClickBench's
// duckdb/create.sql: 105 of them, spot-checked by name, type and order.
func TestSchemaIsCreateSQLs(t *testing.T) {
	s := Schema()
	if s.NumFields() != 105 {
		t.Fatalf("%d columns, want 105", s.NumFields())
	}
	want := map[int]struct {
		name string
		typ  arrow.DataType
	}{
		0: {"WatchID", arrow.PrimitiveTypes.Int64}, 1: {"JavaEnable", arrow.PrimitiveTypes.Int16},
		2: {"Title", arrow.BinaryTypes.String}, 4: {"EventTime", &arrow.TimestampType{Unit: arrow.Microsecond}},
		5: {"EventDate", arrow.FixedWidthTypes.Date32}, 6: {"CounterID", arrow.PrimitiveTypes.Int32},
		9: {"UserID", arrow.PrimitiveTypes.Int64}, 13: {"URL", arrow.BinaryTypes.String},
		29: {"UserAgentMinor", arrow.BinaryTypes.String}, 39: {"SearchPhrase", arrow.BinaryTypes.String},
		40: {"AdvEngineID", arrow.PrimitiveTypes.Int16}, 48: {"SilverlightVersion3", arrow.PrimitiveTypes.Int32},
		63: {"HitColor", arrow.BinaryTypes.String}, 64: {"LocalEventTime", &arrow.TimestampType{Unit: arrow.Microsecond}},
		87: {"ParamPrice", arrow.PrimitiveTypes.Int64}, 102: {"RefererHash", arrow.PrimitiveTypes.Int64},
		103: {"URLHash", arrow.PrimitiveTypes.Int64}, 104: {"CLID", arrow.PrimitiveTypes.Int32},
	}
	for i, w := range want {
		f := s.Field(i)
		if f.Name != w.name || !arrow.TypeEqual(f.Type, w.typ) {
			t.Errorf("column %d: %s %s, want %s %s", i, f.Name, f.Type, w.name, w.typ)
		}
	}
	names := map[string]bool{}
	for _, f := range s.Fields() {
		if names[f.Name] {
			t.Errorf("column %s twice", f.Name)
		}
		names[f.Name] = true
		if f.Type.ID() == arrow.STRING && f.Nullable == (f.Name == "UserAgentMinor" || f.Name == "HitColor") {
			t.Errorf("%s: nullable %v, but create.sql says otherwise", f.Name, f.Nullable)
		}
	}
}

func TestClinkReadsIt(t *testing.T) {
	dir := data(t)
	s, n, err := pqread.ClinkScan(context.Background(), filepath.Join(dir, "hits"))
	if err != nil {
		t.Fatal(err)
	}
	if n != testRows {
		t.Errorf("clink reads %d rows, want %d", n, testRows)
	}
	for i, f := range Schema().Fields() {
		want := f.Type
		if want.ID() == arrow.INT16 {
			// clink's Parquet reader widens 16-bit integers (physical INT32)
			// to INTEGER: it has no SMALLINT. The values are the same.
			want = arrow.PrimitiveTypes.Int32
		}
		if g := s.Field(i); g.Name != f.Name || !arrow.TypeEqual(g.Type, want) {
			t.Errorf("clink reads column %d as %s %s, want %s %s", i, g.Name, g.Type, f.Name, f.Type)
		}
	}
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != testRows || len(m.Files) != 2 {
		t.Errorf("manifest: %d rows in %v", m.Rows, m.Files)
	}
}

// TestShape checks what the queries depend on.
func TestShape(t *testing.T) {
	h := readHits(t)
	if h.Rows != testRows {
		t.Fatalf("%d rows", h.Rows)
	}
	n := float64(h.Rows)
	strs := func(c string) *array.String { return h.Cols[c].(*array.String) }
	i16 := func(c string) *array.Int16 { return h.Cols[c].(*array.Int16) }
	i32 := func(c string) *array.Int32 { return h.Cols[c].(*array.Int32) }
	i64 := func(c string) *array.Int64 { return h.Cols[c].(*array.Int64) }
	frac := func(count int) float64 { return float64(count) / n }

	var emptyPhrase, zeroAdv, c62, google, mobile, emptyURL int
	users, urls, titles, phrases, counters, watch := map[int64]int{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[int32]int{}, map[int64]bool{}
	hashOf := map[string]int64{}
	var foundUser, foundURLHash, foundReferer bool
	july := time.Date(2013, 7, 1, 0, 0, 0, 0, time.UTC)
	ev, ed := h.Cols["EventTime"].(*array.Timestamp), h.Cols["EventDate"].(*array.Date32)
	for i := 0; i < h.Rows; i++ {
		p, u := strs("SearchPhrase").Value(i), strs("URL").Value(i)
		if p == "" {
			emptyPhrase++
		} else {
			phrases[p] = true
		}
		if i16("AdvEngineID").Value(i) == 0 {
			zeroAdv++
		}
		c := i32("CounterID").Value(i)
		counters[c]++
		if c == bigCounter {
			c62++
		}
		if strings.Contains(u, "google") {
			google++
		}
		if u == "" {
			emptyURL++
		} else if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			t.Fatalf("URL %q", u)
		}
		urls[u] = true
		titles[strs("Title").Value(i)] = true
		uid := i64("UserID").Value(i)
		users[uid]++
		foundUser = foundUser || uid == plantedUserID
		hash := i64("URLHash").Value(i)
		if prev, ok := hashOf[u]; ok && prev != hash {
			t.Fatalf("URL %q has hashes %d and %d", u, prev, hash)
		}
		hashOf[u] = hash
		foundURLHash = foundURLHash || hash == plantedURLHash
		if i64("RefererHash").Value(i) == plantedRefererHash && c == bigCounter {
			ts := i16("TraficSourceID").Value(i)
			foundReferer = foundReferer || ts == -1 || ts == 6
		}
		if w := i64("WatchID").Value(i); watch[w] {
			t.Fatalf("WatchID %d repeats", w)
		} else {
			watch[w] = true
		}
		if i16("IsMobile").Value(i) == 1 {
			mobile++
			if strs("MobilePhoneModel").Value(i) == "" {
				t.Fatal("a mobile hit without a phone model")
			}
		}
		tm := ev.Value(i).ToTime(arrow.Microsecond)
		if tm.Before(july) || !tm.Before(july.AddDate(0, 1, 0)) {
			t.Fatalf("EventTime %v outside July 2013", tm)
		}
		if d := ed.Value(i).ToTime(); !d.Equal(tm.Truncate(24 * time.Hour)) {
			t.Fatalf("EventDate %v for EventTime %v", d, tm)
		}
	}
	checks := []struct {
		what   string
		got    float64
		lo, hi float64
	}{
		{"empty SearchPhrase", frac(emptyPhrase), 0.85, 0.91},
		{"AdvEngineID = 0", frac(zeroAdv), 0.97, 0.995},
		{"CounterID = 62", frac(c62), 0.22, 0.28},
		{"URL mentions google", frac(google), 0.005, 0.10},
		{"IsMobile", frac(mobile), 0.03, 0.2},
		{"empty URL", frac(emptyURL), 0.005, 0.03},
		{"distinct UserID / rows", frac(len(users)), 0.03, 0.17},
		{"distinct URL / rows", frac(len(urls)), 0.1, 0.5},
		{"distinct Title / rows", frac(len(titles)), 0.05, 0.5},
		{"distinct SearchPhrase / rows", frac(len(phrases)), 0.01, 0.12},
	}
	for _, c := range checks {
		if c.got < c.lo || c.got > c.hi {
			t.Errorf("%s: %.4f, want %.3f..%.3f", c.what, c.got, c.lo, c.hi)
		}
	}
	if len(counters) < 100 || len(counters) > 401 {
		t.Errorf("%d distinct counters, want a few hundred", len(counters))
	}
	// Skewed popularity: the busiest user has far more hits than the mean.
	busiest := 0
	for _, c := range users {
		busiest = max(busiest, c)
	}
	if mean := n / float64(len(users)); float64(busiest) < 20*mean {
		t.Errorf("the busiest user has %d hits, the mean is %.1f: no skew", busiest, mean)
	}
	if !foundUser || !foundURLHash || !foundReferer {
		t.Errorf("planted values missing: UserID %v, URLHash %v, RefererHash on counter 62 with TraficSourceID -1/6 %v", foundUser, foundURLHash, foundReferer)
	}
}

// TestDeterministic: the same seed gives byte-identical files whatever the
// number of workers; another seed other data.
func TestDeterministic(t *testing.T) {
	ctx := context.Background()
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	for _, run := range []struct {
		dir     string
		seed    uint64
		workers int
	}{{a, 9, 1}, {b, 9, 2}, {c, 10, 2}} {
		if _, err := Generate(ctx, Options{Rows: 20_000, Dir: run.dir, Seed: run.seed, Workers: run.workers, RowsPerFile: 7_000}); err != nil {
			t.Fatal(err)
		}
	}
	ha, hb, hc := hashFiles(t, a), hashFiles(t, b), hashFiles(t, c)
	if ha != hb {
		t.Error("1 and 2 workers wrote different files")
	}
	if ha == hc {
		t.Error("seeds 9 and 10 wrote the same files")
	}
}

func hashFiles(t *testing.T, dir string) [32]byte {
	t.Helper()
	h, n, err := pqread.HashFiles(filepath.Join(dir, "hits", "*.parquet"))
	if err != nil || n != 3 {
		t.Fatalf("%d files, want 3 (%v)", n, err)
	}
	return h
}

func TestBadOptions(t *testing.T) {
	if _, err := Generate(context.Background(), Options{Rows: 0, Dir: t.TempDir()}); err == nil {
		t.Error("0 rows accepted")
	}
	if _, err := Generate(context.Background(), Options{Rows: 10}); err == nil {
		t.Error("no directory accepted")
	}
}
