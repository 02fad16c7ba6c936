package explain

import "fmt"

// Progress is a running query's scan progress (exec.Progress) as a person
// reads it, e.g. "1,234 / 10,000 rows (12%), 1.2 MiB / 9.8 MiB read". The
// shell's progress line and the notebook's progress display both print it.
// Totals are zero when the scans do not know them; bytes are left out when
// the sources count rows only.
func Progress(rows, rowsTotal, bytes, bytesTotal int64) string {
	s := GroupDigits(rows)
	if rowsTotal > 0 {
		s += " / " + GroupDigits(rowsTotal) + " rows"
		s += fmt.Sprintf(" (%d%%)", ProgressPercent(rows, rowsTotal))
	} else {
		s += " rows"
	}
	if bytes > 0 || bytesTotal > 0 {
		s += ", " + Bytes(bytes)
		if bytesTotal > 0 {
			s += " / " + Bytes(bytesTotal)
		}
	}
	return s + " read"
}

// ProgressPercent is rows of total in percent, at most 100 (a scan can
// read more than its estimate).
func ProgressPercent(rows, total int64) int64 {
	if total <= 0 {
		return 0
	}
	return min(100, rows*100/total)
}

// GroupDigits prints n with thousands separators: 1,234,567.
func GroupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
