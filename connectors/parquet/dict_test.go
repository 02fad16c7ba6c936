package parquet

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pgo "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// The dictionary fixture: 3500 rows in row groups of 1000 (the last one
// short), small data pages (many per chunk) and a 1 KB dictionary page
// limit. Column s holds 13 words in every row group, but in the even ones
// its rows from 400 on are unique strings: the writer's dictionary
// overflows there and the rest of that chunk is PLAIN. Column r is
// low-cardinality everywhere, id and bin are there to be ignored.
const (
	dictRows     = 3500
	dictGroupLen = 1000
)

var dictSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "r", Type: arrow.BinaryTypes.String},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
}, nil)

var dictWords = []string{"Google", "Facebook", "Baidu", "Apple", "", "a", "bb", "ccc", "dddd",
	"eeeee", "ffffff", "ggggggg", "hhhhhhhh"}

func dictRow(i int) exec.Row {
	row := exec.Row{int64(i), nil, fmt.Sprint("r", i%5), nil}
	if i%7 != 3 {
		if (i/dictGroupLen)%2 == 0 && i%dictGroupLen >= 400 {
			row[1] = fmt.Sprintf("unique-%06d-%s", i, strings.Repeat("x", 20))
		} else {
			row[1] = dictWords[(i*7)%len(dictWords)]
		}
	}
	if i%5 != 0 {
		row[3] = []byte{byte(i), byte(i >> 8)}
	}
	return row
}

func writeDictFixture(t *testing.T, path string, dictionary bool, version pq.DataPageVersion) {
	t.Helper()
	mem := memory.NewGoAllocator()
	bld := array.NewRecordBuilder(mem, dictSchema)
	defer bld.Release()
	for i := 0; i < dictRows; i++ {
		row := dictRow(i)
		bld.Field(0).(*array.Int64Builder).Append(row[0].(int64))
		if row[1] == nil {
			bld.Field(1).AppendNull()
		} else {
			bld.Field(1).(*array.StringBuilder).Append(row[1].(string))
		}
		bld.Field(2).(*array.StringBuilder).Append(row[2].(string))
		if row[3] == nil {
			bld.Field(3).AppendNull()
		} else {
			bld.Field(3).(*array.BinaryBuilder).Append(row[3].([]byte))
		}
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	props := pq.NewWriterProperties(
		pq.WithDictionaryDefault(dictionary),
		pq.WithDictionaryPageSizeLimit(1024),
		pq.WithDataPageSize(256),
		pq.WithBatchSize(50),
		pq.WithMaxRowGroupLength(dictGroupLen),
		pq.WithDataPageVersion(version))
	writeRecordFile(t, path, rec, props, pqarrow.DefaultWriterProps())
}

// pageKind is one data page of a column chunk: its rows, and whether it is
// dictionary-encoded. Read with parquet-go directly, independently of the
// scan, so the test knows which batches must come out as dictionaries.
type pageKind struct {
	rows int
	dict bool
}

func pageKinds(t *testing.T, path string, leaf int) [][]pageKind {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := pgo.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var out [][]pageKind
	for _, rg := range pf.RowGroups() {
		pages := rg.ColumnChunks()[leaf].Pages()
		var kinds []pageKind
		for {
			p, err := pages.ReadPage()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, pageKind{int(p.NumRows()), p.Dictionary() != nil})
			pgo.Release(p)
		}
		pages.Close()
		out = append(out, kinds)
	}
	return out
}

// expectDict says, for each batch of a scan at batch size bs, its row
// group and whether every page its rows come from is dictionary-encoded.
func expectDict(groups [][]pageKind, bs int) (dict []bool, group []int) {
	for g, kinds := range groups {
		var starts []int // first row of each page
		n := 0
		for _, k := range kinds {
			starts = append(starts, n)
			n += k.rows
		}
		for lo := 0; lo < n; lo += bs {
			hi := min(lo+bs, n)
			all := true
			for p, k := range kinds {
				if starts[p] < hi && starts[p]+k.rows > lo && !k.dict {
					all = false
				}
			}
			dict = append(dict, all)
			group = append(group, g)
		}
	}
	return dict, group
}

// dictChecker checks each batch as it arrives: the record's field types
// match its arrays, the string columns asked for are dictionary arrays
// exactly when expected and plain strings otherwise, the other columns are
// never dictionaries, codes are in range (0 in null rows), and the batches
// of one row group share one dictionary. keep retains the batches (so
// dictionaries outlive their column chunk); otherwise each batch is
// dropped once decoded, and recycled memory is reused at once.
type dictChecker struct {
	dictCols map[int][]bool // output column -> expected dictionary flag per batch
	group    []int
	keep     bool

	n      int
	rows   []exec.Row
	kept   []*exec.Batch
	dicts  map[int]int // output column -> dictionary arrays seen
	plains map[int]int
	shared map[[2]int]*memory.Buffer // (column, row group) -> dictionary data buffer
}

func (c *dictChecker) Emit(_ context.Context, b *exec.Batch) error {
	rec := b.Record()
	bi := c.n
	c.n++
	for i, col := range rec.Columns() {
		if !arrow.TypeEqual(rec.Schema().Field(i).Type, col.DataType()) {
			return fmt.Errorf("batch %d column %d: field type %s, array type %s", bi, i, rec.Schema().Field(i).Type, col.DataType())
		}
		want, asked := c.dictCols[i]
		d, isDict := col.(*array.Dictionary)
		if !asked {
			if isDict {
				return fmt.Errorf("batch %d column %d: dictionary array not asked for", bi, i)
			}
			if v, ok := col.(interface{ ValidateFull() error }); ok {
				if err := v.ValidateFull(); err != nil {
					return fmt.Errorf("batch %d column %d: %w", bi, i, err)
				}
			}
			continue
		}
		if bi >= len(want) {
			return fmt.Errorf("batch %d: more batches than expected (%d)", bi, len(want))
		}
		if isDict != want[bi] {
			return fmt.Errorf("batch %d column %d (row group %d): dictionary array %v, want %v", bi, i, c.group[bi], isDict, want[bi])
		}
		if !isDict {
			c.plains[i]++
			if err := col.(*array.String).ValidateFull(); err != nil {
				return fmt.Errorf("batch %d column %d: %w", bi, i, err)
			}
			continue
		}
		c.dicts[i]++
		if !arrow.TypeEqual(d.DataType(), dictStringType) {
			return fmt.Errorf("batch %d column %d: type %s", bi, i, d.DataType())
		}
		vals := d.Dictionary().(*array.String)
		if err := vals.ValidateFull(); err != nil {
			return fmt.Errorf("batch %d column %d dictionary: %w", bi, i, err)
		}
		codes := d.Indices().(*array.Int32).Int32Values()
		for r, x := range codes {
			if d.IsNull(r) && x != 0 {
				return fmt.Errorf("batch %d column %d row %d: null row has code %d", bi, i, r, x)
			}
			if int(x) < 0 || int(x) >= vals.Len() {
				return fmt.Errorf("batch %d column %d row %d: code %d, dictionary of %d", bi, i, r, x, vals.Len())
			}
		}
		key := [2]int{i, c.group[bi]}
		buf := vals.Data().Buffers()[2]
		if prev, ok := c.shared[key]; ok && prev != buf {
			return fmt.Errorf("batch %d column %d: row group %d's batches have different dictionaries", bi, i, c.group[bi])
		}
		c.shared[key] = buf
	}
	c.rows = append(c.rows, exec.DecodeRows(rec)...)
	if c.keep {
		b.Retain()
		c.kept = append(c.kept, b)
	}
	return nil
}

func (c *dictChecker) EmitWatermark(context.Context, int64) error { return nil }

func (c *dictChecker) release() {
	for _, b := range c.kept {
		b.Release()
	}
	c.kept = nil
}

// TestScanDictionary reads the fixture, dictionary-encoded with PLAIN
// fallback and without any dictionary, with and without dictionary output,
// at several batch sizes, kept or streamed, in recycled and poisoned
// memory: every cell reads back, dictionary arrays come out exactly for
// the batches whose pages are all dictionary-encoded, and no byte leaks.
func TestScanDictionary(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"dict": filepath.Join(dir, "dict.parquet"), "plain": filepath.Join(dir, "plain.parquet"),
		"dict_v2": filepath.Join(dir, "dict_v2.parquet")}
	writeDictFixture(t, files["dict"], true, pq.DataPageV1)
	writeDictFixture(t, files["plain"], false, pq.DataPageV1)
	writeDictFixture(t, files["dict_v2"], true, pq.DataPageV2)

	// The fixture must hold what the test is about: chunks of many pages,
	// PLAIN pages after dictionary ones in a chunk, all-dictionary chunks.
	for _, file := range []string{"dict", "dict_v2"} {
		kinds := pageKinds(t, files[file], 1)
		if len(kinds) != 4 {
			t.Fatalf("%s: %d row groups, want 4", file, len(kinds))
		}
		for g, ks := range kinds {
			dicts := 0
			for _, k := range ks {
				if k.dict {
					dicts++
				}
			}
			fallback := g%2 == 0
			if len(ks) < 5 || dicts == 0 || (dicts < len(ks)) != fallback || (fallback && !ks[0].dict) {
				t.Fatalf("%s: row group %d of column s: pages %v: not the intended layout", file, g, ks)
			}
		}
	}
	for _, ks := range pageKinds(t, files["plain"], 1) {
		for _, k := range ks {
			if k.dict {
				t.Fatal("the plain fixture has a dictionary page")
			}
		}
	}

	for _, file := range []string{"dict", "dict_v2", "plain"} {
		path := files[file]
		sKinds, rKinds := pageKinds(t, path, 1), pageKinds(t, path, 2)
		for _, mode := range []string{"", "poison"} {
			for _, bs := range []int{1, 3, 1000, 8192} {
				for _, asDict := range []bool{false, true} {
					for _, keep := range []bool{false, true} {
						name := fmt.Sprintf("%s/mode=%s/batch%d/dict=%v/keep=%v", file, mode, bs, asDict, keep)
						t.Run(name, func(t *testing.T) {
							t.Setenv("CLINK_PARQUET_RECYCLE", mode)
							checkDictScan(t, path, bs, asDict, keep, sKinds, rKinds, file != "plain")
						})
					}
				}
			}
		}
	}
}

func checkDictScan(t *testing.T, path string, bs int, asDict, keep bool, sKinds, rKinds [][]pageKind, dictFile bool) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	tbl := openWith(t, path, mem)
	src, err := tbl.NewSource(connectors.ScanSpec{BatchSize: bs})
	if err != nil {
		t.Fatal(err)
	}
	c := &dictChecker{keep: keep, dictCols: map[int][]bool{}, dicts: map[int]int{}, plains: map[int]int{},
		shared: map[[2]int]*memory.Buffer{}}
	defer c.release()
	var sWant, rWant []bool
	if asDict {
		// id (INT64), bin (BINARY) and the out-of-range indexes are ignored.
		ask := []int{1, 2, 0, 3, -1, 99}
		src.SetDictionaryColumns(ask)
		if got := src.DictionaryColumns(); fmt.Sprint(got) != fmt.Sprint(ask) {
			t.Fatalf("DictionaryColumns() = %v, want %v", got, ask)
		}
		sWant, c.group = expectDict(sKinds, bs)
		rWant, _ = expectDict(rKinds, bs)
		c.dictCols[1], c.dictCols[2] = sWant, rWant
	}
	if err := src.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	checkRows(t, c.rows, dictRow, dictRows, nil)
	if !asDict {
		return
	}
	count := func(want []bool) (d, p int) {
		for _, w := range want {
			if w {
				d++
			} else {
				p++
			}
		}
		return d, p
	}
	for col, want := range map[int][]bool{1: sWant, 2: rWant} {
		d, p := count(want)
		if c.dicts[col] != d || c.plains[col] != p {
			t.Fatalf("column %d: %d dictionary and %d plain batches, want %d and %d", col, c.dicts[col], c.plains[col], d, p)
		}
		if dictFile && d == 0 {
			t.Fatalf("column %d: no dictionary batch from a dictionary-encoded file", col)
		}
		if !dictFile && d != 0 {
			t.Fatalf("column %d: dictionary batches from a file without dictionaries", col)
		}
	}
	if dictFile && c.plains[1] == 0 {
		t.Fatal("column s: no plain batch from the chunks that fall back to PLAIN")
	}
}

// A projection: dictionary columns are indexes into the source's schema,
// not the table's.
func TestScanDictionaryProjected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dict.parquet")
	writeDictFixture(t, path, true, pq.DataPageV1)
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	tbl := openWith(t, path, mem)
	src, err := tbl.NewSource(connectors.ScanSpec{Columns: []int{3, 1}, BatchSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	src.SetDictionaryColumns([]int{1, 0}) // s as dictionary; bin is BINARY: ignored
	want, group := expectDict(pageKinds(t, path, 1), 100)
	c := &dictChecker{dictCols: map[int][]bool{1: want}, group: group, dicts: map[int]int{}, plains: map[int]int{},
		shared: map[[2]int]*memory.Buffer{}}
	if err := src.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	checkRows(t, c.rows, dictRow, dictRows, []int{3, 1})
	if c.dicts[1] == 0 || c.plains[1] == 0 {
		t.Fatalf("%d dictionary and %d plain batches of s", c.dicts[1], c.plains[1])
	}
}

// A code past the dictionary is an error, not a read out of bounds (the
// scan wraps it with the file, row group and column, as for every reader
// error).
func TestSpanCodesOutOfRange(t *testing.T) {
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	dict, err := buildDictionary(mem, encoding.ByteArrayValues([]byte("ab"), []uint32{0, 1, 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer dict.Release()
	r := &colReader{b: binding{conv: convBytes}, dictArr: dict, isDict: true,
		vals: encoding.Int32Values([]int32{1, 0, 2}), dense: 3, pageRows: 3}
	var o outCol
	o.initDict(mem, 3, false, dict, 0)
	defer o.release()
	err = r.fill(&o, 0, 3)
	if err == nil || !strings.Contains(err.Error(), "dictionary index 2 out of range (dictionary has 2 values)") {
		t.Fatalf("fill with code 2 into a 2-value dictionary: %v", err)
	}
}
