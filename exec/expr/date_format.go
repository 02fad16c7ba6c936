package expr

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// compileDateFormat reads a Java SimpleDateFormat pattern (what Flink's
// DATE_FORMAT takes): a run of one letter is a field, its length the
// width; text in single quotes is literal (” is a quote); any other
// character is literal. Fields:
//
//	y   year (yy: two digits; otherwise padded to the width)
//	M   month (M, MM: number; MMM: Jan; MMMM: January)
//	d   day of month        D  day of year        E  day name (Mon; EEEE: Monday)
//	H   hour 0-23           h  hour 1-12          a  AM/PM
//	m   minute              s  second             S  millisecond (padded)
//
// Any other letter is an error (Java would accept a few more: G, w, W, F,
// k, K, z, Z, X, u; they have no zone-less meaning here or are rare).
func compileDateFormat(pat string) ([]dfItem, error) {
	var items []dfItem
	for i := 0; i < len(pat); {
		c := pat[i]
		switch {
		case c == '\'':
			j := i + 1
			var lit []byte
			for {
				if j >= len(pat) {
					return nil, fmt.Errorf("date_format: unterminated quote in pattern %s", sqlLiteral(pat, tString))
				}
				if pat[j] == '\'' {
					if j+1 < len(pat) && pat[j+1] == '\'' {
						lit = append(lit, '\'')
						j += 2
						continue
					}
					break
				}
				lit = append(lit, pat[j])
				j++
			}
			if j == i+1 {
				lit = []byte{'\''} // '' outside quotes is a quote
			}
			items = append(items, dfItem{lit: string(lit)})
			i = j + 1
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			j := i
			for j < len(pat) && pat[j] == c {
				j++
			}
			if !stringsContainsByte("yMdDEHhamsS", c) {
				return nil, fmt.Errorf("date_format: unsupported pattern letter '%c' in %s (supported: y M d D E H h a m s S)", c, sqlLiteral(pat, tString))
			}
			items = append(items, dfItem{field: c, width: j - i})
			i = j
		default:
			items = append(items, dfItem{lit: string(c)})
			i++
		}
	}
	return items, nil
}

func stringsContainsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

type dfItem struct {
	lit   string
	field byte
	width int
}

var (
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	dayNames   = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

func appendPadded(dst []byte, v int64, width int) []byte {
	s := strconv.FormatInt(v, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// appendDateFormat formats one timestamp (days since the epoch, nanoseconds
// into the day).
func appendDateFormat(dst []byte, items []dfItem, days, nanos int64) []byte {
	y, m, d := civilFromDays(days)
	for _, it := range items {
		if it.field == 0 {
			dst = append(dst, it.lit...)
			continue
		}
		switch it.field {
		case 'y':
			if it.width == 2 {
				dst = appendPadded(dst, ((y%100)+100)%100, 2)
			} else {
				dst = appendPadded(dst, y, it.width)
			}
		case 'M':
			switch {
			case it.width >= 4:
				dst = append(dst, monthNames[m-1]...)
			case it.width == 3:
				dst = append(dst, monthNames[m-1][:3]...)
			default:
				dst = appendPadded(dst, int64(m), it.width)
			}
		case 'd':
			dst = appendPadded(dst, int64(d), it.width)
		case 'D':
			dst = appendPadded(dst, days-daysFromCivil(y, 1, 1)+1, it.width)
		case 'E':
			name := dayNames[((days+4)%7+7)%7]
			if it.width < 4 {
				name = name[:3]
			}
			dst = append(dst, name...)
		case 'H':
			dst = appendPadded(dst, nanos/3600e9, it.width)
		case 'h':
			h := nanos / 3600e9 % 12
			if h == 0 {
				h = 12
			}
			dst = appendPadded(dst, h, it.width)
		case 'a':
			if nanos/3600e9 < 12 {
				dst = append(dst, "AM"...)
			} else {
				dst = append(dst, "PM"...)
			}
		case 'm':
			dst = appendPadded(dst, nanos/60e9%60, it.width)
		case 's':
			dst = appendPadded(dst, nanos/1e9%60, it.width)
		case 'S':
			dst = appendPadded(dst, nanos/1e6%1000, it.width)
		}
	}
	return dst
}

// dfCache compiles non-constant patterns per distinct value (shared by
// parallel subtasks, hence the lock).
type dfCache struct {
	mu sync.Mutex
	m  map[string][]dfItem
}

func (c *dfCache) get(pat string) ([]dfItem, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.m[pat]; ok {
		return it, nil
	}
	it, err := compileDateFormat(pat)
	if err != nil {
		return nil, err
	}
	if len(c.m) >= 256 {
		clear(c.m)
	}
	c.m[pat] = it
	return it, nil
}

func buildDateFormat(name string, args []Expr, t arrow.DataType) (Expr, error) {
	var fixedItems []dfItem
	if l, ok := args[1].(*Literal); ok && l.v != nil {
		var err error
		if fixedItems, err = compileDateFormat(l.v.(string)); err != nil {
			return nil, err
		}
	}
	if isNull(args[0].Type()) {
		return Lit(nil, t), nil
	}
	u := args[0].Type().(*arrow.TimestampType).Unit
	pf, err := Coerce(args[1], tString)
	if err != nil {
		return nil, err
	}
	cache := &dfCache{m: map[string][]dfItem{}}
	row, col := kernel2(func(v arrow.Timestamp, pat string) (string, bool, error) {
		items := fixedItems
		if items == nil {
			var err error
			if items, err = cache.get(pat); err != nil {
				return "", false, err
			}
		}
		days, nanos := civil(int64(v), u)
		// One small allocation per value: the kernel returns a string.
		return string(appendDateFormat(make([]byte, 0, 32), items, days, nanos)), true, nil
	})
	return newCall(name, []Expr{args[0], pf}, t, row, col)
}
