package ops

import (
	"bytes"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// MIN/MAX over a dictionary-encoded VARCHAR (codes from a Parquet scan,
// see plan.dictionaries): the values are compared in the dictionary, never
// copied out per row, and for group 0 (the whole input of an aggregate
// without GROUP BY) each code is folded once per dictionary: MIN and MAX
// do not change when a value comes again, so a bit per code says it came.

// minMaxDict is the state kept for the last dictionary seen.
type minMaxDict struct {
	data   arrow.ArrayData // retained: its memory cannot come back as another dictionary
	folded []uint64        // codes already folded into group 0
}

// takesDictionary tells HashAggregate to hand dictionary columns over as
// they are instead of decoding them.
func (m *minMaxAcc) takesDictionary() bool { return m.cat == mmString }

func (m *minMaxAcc) minMaxDictionary(a *array.Dictionary, ids []int32) error {
	vals, ok := a.Dictionary().(*array.String)
	if !ok {
		return fmt.Errorf("MIN/MAX over a dictionary of %s is not supported", a.Dictionary().DataType())
	}
	if d := a.Data().Dictionary(); m.dict.data != d {
		m.release()
		d.Retain()
		m.dict.data = d
		m.dict.folded = make([]uint64, (vals.Len()+63)/64)
	}
	folded := m.dict.folded
	offs := vals.ValueOffsets()
	var data []byte
	if b := vals.Data().Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	n := vals.Len()
	nulls := a.NullN() > 0
	for i, g := range ids {
		if g < 0 || (nulls && a.IsNull(i)) {
			continue
		}
		c := a.GetValueIndex(i)
		if c < 0 || c >= n {
			return fmt.Errorf("dictionary code %d out of range (dictionary has %d values)", c, n)
		}
		if g == 0 {
			if folded[c>>6]&(1<<uint(c&63)) != 0 {
				continue
			}
			folded[c>>6] |= 1 << uint(c&63)
		}
		if vals.IsNull(c) {
			continue
		}
		v := data[offs[c]:offs[c+1]]
		if m.set[g] {
			cur := m.strs[g]
			if !m.better(bytes.Compare(v, unsafe.Slice(unsafe.StringData(cur), len(cur)))) {
				continue
			}
		}
		m.strs[g] = string(v)
		m.set[g] = true
	}
	return nil
}

// release lets go of the remembered dictionary.
func (m *minMaxAcc) release() {
	if m.dict.data != nil {
		m.dict.data.Release()
		m.dict = minMaxDict{}
	}
}
