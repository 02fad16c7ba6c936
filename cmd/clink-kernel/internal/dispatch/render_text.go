package dispatch

import (
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/sqlvalue"
)

// renderText draws rows as an aligned plain-text table (numbers right
// aligned), with footer on the last line. Values are shown as the shell
// shows them (sqlvalue.Display): NULL bare, the string 'NULL' quoted.
func renderText(cols []column, rows [][]cellValue, footer string) string {
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = utf8.RuneCountInString(c.name)
	}
	cells := make([][]string, len(rows))
	for r, row := range rows {
		cells[r] = make([]string, len(row))
		for i, v := range row {
			s := oneLine(sqlvalue.Display(v.s, v.null))
			cells[r][i] = s
			if n := utf8.RuneCountInString(s); n > widths[i] {
				widths[i] = n
			}
		}
	}
	var sb strings.Builder
	line := func(vals []string, header bool) {
		for i, v := range vals {
			if i > 0 {
				sb.WriteString(" | ")
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(v))
			if !header && rightAligned(cols[i].typ) {
				sb.WriteString(pad + v)
			} else if i == len(vals)-1 {
				sb.WriteString(v) // no trailing blanks
			} else {
				sb.WriteString(v + pad)
			}
		}
		sb.WriteByte('\n')
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	line(names, true)
	for i, w := range widths {
		if i > 0 {
			sb.WriteString("-+-")
		}
		sb.WriteString(strings.Repeat("-", w))
	}
	sb.WriteByte('\n')
	for _, r := range cells {
		line(r, false)
	}
	sb.WriteString(footer)
	return sb.String()
}

// oneLine keeps a value on its table row.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}

func rightAligned(t arrow.DataType) bool {
	return isNumeric(t)
}

func isNumeric(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
		arrow.UINT64, arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.DECIMAL256:
		return true
	}
	return false
}

func isTemporal(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64:
		return true
	}
	return false
}
