// Package shuffle is the keyed exchange: it routes every row of a stream to
// one of several parallel subtasks by the hash of its key, so that all rows
// of one key meet the same keyed state. A columnar batch is split by index
// lists and one gather per target, without materialising rows; a row batch
// is split row by row with the same hash, so a stream that interleaves both
// kinds routes every key to the same subtask.
package shuffle

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/cespare/xxhash/v2"

	"github.com/clink-sql/clink/exec"
)

// KeyGroups is the number of key groups, like Flink's max parallelism: a key
// hashes to a key group and a key group belongs to one subtask. Routing
// through key groups keeps a key group's subtask stable while parallelism
// changes only the ranges of groups, which is what rescaling keyed state
// needs later.
const KeyGroups = 128

// TargetOf maps a key hash to one of targets subtasks: keyGroup * targets /
// KeyGroups, so each subtask owns a contiguous range of key groups.
func TargetOf(keyHash uint64, targets int) int {
	keyGroup := int(keyHash % KeyGroups)
	return keyGroup * targets / KeyGroups
}

// The hash of a key is defined on row-form values (exec.Row) and the typed
// column loops reproduce it exactly: h = seed, then for each key column
// h = combine(h, hash of the value). Every value hash is fully mixed, so the
// combination can stay a cheap rotate-xor.
const (
	seed     uint64 = 0x243f6a8885a308d3
	nullHash uint64 = 0x6a09e667f3bcc909
	trueHash uint64 = 0x3c6ef372fe94f82b
	falseHsh uint64 = 0xa54ff53a5f1d36f1
	nanBits  uint64 = 0x7ff8000000000001 // the one NaN every NaN hashes as
	listSeed uint64 = 0x510e527fade682d1
	rowSeed  uint64 = 0x9b05688c2b3e6c1f
)

func combine(h, v uint64) uint64 { return bits.RotateLeft64(h, 23) ^ v }

// mix is murmur3's 64-bit finaliser: every input bit reaches every output
// bit, so the low bits that pick the key group are well spread even for
// sequential integer keys.
func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func hashInt(v int64) uint64 { return mix(uint64(v)) }

// hashFloat hashes the value, not the bit pattern: -0.0 equals 0.0 and every
// NaN is one group key.
func hashFloat(f float64) uint64 {
	if f == 0 {
		return mix(0)
	}
	if f != f {
		return mix(nanBits)
	}
	return mix(math.Float64bits(f))
}

func hashDecimal(n decimal128.Num) uint64 {
	return mix(n.LowBits()) ^ bits.RotateLeft64(mix(uint64(n.HighBits())^0x1f83d9abfb41bd6b), 31)
}

// hashInterval hashes an interval's normalised key, so the intervals =
// calls equal ('1 month', '30 days') reach one subtask.
func hashInterval(v arrow.MonthDayNanoInterval) uint64 {
	days, rem := exec.IntervalKey(v)
	return mix(uint64(days)) ^ bits.RotateLeft64(mix(uint64(rem)^0x1f83d9abfb41bd6b), 31)
}

func hashBool(b bool) uint64 {
	if b {
		return trueHash
	}
	return falseHsh
}

// hashValue hashes one row-form value (see exec.Row for the Go types).
func hashValue(v any) uint64 {
	switch x := v.(type) {
	case nil:
		return nullHash
	case bool:
		return hashBool(x)
	case int32:
		return hashInt(int64(x))
	case int64:
		return hashInt(x)
	case float32:
		return hashFloat(float64(x))
	case float64:
		return hashFloat(x)
	case decimal128.Num:
		return hashDecimal(x)
	case string:
		return xxhash.Sum64String(x)
	case []byte:
		return xxhash.Sum64(x)
	case arrow.Timestamp:
		return hashInt(int64(x))
	case arrow.Date32:
		return hashInt(int64(x))
	case arrow.Time64:
		return hashInt(int64(x))
	case arrow.MonthDayNanoInterval:
		return hashInterval(x)
	case exec.Row:
		h := rowSeed
		for _, f := range x {
			h = combine(h, hashValue(f))
		}
		return mix(h)
	case []any:
		h := combine(listSeed, uint64(len(x)))
		for _, e := range x {
			h = combine(h, hashValue(e))
		}
		return mix(h)
	default:
		// Not a row-form type; exec.Value never produces one. Hash its
		// printed form rather than panic, so routing stays deterministic.
		return xxhash.Sum64String(fmt.Sprint(v))
	}
}

// HashRow is the key hash of one row (the row path). keyCols index r.
func HashRow(r exec.Row, keyCols []int) uint64 {
	h := seed
	for _, c := range keyCols {
		h = combine(h, hashValue(r[c]))
	}
	return h
}

// HashColumns writes the key hash of every row of rec into out (grown only
// when too short) and returns it. It equals HashRow over the decoded rows,
// but runs typed loops over the key arrays and decodes nothing. keyCols
// must index rec's columns (Split checks them).
func HashColumns(rec arrow.RecordBatch, keyCols []int, out []uint64) []uint64 {
	n := int(rec.NumRows())
	if cap(out) < n {
		out = make([]uint64, n)
	}
	out = out[:n]
	for i := range out {
		out[i] = seed
	}
	for _, c := range keyCols {
		hashColumn(rec.Column(c), out)
	}
	return out
}

// hashColumn folds arr's value hashes into out: out[i] = combine(out[i],
// hash(arr[i])). Types without a typed loop go through exec.Value, the row
// path's own decoding, so they cannot disagree with HashRow.
func hashColumn(arr arrow.Array, out []uint64) {
	switch a := arr.(type) {
	case *array.Int64:
		hashInts(a, a.Int64Values(), out)
	case *array.Int32:
		hashInts(a, a.Int32Values(), out)
	case *array.Int16:
		hashInts(a, a.Int16Values(), out)
	case *array.Int8:
		hashInts(a, a.Int8Values(), out)
	case *array.Uint8:
		hashInts(a, a.Uint8Values(), out)
	case *array.Uint16:
		hashInts(a, a.Uint16Values(), out)
	case *array.Uint32:
		hashInts(a, a.Uint32Values(), out)
	case *array.Uint64:
		hashInts(a, a.Uint64Values(), out) // row form int64(v): same bits
	case *array.Timestamp:
		hashInts(a, a.TimestampValues(), out)
	case *array.Date32:
		hashInts(a, a.Date32Values(), out)
	case *array.Time64:
		hashInts(a, a.Time64Values(), out)
	case *array.Time32:
		hashInts(a, a.Time32Values(), out)
	case *array.MonthDayNanoInterval:
		vals := a.MonthDayNanoIntervalValues()
		for i := range out {
			if a.IsNull(i) {
				out[i] = combine(out[i], nullHash)
			} else {
				out[i] = combine(out[i], hashInterval(vals[i]))
			}
		}
	case *array.Float64:
		vals := a.Float64Values()
		for i := range out {
			if a.IsNull(i) {
				out[i] = combine(out[i], nullHash)
			} else {
				out[i] = combine(out[i], hashFloat(vals[i]))
			}
		}
	case *array.Float32:
		vals := a.Float32Values()
		for i := range out {
			if a.IsNull(i) {
				out[i] = combine(out[i], nullHash)
			} else {
				out[i] = combine(out[i], hashFloat(float64(vals[i])))
			}
		}
	case *array.Boolean:
		for i := range out {
			if a.IsNull(i) {
				out[i] = combine(out[i], nullHash)
			} else {
				out[i] = combine(out[i], hashBool(a.Value(i)))
			}
		}
	case *array.Decimal128:
		vals := a.Values()
		for i := range out {
			if a.IsNull(i) {
				out[i] = combine(out[i], nullHash)
			} else {
				out[i] = combine(out[i], hashDecimal(vals[i]))
			}
		}
	case *array.String:
		hashBytes(a, a.ValueOffsets(), a.ValueBytes(), out)
	case *array.Binary:
		hashBytes(a, a.ValueOffsets(), a.ValueBytes(), out)
	case *array.LargeString:
		hashBytes(a, a.ValueOffsets(), a.ValueBytes(), out)
	case *array.Dictionary:
		// Hash each dictionary entry once, then look the rows up.
		dict := a.Dictionary()
		dh := make([]uint64, dict.Len())
		hashColumn(dict, dh) // combine(0, v) == v: plain value hashes
		for i := range out {
			if a.IsNull(i) {
				out[i] = combine(out[i], nullHash)
			} else {
				out[i] = combine(out[i], dh[a.GetValueIndex(i)])
			}
		}
	default:
		for i := range out {
			out[i] = combine(out[i], hashValue(exec.Value(arr, i)))
		}
	}
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// hashInts hashes integers by their int64 value, as the row path sees them
// (int8/16 and uint8/16 widen to int32, uint32/64 to int64, all sign- or
// zero-extended the same way).
func hashInts[T integer](a arrow.Array, vals []T, out []uint64) {
	vals = vals[:len(out)]
	if a.NullN() == 0 {
		for i, v := range vals {
			out[i] = combine(out[i], hashInt(int64(v)))
		}
		return
	}
	for i, v := range vals {
		if a.IsNull(i) {
			out[i] = combine(out[i], nullHash)
		} else {
			out[i] = combine(out[i], hashInt(int64(v)))
		}
	}
}

func hashBytes[O int32 | int64](a arrow.Array, offs []O, data []byte, out []uint64) {
	// ValueBytes starts at the array's first offset, not at the buffer's
	// start, so index it relative to offs[0].
	base := offs[0]
	for i := range out {
		if a.IsNull(i) {
			out[i] = combine(out[i], nullHash)
		} else {
			out[i] = combine(out[i], xxhash.Sum64(data[offs[i]-base:offs[i+1]-base]))
		}
	}
}
