package changelog

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"reflect"

	"github.com/clink-sql/clink/exec"
)

// seed is the process's hash seed; tables never share hashes across
// processes.
var seed = maphash.MakeSeed()

// hashRow hashes a row-form row so that rows ops.SameRow calls the same
// hash alike: floats by their bits (NaN matches NaN, -0 does not match 0),
// everything else by value. A collision only costs a comparison.
func hashRow(row exec.Row) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	var buf [9]byte
	for _, v := range row {
		hashValue(&h, &buf, v)
	}
	return h.Sum64()
}

func hashValue(h *maphash.Hash, buf *[9]byte, v any) {
	word := func(tag byte, x uint64) {
		buf[0] = tag
		binary.LittleEndian.PutUint64(buf[1:], x)
		h.Write(buf[:])
	}
	switch x := v.(type) {
	case nil:
		h.WriteByte(0)
	case bool:
		if x {
			word(1, 1)
		} else {
			word(1, 0)
		}
	case int64:
		word(2, uint64(x))
	case int32:
		word(3, uint64(x))
	case float64:
		word(4, math.Float64bits(x))
	case float32:
		word(5, uint64(math.Float32bits(x)))
	case string:
		word(6, uint64(len(x)))
		h.WriteString(x)
	case []byte:
		word(7, uint64(len(x)))
		h.Write(x)
	case exec.Row:
		word(8, uint64(len(x)))
		for _, y := range x {
			hashValue(h, buf, y)
		}
	case []any:
		word(9, uint64(len(x)))
		for _, y := range x {
			hashValue(h, buf, y)
		}
	default:
		// Named integer types (timestamps, dates, times) by their kind;
		// anything else (decimals, intervals, maps) by its printed form,
		// which reflect.DeepEqual-equal values share.
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			word(10, uint64(rv.Int()))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			word(11, rv.Uint())
		default:
			h.WriteString(reflect.TypeOf(v).String())
			fmt.Fprintf(h, "%v", v)
		}
	}
}
