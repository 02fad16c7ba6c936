package explain

import "testing"

func TestProgress(t *testing.T) {
	for _, tc := range []struct {
		rows, rowsTotal, bytes, bytesTotal int64
		want                               string
	}{
		{1234, 10000, 1536, 10 << 20, "1,234 / 10,000 rows (12%), 1.5 KiB / 10.0 MiB read"},
		{5, 0, 100, 0, "5 rows, 100 B read"},
		{1234567, 1000000, 0, 0, "1,234,567 / 1,000,000 rows (100%) read"},
		{0, 0, 0, 0, "0 rows read"},
	} {
		if got := Progress(tc.rows, tc.rowsTotal, tc.bytes, tc.bytesTotal); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestGroupDigits(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 100000: "100,000"} {
		if got := GroupDigits(n); got != want {
			t.Errorf("GroupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}
