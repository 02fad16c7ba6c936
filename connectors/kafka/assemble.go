package kafka

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/clink-sql/clink/connectors/jsonfmt"
	"github.com/clink-sql/clink/exec"
)

// assemble puts a decoded batch's columns and the requested metadata
// columns together in output order. recs are the batch's records; res.Kept
// says which of them survived (bad records skipped).
func (s *Source) assemble(res jsonfmt.Result, recs []*kgo.Record) (*exec.Batch, error) {
	if res.N == 0 {
		if res.Rec != nil {
			res.Rec.Release()
		}
		return nil, nil
	}
	kept := func(i int) *kgo.Record {
		if res.Kept == nil {
			return recs[i]
		}
		return recs[res.Kept[i]]
	}
	if res.Rec == nil {
		rows := res.Rows
		if len(s.phys.Fields()) != len(s.cols) {
			rows = make([]exec.Row, len(res.Rows))
			for i, pr := range res.Rows {
				r := make(exec.Row, len(s.cols))
				k := 0
				for c, col := range s.cols {
					if key, ok := s.t.meta[col]; ok {
						r[c] = metaValue(key, s.schema.Field(c).Type, kept(i))
					} else {
						r[c] = pr[k]
						k++
					}
				}
				rows[i] = r
			}
		}
		return exec.NewRowBatch(s.schema, rows), nil
	}
	if len(s.phys.Fields()) == len(s.cols) {
		return exec.NewColumnarBatch(res.Rec), nil
	}
	defer res.Rec.Release()
	cols := make([]arrow.Array, len(s.cols))
	k := 0
	for c, col := range s.cols {
		key, ok := s.t.meta[col]
		if !ok {
			cols[c] = res.Rec.Column(k)
			cols[c].Retain()
			k++
			continue
		}
		b := array.NewBuilder(s.t.mem, s.schema.Field(c).Type)
		b.Reserve(res.N)
		for i := 0; i < res.N; i++ {
			if err := exec.AppendValue(b, metaValue(key, s.schema.Field(c).Type, kept(i))); err != nil {
				b.Release()
				for _, a := range cols[:c] {
					a.Release()
				}
				return nil, fmt.Errorf("kafka: METADATA column '%s': %w", s.schema.Field(c).Name, err)
			}
		}
		cols[c] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecordBatch(s.schema, cols, int64(res.N))
	for _, a := range cols {
		a.Release()
	}
	return exec.NewColumnarBatch(rec), nil
}

// metaValue is a record's metadata value in row form for a column of typ.
func metaValue(key string, typ arrow.DataType, r *kgo.Record) any {
	switch key {
	case "partition":
		if typ.ID() == arrow.INT64 {
			return int64(r.Partition)
		}
		return r.Partition
	case "offset":
		return r.Offset
	case "topic":
		return r.Topic
	case "timestamp":
		ms := r.Timestamp.UnixMilli()
		switch typ.(*arrow.TimestampType).Unit {
		case arrow.Second:
			return arrow.Timestamp(ms / 1000)
		case arrow.Microsecond:
			return arrow.Timestamp(ms * 1000)
		case arrow.Nanosecond:
			return arrow.Timestamp(ms * 1000000)
		}
		return arrow.Timestamp(ms)
	case "key":
		if r.Key == nil {
			return nil
		}
		if typ.ID() == arrow.STRING {
			return string(r.Key)
		}
		return append([]byte(nil), r.Key...)
	}
	return nil
}
