package sql

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration reads Flink's duration syntax for options and settings
// ('scan.watermark.idle-timeout', 'table.exec.state.ttl'): "5 s", "500 ms",
// "1 min", "2h", "30 seconds", or a bare number of milliseconds.
func ParseDuration(v string) (time.Duration, error) {
	v = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(v), " ", ""))
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n > math.MaxInt64/int64(time.Millisecond) || n < math.MinInt64/int64(time.Millisecond) {
			return 0, fmt.Errorf("%d ms is out of range", n)
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	for _, u := range []struct{ long, short string }{
		{"milliseconds", "ms"}, {"millisecond", "ms"}, {"seconds", "s"}, {"second", "s"}, {"sec", "s"},
		{"minutes", "m"}, {"minute", "m"}, {"min", "m"}, {"hours", "h"}, {"hour", "h"}, {"days", "d"}, {"day", "d"},
	} {
		if strings.HasSuffix(v, u.long) {
			v = strings.TrimSuffix(v, u.long) + u.short
			break
		}
	}
	if n, ok := strings.CutSuffix(v, "d"); ok {
		if days, err := strconv.ParseFloat(n, 64); err == nil {
			if days*float64(24*time.Hour) > math.MaxInt64 || days*float64(24*time.Hour) < math.MinInt64 {
				return 0, fmt.Errorf("%s days is out of range", n)
			}
			return time.Duration(days * float64(24*time.Hour)), nil
		}
	}
	return time.ParseDuration(v)
}
