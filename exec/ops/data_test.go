package ops

import (
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// sampleRows are n rows of SampleSchema (k BIGINT, s VARCHAR, v BIGINT,
// f DOUBLE) with repeated keys; with nulls, every column has NULLs at
// different strides.
func sampleRows(n int, nulls bool) []exec.Row {
	rows := make([]exec.Row, n)
	for i := range rows {
		// t advances 300ms a row from 2015-07-15 00:00:00 (the nexmark epoch).
		r := exec.Row{int64(i % 7), fmt.Sprintf("s%d", i%4), int64(i*13%50 - 10), float64(i) / 4, arrow.Timestamp(1436918400000 + int64(i)*300)}
		if nulls {
			if i%5 == 0 {
				r[0] = nil
			}
			if i%6 == 1 {
				r[1] = nil
			}
			if i%4 == 2 {
				r[2] = nil
			}
			if i%9 == 3 {
				r[3] = nil
			}
		}
		rows[i] = r
	}
	return rows
}

func sampleInput(n int) func(nulls bool) []input {
	return func(nulls bool) []input {
		return []input{{SampleSchema, sampleRows(n, nulls)}}
	}
}
