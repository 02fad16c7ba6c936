package expr

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Logical and storage types.
//
// An expression's Type() is its logical type: what the plan records, what
// the output schema says and what a user sees. Usually that is also how the
// column is laid out. Where the two differ the logical type is an Arrow
// extension type (arrow.ExtensionType, registered with
// arrow.RegisterExtensionType) over a storage type: a kernel builds the
// storage column, nulls included, and label wraps the finished column in the
// extension type as the very last step. Because the label is applied after
// nulls are derived, an empty batch, an all-NULL batch and a populated one
// carry exactly the same type and metadata.
//
// The row form of an extension value is the row form of its storage value
// (a JSON document is a Go string), so the row path needs no special case.
//
// The one such type built in is JSON: the canonical arrow.json extension
// over VARCHAR (utf8), returned by parse_json and usable as a UDF result.

// JSONType is the logical JSON type: arrow.json over utf8.
var JSONType arrow.DataType = func() arrow.DataType {
	t, err := extensions.NewJSONType(arrow.BinaryTypes.String)
	if err != nil {
		panic(err)
	}
	return t
}()

// StorageType is how a column of logical type t is laid out: t itself, or
// the storage of an extension type.
func StorageType(t arrow.DataType) arrow.DataType {
	if ext, ok := t.(arrow.ExtensionType); ok {
		return ext.StorageType()
	}
	return t
}

func isExtension(t arrow.DataType) bool { return t.ID() == arrow.EXTENSION }

// label wraps a finished storage column in the logical type t, taking over
// the caller's reference. A column already of type t (or t is a plain
// type) is returned as is.
func label(mem memory.Allocator, t arrow.DataType, a arrow.Array) (arrow.Array, error) {
	ext, ok := t.(arrow.ExtensionType)
	if !ok || arrow.TypeEqual(a.DataType(), t) {
		return a, nil
	}
	if a.DataType().ID() == arrow.NULL {
		n := a.Len()
		a.Release()
		// A NULL-typed input has no storage: build the storage of NULLs.
		st := array.MakeArrayOfNull(mem, ext.StorageType(), n)
		defer st.Release()
		return array.NewExtensionArrayWithStorage(ext, st), nil
	}
	if !arrow.TypeEqual(a.DataType(), ext.StorageType()) {
		got := a.DataType()
		a.Release()
		return nil, fmt.Errorf("cannot label a %s column as %s: its storage is %s", got, typeName(t), typeName(ext.StorageType()))
	}
	out := array.NewExtensionArrayWithStorage(ext, a)
	a.Release()
	return out, nil
}

// storageArray is a's storage column when a is an extension array (not
// retained: borrowed from a), else a.
func storageArray(a arrow.Array) arrow.Array {
	if e, ok := a.(array.ExtensionArray); ok {
		return e.Storage()
	}
	return a
}

// valueAt is the row-form value of arr[i]: exec.Value, with extension
// arrays read through their storage and durations (INTERVAL) as
// arrow.Duration.
func valueAt(arr arrow.Array, i int) any {
	switch a := arr.(type) {
	case array.ExtensionArray:
		return valueAt(a.Storage(), i)
	case *array.Duration:
		if a.IsNull(i) {
			return nil
		}
		return a.Value(i)
	}
	return exec.Value(arr, i)
}

// appendValue appends a row-form value: exec.AppendValue, plus extension
// builders (through their storage builder) and durations.
func appendValue(b array.Builder, v any) error {
	switch bb := b.(type) {
	case *array.ExtensionBuilder:
		return appendValue(bb.StorageBuilder(), v)
	case *array.DurationBuilder:
		if v == nil {
			bb.AppendNull()
			return nil
		}
		x, ok := v.(arrow.Duration)
		if !ok {
			return fmt.Errorf("value %v (%T) does not fit an INTERVAL column", v, v)
		}
		bb.Append(x)
		return nil
	}
	return exec.AppendValue(b, v)
}
