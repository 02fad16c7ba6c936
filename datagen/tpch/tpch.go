// Package tpch generates the eight tables of the TPC-H benchmark at a scale
// factor, following the rules of the specification's clause 4.2 (table
// sizes, sparse order keys, value ranges and distributions, the text
// grammar, the derived columns), into Parquet files with the column types
// DuckDB's tpch extension gives them (BIGINT keys, INTEGER nation/region
// keys and sizes, DECIMAL(15,2) money and quantities, DATE dates, VARCHAR
// text).
//
// The values are not dbgen's (the random streams differ), so the query
// answers are not the specification's reference answers; they are the
// answers of this data, which both engines of a comparison read.
package tpch

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/datagen"
)

// DefaultSeed is the seed of the command-line generators and the bench.
const DefaultSeed = 19920101

// Options say what to generate.
type Options struct {
	// SF is the scale factor: 1 is ~1 GB of text data (6M lineitems).
	SF float64
	// Dir receives one directory per table, <Dir>/<table>/<table>-NNN.parquet,
	// and manifest.json, written last.
	Dir string
	// Seed selects the data; the same seed and SF give the same files.
	Seed uint64
	// Workers is how many files are written at once (0: GOMAXPROCS).
	Workers int
}

// Table names, in the order of the specification's schema.
const (
	Part     = "part"
	Supplier = "supplier"
	PartSupp = "partsupp"
	Customer = "customer"
	Orders   = "orders"
	Lineitem = "lineitem"
	Nation   = "nation"
	Region   = "region"
)

// Tables lists the eight tables.
func Tables() []string {
	return []string{Part, Supplier, PartSupp, Customer, Orders, Lineitem, Nation, Region}
}

// Manifest describes a finished generation (datagen.ManifestName in the
// directory); it is written last, so a directory with a manifest holds
// every file it names.
type Manifest struct {
	SF    float64             `json:"sf"`
	Seed  uint64              `json:"seed"`
	Rows  map[string]int64    `json:"rows"`
	Files map[string][]string `json:"files"` // relative to the directory
	Took  string              `json:"took"`
}

// ReadManifest reads dir's manifest (an error when there is none).
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	return m, datagen.ReadManifest(dir, &m)
}

// scale holds the table cardinalities of one scale factor.
type scale struct {
	sf        float64
	parts     int64
	suppliers int64
	customers int64
	orders    int64
	clerks    int64
}

func newScale(sf float64) (scale, error) {
	if !(sf > 0) || math.IsInf(sf, 0) || sf > 1000 {
		return scale{}, fmt.Errorf("tpch: scale factor %v: want a number in (0, 1000]", sf)
	}
	s := scale{
		sf:        sf,
		parts:     int64(200_000 * sf),
		suppliers: int64(10_000 * sf),
		customers: int64(150_000 * sf),
		orders:    int64(1_500_000 * sf),
		clerks:    max(int64(1_000*sf), 1),
	}
	// The supplier bridge needs 4 distinct suppliers per part, and orders
	// need customers whose key is not a multiple of 3.
	if s.suppliers < 4 || s.customers < 3 {
		return scale{}, fmt.Errorf("tpch: scale factor %v is too small (it gives %d suppliers; at least 4 are needed)", sf, s.suppliers)
	}
	return s, nil
}

// RowCount is the row count of table at scale factor sf, as the
// specification fixes it (clause 4.2.5.1); -1 for lineitem, whose count
// is random (about 4 per order).
func RowCount(table string, sf float64) int64 {
	s, err := newScale(sf)
	if err != nil {
		return -1
	}
	switch table {
	case Part:
		return s.parts
	case Supplier:
		return s.suppliers
	case PartSupp:
		return 4 * s.parts
	case Customer:
		return s.customers
	case Orders:
		return s.orders
	case Nation:
		return int64(len(nations))
	case Region:
		return int64(len(regions))
	}
	return -1
}

// Rows per file: a file is one task of the worker pool, ~1M rows, one row
// group (a little under datagen.RowGroupRows, so that lineitem's random
// count does not spill a sliver into a second group). A unit is a row,
// except for lineitem (an order and its 1-7 lines, 4 on average) and
// partsupp (a part and its 4 suppliers).
const (
	rowsPerFile          = 1_000_000
	ordersPerLineFile    = rowsPerFile / 4
	partsPerPartSuppFile = rowsPerFile / 4
)

// generator is one generation's shared, read-only state.
type generator struct {
	s    scale
	seed uint64
	text *textPool
}

// Generate writes the tables under o.Dir and the manifest last.
func Generate(ctx context.Context, o Options) (Manifest, error) {
	start := time.Now()
	s, err := newScale(o.SF)
	if err != nil {
		return Manifest{}, err
	}
	if err := datagen.StartDir(o.Dir); err != nil {
		return Manifest{}, fmt.Errorf("tpch: %w", err)
	}
	g := &generator{s: s, seed: o.Seed, text: newTextPool(o.Seed)}
	m := Manifest{SF: o.SF, Seed: o.Seed, Rows: map[string]int64{}, Files: map[string][]string{}}
	var mu sync.Mutex
	var tasks []datagen.Task
	add := func(table string, units, perFile, cost int64, fill func(*generator) datagen.Fill, perBatch int64) {
		for i, lo := 0, int64(1); lo <= units; i, lo = i+1, lo+perFile {
			hi := min(lo+perFile, units+1)
			rel := filepath.Join(table, fmt.Sprintf("%s-%03d.parquet", table, i))
			path := filepath.Join(o.Dir, rel)
			tasks = append(tasks, datagen.Task{
				Name: rel,
				Cost: (hi - lo) * cost,
				Run: func(ctx context.Context) error {
					n, err := datagen.WriteUnits(ctx, path, Schema(table), fileOptions(table), lo, hi, perBatch, fill(g))
					if err != nil {
						return err
					}
					mu.Lock()
					m.Rows[table] += n
					m.Files[table] = append(m.Files[table], rel)
					mu.Unlock()
					return nil
				},
			})
		}
	}
	// Costs are rough bytes per unit, so that the big files start first.
	add(Lineitem, s.orders, ordersPerLineFile, 4*150, (*generator).fillLineitem, datagen.BatchRows/4)
	add(Orders, s.orders, rowsPerFile, 110, (*generator).fillOrders, datagen.BatchRows)
	add(PartSupp, s.parts, partsPerPartSuppFile, 4*145, (*generator).fillPartSupp, datagen.BatchRows/4)
	add(Part, s.parts, rowsPerFile, 125, (*generator).fillPart, datagen.BatchRows)
	add(Customer, s.customers, rowsPerFile, 165, (*generator).fillCustomer, datagen.BatchRows)
	add(Supplier, s.suppliers, rowsPerFile, 145, (*generator).fillSupplier, datagen.BatchRows)
	add(Nation, int64(len(nations)), rowsPerFile, 1, (*generator).fillNation, datagen.BatchRows)
	add(Region, int64(len(regions)), rowsPerFile, 1, (*generator).fillRegion, datagen.BatchRows)

	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if err := datagen.RunTasks(ctx, workers, tasks); err != nil {
		return Manifest{}, err
	}
	for _, fs := range m.Files {
		sort.Strings(fs)
	}
	m.Took = time.Since(start).Round(time.Millisecond).String()
	return m, datagen.WriteManifest(o.Dir, m)
}

// fileOptions: text columns that are nearly unique per row are written
// without a dictionary.
func fileOptions(table string) datagen.FileOptions {
	plain := map[string][]string{
		Part:     {"p_name", "p_comment"},
		Supplier: {"s_name", "s_address", "s_phone", "s_comment"},
		PartSupp: {"ps_comment"},
		Customer: {"c_name", "c_address", "c_phone", "c_comment"},
		Orders:   {"o_comment"},
		Lineitem: {"l_comment"},
	}
	return datagen.FileOptions{PlainColumns: plain[table]}
}

// Column types, as DuckDB's tpch extension declares them.
var (
	tBigint  = arrow.PrimitiveTypes.Int64
	tInteger = arrow.PrimitiveTypes.Int32
	tVarchar = arrow.BinaryTypes.String
	tDate    = arrow.FixedWidthTypes.Date32
	tMoney   = &arrow.Decimal128Type{Precision: 15, Scale: 2}
)

func fields(cols ...any) *arrow.Schema {
	var fs []arrow.Field
	for i := 0; i < len(cols); i += 2 {
		fs = append(fs, arrow.Field{Name: cols[i].(string), Type: cols[i+1].(arrow.DataType)})
	}
	return arrow.NewSchema(fs, nil)
}

var schemas = map[string]*arrow.Schema{
	Part: fields("p_partkey", tBigint, "p_name", tVarchar, "p_mfgr", tVarchar, "p_brand", tVarchar,
		"p_type", tVarchar, "p_size", tInteger, "p_container", tVarchar, "p_retailprice", tMoney,
		"p_comment", tVarchar),
	Supplier: fields("s_suppkey", tBigint, "s_name", tVarchar, "s_address", tVarchar,
		"s_nationkey", tInteger, "s_phone", tVarchar, "s_acctbal", tMoney, "s_comment", tVarchar),
	PartSupp: fields("ps_partkey", tBigint, "ps_suppkey", tBigint, "ps_availqty", tBigint,
		"ps_supplycost", tMoney, "ps_comment", tVarchar),
	Customer: fields("c_custkey", tBigint, "c_name", tVarchar, "c_address", tVarchar,
		"c_nationkey", tInteger, "c_phone", tVarchar, "c_acctbal", tMoney, "c_mktsegment", tVarchar,
		"c_comment", tVarchar),
	Orders: fields("o_orderkey", tBigint, "o_custkey", tBigint, "o_orderstatus", tVarchar,
		"o_totalprice", tMoney, "o_orderdate", tDate, "o_orderpriority", tVarchar, "o_clerk", tVarchar,
		"o_shippriority", tInteger, "o_comment", tVarchar),
	Lineitem: fields("l_orderkey", tBigint, "l_partkey", tBigint, "l_suppkey", tBigint,
		"l_linenumber", tBigint, "l_quantity", tMoney, "l_extendedprice", tMoney, "l_discount", tMoney,
		"l_tax", tMoney, "l_returnflag", tVarchar, "l_linestatus", tVarchar, "l_shipdate", tDate,
		"l_commitdate", tDate, "l_receiptdate", tDate, "l_shipinstruct", tVarchar, "l_shipmode", tVarchar,
		"l_comment", tVarchar),
	Nation: fields("n_nationkey", tInteger, "n_name", tVarchar, "n_regionkey", tInteger, "n_comment", tVarchar),
	Region: fields("r_regionkey", tInteger, "r_name", tVarchar, "r_comment", tVarchar),
}

// Schema is table's Arrow schema (nil for an unknown table). Every column
// is NOT NULL, as in the specification.
func Schema(table string) *arrow.Schema { return schemas[table] }
