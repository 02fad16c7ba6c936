package ops

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// discard is an Emitter that drops output.
type discard struct{}

func (discard) Emit(context.Context, *exec.Batch) error    { return nil }
func (discard) EmitWatermark(context.Context, int64) error { return nil }

const benchBatch = 4096

// benchBatches builds columnar batches of n rows with keys of cardinality
// card: k BIGINT, s VARCHAR, v BIGINT, f DOUBLE, t TIMESTAMP(3).
func benchBatches(b *testing.B, mem memory.Allocator, n, card int) []*exec.Batch {
	var out []*exec.Batch
	for start := 0; start < n; start += benchBatch {
		rows := make([]exec.Row, 0, benchBatch)
		for i := start; i < min(start+benchBatch, n); i++ {
			k := int64((i * 7919) % card)
			rows = append(rows, exec.Row{k, fmt.Sprintf("key-%06d", k), int64(i % 100), float64(i), arrow.Timestamp(int64(i))})
		}
		rec, err := exec.EncodeRows(mem, SampleSchema, rows)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, exec.NewColumnarBatch(rec))
	}
	return out
}

func release(bs []*exec.Batch) {
	for _, b := range bs {
		b.Release()
	}
}

func runBench(b *testing.B, batches []*exec.Batch, rows int, mk func() exec.Operator, inputs int) {
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		op := mk()
		for in := 0; in < inputs; in++ {
			for _, bt := range batches {
				if _, err := exec.Dispatch(ctx, op, true, in, bt, discard{}); err != nil {
					b.Fatal(err)
				}
			}
		}
		for in := 0; in < inputs; in++ {
			if err := op.Finish(ctx, in, discard{}); err != nil {
				b.Fatal(err)
			}
		}
		op.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows*inputs), "ns/row")
}

func BenchmarkFilter(b *testing.B) {
	mem := memory.NewGoAllocator()
	const n = 1 << 20
	bs := benchBatches(b, mem, n, 1000)
	defer release(bs)
	runBench(b, bs, n, func() exec.Operator { return NewFilter(tGt{col: 2, k: 49}, mem) }, 1) // keeps 50%
}

func benchAgg(b *testing.B, key, card int) {
	benchAggOf(b, key, card, []AggSpec{{Func: "count_star", Col: -1, Type: i64}, {Func: "sum", Col: 2, Type: i64}, {Func: "max", Col: 3, Type: f64}})
}

func benchAggOf(b *testing.B, key, card int, specs []AggSpec) {
	mem := memory.NewGoAllocator()
	const n = 1 << 20
	bs := benchBatches(b, mem, n, card)
	defer release(bs)
	out := aggSchema(SampleSchema, []int{key}, specs)
	runBench(b, bs, n, func() exec.Operator {
		h := NewHashAggregate([]int{key}, specs, out, mem)
		h.SetColumnarOutput(true)
		return h
	}, 1)
}

func BenchmarkHashAggregateInt64Key(b *testing.B)   { benchAgg(b, 0, 10000) }
func BenchmarkHashAggregateStringKey(b *testing.B)  { benchAgg(b, 1, 10000) }
func BenchmarkHashAggregateDoubleKey(b *testing.B)  { benchAgg(b, 3, 1<<30) } // general key path, every row its own group
func BenchmarkHashAggregateInt64Key1M(b *testing.B) { benchAgg(b, 0, 1<<20) }

// BenchmarkHashAggregateStats is BenchmarkHashAggregateInt64Key's shape with
// the variance family (a Welford update, one division, per value).
func BenchmarkHashAggregateStats(b *testing.B) {
	benchAggOf(b, 0, 10000, []AggSpec{{Func: "count_star", Col: -1, Type: i64}, {Func: "stddev_samp", Col: 2, Type: f64}, {Func: "var_pop", Col: 3, Type: f64}})
}

// BenchmarkHashJoin probes 1M rows against a 10k-row build side with one
// match per probe row, columnar output on. ns/row is per probe row.
func BenchmarkHashJoin(b *testing.B) {
	mem := memory.NewGoAllocator()
	const n, nb = 1 << 20, 10000
	probe := benchBatches(b, mem, n, nb)
	defer release(probe)
	build := benchBatches(b, mem, nb, nb) // keys 0..nb-1, each once
	defer release(build)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		j := NewHashJoin(Inner, []int{0}, []int{0}, joinedSample, mem)
		j.SetColumnarOutput(true)
		for _, bt := range build {
			if _, err := exec.Dispatch(ctx, j, true, 1, bt, discard{}); err != nil {
				b.Fatal(err)
			}
		}
		if err := j.Finish(ctx, 1, discard{}); err != nil {
			b.Fatal(err)
		}
		for _, bt := range probe {
			if _, err := exec.Dispatch(ctx, j, true, 0, bt, discard{}); err != nil {
				b.Fatal(err)
			}
		}
		j.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}

var joinedSample = arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...), SampleSchema.Fields()...), nil)

// BenchmarkGather compares the typed gather with compute.Take over one
// batch (every other row of a BIGINT and a VARCHAR column).
func BenchmarkGather(b *testing.B) {
	mem := memory.NewGoAllocator()
	bs := benchBatches(b, mem, benchBatch, 1000)
	defer release(bs)
	rec := bs[0].Record()
	var idx []int32
	for i := 0; i < benchBatch; i += 2 {
		idx = append(idx, int32(i))
	}
	b.Run("typed", func(b *testing.B) {
		for range b.N {
			for _, c := range []int{0, 1} {
				a, err := gather(mem, rec.Column(c), idx)
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(idx)), "ns/row")
	})
	b.Run("compute.Take", func(b *testing.B) {
		ctx := compute.WithAllocator(context.Background(), mem)
		for range b.N {
			ib := array.NewInt32Builder(mem)
			ib.AppendValues(idx, nil)
			ia := ib.NewArray()
			ib.Release()
			for _, c := range []int{0, 1} {
				a, err := compute.TakeArray(ctx, rec.Column(c), ia)
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
			ia.Release()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(idx)), "ns/row")
	})
}

// benchTopN runs an updating top-n over 1M rows (row form: the batches'
// rows are decoded once, on the first pass, and cached). ns/row is per
// input row.
func benchTopN(b *testing.B, key SortKey, limit int64) {
	mem := memory.NewGoAllocator()
	const n = 1 << 20
	bs := benchBatches(b, mem, n, 1<<20)
	defer release(bs)
	runBench(b, bs, n, func() exec.Operator { return NewUpdatingTopN([]SortKey{key}, limit, 0, topNOut) }, 1)
}

// Keys in a scrambled order: after the first batches few rows beat the
// n-th and are rejected with one comparison.
func BenchmarkUpdatingTopN10(b *testing.B)   { benchTopN(b, SortKey{Col: 0, Desc: true}, 10) }
func BenchmarkUpdatingTopN1000(b *testing.B) { benchTopN(b, SortKey{Col: 0, Desc: true}, 1000) }

// f rises every row: every row enters the top and one leaves (the worst case).
func BenchmarkUpdatingTopN10Rising(b *testing.B) { benchTopN(b, SortKey{Col: 3, Desc: true}, 10) }

// BenchmarkKeyIndexNewDictionary maps a fresh 10k-entry dictionary (url-like
// strings) into an empty key table: what a GROUP BY on dictionary codes
// pays once per column chunk. ns/entry.
func BenchmarkKeyIndexNewDictionary(b *testing.B) {
	mem := memory.NewGoAllocator()
	const n = 10000
	sb := array.NewStringBuilder(mem)
	for i := range n {
		sb.Append(fmt.Sprintf("https://www.nexmark.com/%04x/%04x/item.htm?query=1&channel_id=%d", i*7919%65536, i, i*31))
	}
	dict := sb.NewArray()
	defer dict.Release()
	ib := array.NewInt32Builder(mem)
	for i := range n {
		ib.Append(int32(i * 7 % n))
	}
	codes := ib.NewArray()
	defer codes.Release()
	a := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, codes, dict)
	defer a.Release()
	ids := make([]int32, 0, n)
	b.ResetTimer()
	for range b.N {
		k := newKeyIndex(keyString, true)
		var err error
		if ids, err = k.idsDict(a, n, true, ids[:0], nil); err != nil {
			b.Fatal(err)
		}
		k.release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
}

// BenchmarkRetractingTopN: a top-10 over a GROUP BY's changelog holding
// 100k groups; each op is one batch of 512 updates (-U/+U pairs), and the
// window is chosen again over every held row. ns/batch.
func BenchmarkRetractingTopN(b *testing.B) {
	mem := memory.NewGoAllocator()
	const groups = 100_000
	op := NewRetractingTopN([]SortKey{{Col: 1, Desc: true}}, 10, 0, retractOut)
	defer op.Close()
	ctx := context.Background()
	var rows []exec.Row
	for k := range groups {
		rows = append(rows, exec.Row{OpInsert, int64(k), int64(k % 1000)})
	}
	load := makeBatches(b, mem, input{retractIn, rows}, groups, false)
	for _, bt := range load {
		if _, err := exec.Dispatch(ctx, op, true, 0, bt, discard{}); err != nil {
			b.Fatal(err)
		}
		bt.Release()
	}
	count := make([]int64, groups)
	for k := range count {
		count[k] = int64(k % 1000)
	}
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		rows = rows[:0]
		for j := range 256 {
			k := (i*7919 + j*104729) % groups
			rows = append(rows, exec.Row{OpUpdateBefore, int64(k), count[k]})
			count[k]++
			rows = append(rows, exec.Row{OpUpdateAfter, int64(k), count[k]})
		}
		batch := makeBatches(b, mem, input{retractIn, rows}, len(rows), false)
		b.StartTimer()
		for _, bt := range batch {
			if _, err := exec.Dispatch(ctx, op, true, 0, bt, discard{}); err != nil {
				b.Fatal(err)
			}
			bt.Release()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/batch")
}

// BenchmarkKeyIndexComposite: 8192-row batches of a composite GROUP BY key
// as TPC-H q01 (two dictionary-coded one-letter VARCHARs) and as ClickBench
// (a plain VARCHAR of many values and a BIGINT), looked up in a warm index
// by the general byte encoding and by packed words with interned strings
// (keys_intern.go). ns/row.
func BenchmarkKeyIndexComposite(b *testing.B) {
	mem := memory.NewGoAllocator()
	const n = 8192
	dictOf := func(vals ...string) arrow.Array {
		sb := array.NewStringBuilder(mem)
		defer sb.Release()
		sb.AppendValues(vals, nil)
		return sb.NewArray()
	}
	codesOf := func(card int, step int) arrow.Array {
		ib := array.NewInt32Builder(mem)
		defer ib.Release()
		for i := range n {
			ib.Append(int32(i * step % card))
		}
		return ib.NewArray()
	}
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	d1, d2 := dictOf("A", "N", "R"), dictOf("F", "O")
	c1, c2 := codesOf(3, 7), codesOf(2, 3)
	flag := array.NewDictionaryArray(dt, c1, d1)
	status := array.NewDictionaryArray(dt, c2, d2)
	sb := array.NewStringBuilder(mem)
	lb := array.NewInt64Builder(mem)
	for i := range n {
		sb.Append(fmt.Sprintf("search phrase %d", i*7919%2000))
		lb.Append(int64(i * 31 % 500))
	}
	phrase, user := sb.NewArray(), lb.NewArray()
	sb.Release()
	lb.Release()
	for _, shape := range []struct {
		name string
		cols []arrow.Array
	}{{"q01-two-dict-strings", []arrow.Array{flag, status}}, {"string-bigint", []arrow.Array{phrase, user}}} {
		types := make([]arrow.DataType, len(shape.cols))
		for i, c := range shape.cols {
			types[i] = c.DataType()
			if d, ok := c.DataType().(*arrow.DictionaryType); ok {
				types[i] = d.ValueType
			}
		}
		for _, kind := range []struct {
			name string
			kind keyKind
		}{{"general", keyGeneral}, {"packed", chooseKeyKind(types)}} {
			b.Run(shape.name+"/"+kind.name, func(b *testing.B) {
				k := newKeyIndex(kind.kind, true)
				defer k.release()
				ids := make([]int32, 0, n)
				var err error
				for range b.N {
					if ids, err = k.idsColumnar(shape.cols, n, true, ids[:0], nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
			})
		}
	}
}
