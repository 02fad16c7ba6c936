package nexmark

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writer builds a batch's Arrow columns directly in allocator buffers, a
// column at a time. It does not go through array builders: their per-value
// Append bookkeeping, the zeroing of every reservation and the regrowth of
// string data cost more than generating the values (on the wide table,
// measured back to back: 803 ns/event with builders, 448 without). Every
// buffer's size is known before it is filled, except string data, which
// is generated into a buffer reserved from an estimate.
type writer struct {
	mem memory.Allocator
	gen *gen
	// dense: every event of a batch has the columns' kind (flat tables), so
	// no column has nulls.
	dense bool
}

func (w *writer) alloc(size int) *memory.Buffer {
	b := memory.NewResizableBuffer(w.mem)
	b.Resize(size)
	return b
}

// column builds one top-level column of type typ (the declared type, which
// bindDeclared checked is the generated one up to names).
func (w *writer) column(c *column, typ arrow.DataType, ev *events) (arrow.ArrayData, error) {
	if c.fields == nil {
		return w.leaf(&c.leaf, typ, c.kind, ev, nil, 0)
	}
	st, ok := typ.(*arrow.StructType)
	if !ok || st.NumFields() != len(c.fields) {
		return nil, fmt.Errorf("type %s is not the generated ROW", typ)
	}
	validity, nulls := w.validity(c.kind, ev)
	if validity != nil {
		defer validity.Release()
	}
	children := make([]arrow.ArrayData, len(c.fields))
	defer func() {
		for _, d := range children {
			if d != nil {
				d.Release()
			}
		}
	}()
	for i := range c.fields {
		// The children share the struct's validity: a field of a null ROW
		// is null too, not a made-up value.
		d, err := w.leaf(&c.fields[i], st.Field(i).Type, c.kind, ev, validity, nulls)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", c.fields[i].name, err)
		}
		children[i] = d
	}
	return array.NewData(typ, len(ev.evs), []*memory.Buffer{validity}, children, nulls, 0), nil
}

// validity is the bitmap of the rows of kind k, or nil when every row is.
func (w *writer) validity(k uint8, ev *events) (*memory.Buffer, int) {
	if w.dense || k == kindAny {
		return nil, 0
	}
	buf := w.alloc(int(bitutil.BytesForBits(int64(len(ev.evs)))))
	bits := buf.Bytes()
	clear(bits)
	nulls := 0
	for i, kk := range ev.kinds {
		if kk == k {
			bitutil.SetBit(bits, i)
		} else {
			nulls++
		}
	}
	if nulls == 0 {
		buf.Release()
		return nil, 0
	}
	return buf, nulls
}

// leaf builds one scalar column. validity (nil: all valid) marks the rows
// that get a value; the others get a zero or an empty string.
func (w *writer) leaf(l *leaf, typ arrow.DataType, want uint8, ev *events, validity *memory.Buffer, nulls int) (arrow.ArrayData, error) {
	if typ.ID() != l.typ.arrow().ID() {
		return nil, fmt.Errorf("type %s is not the generated %s", typ, l.typ.arrow())
	}
	g := w.gen
	n := len(ev.evs)
	sparse := validity != nil
	switch l.typ {
	case valInt32:
		// The only int32 leaf is event_type.
		buf := w.alloc(n * 4)
		defer buf.Release()
		vals := arrow.Int32Traits.CastFromBytes(buf.Bytes())
		for i, k := range ev.kinds {
			vals[i] = int32(k)
		}
		return array.NewData(typ, n, []*memory.Buffer{validity, buf}, nil, nulls, 0), nil
	case valInt64, valTimestamp:
		// TIMESTAMP is int64 underneath.
		buf := w.alloc(n * 8)
		defer buf.Release()
		vals := arrow.Int64Traits.CastFromBytes(buf.Bytes())
		for i := range ev.evs {
			if sparse && ev.kinds[i] != want {
				vals[i] = 0
				continue
			}
			vals[i] = l.i64(g, &ev.evs[i])
		}
		return array.NewData(typ, n, []*memory.Buffer{validity, buf}, nil, nulls, 0), nil
	case valString:
		obuf := w.alloc((n + 1) * 4)
		defer obuf.Release()
		offs := arrow.Int32Traits.CastFromBytes(obuf.Bytes())
		// Generate straight into an allocator buffer sized for the
		// expected data. Should the estimate fall short, append moves the
		// data to the Go heap and it is copied back once at the end.
		dbuf := memory.NewResizableBuffer(w.mem)
		defer dbuf.Release()
		dbuf.Reserve((n - nulls) * l.avgLen * 5 / 4)
		data := dbuf.Buf()[:0]
		offs[0] = 0
		for i := range ev.evs {
			if !sparse || ev.kinds[i] == want {
				data = l.str(g, data, &ev.evs[i])
			}
			if len(data) > 1<<31-1 {
				return nil, fmt.Errorf("a batch of %d rows has over 2 GiB of string data; lower 'batch.size'", n)
			}
			offs[i+1] = int32(len(data))
		}
		if len(data) > len(dbuf.Buf()) || (len(data) > 0 && &data[0] != &dbuf.Buf()[0]) {
			dbuf.Reserve(len(data))
			copy(dbuf.Buf(), data)
		}
		dbuf.ResizeNoShrink(len(data))
		return array.NewData(typ, n, []*memory.Buffer{validity, obuf, dbuf}, nil, nulls, 0), nil
	}
	return nil, fmt.Errorf("no column writer for value type %d", l.typ)
}
