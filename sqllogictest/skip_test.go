package sqllogictest

import (
	"strings"
	"testing"
)

func TestParseSkipList(t *testing.T) {
	src := `# known failures
select1.test:120 correlated subquery
evidence/in1.test:*	IN with an empty list

   select2.test:7   trailing   spaces kept inside the reason  
`
	s, err := ParseSkipList("skips.txt", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []SkipEntry{
		{File: "select1.test", Line: 120, Reason: "correlated subquery", Source: "skips.txt:2"},
		{File: "evidence/in1.test", Line: 0, Reason: "IN with an empty list", Source: "skips.txt:3"},
		{File: "select2.test", Line: 7, Reason: "trailing   spaces kept inside the reason", Source: "skips.txt:5"},
	}
	if s.Len() != len(want) {
		t.Fatalf("%d entries, want %d", s.Len(), len(want))
	}
	for i, w := range want {
		if *s.entries[i] != w {
			t.Errorf("entry %d: %+v, want %+v", i, *s.entries[i], w)
		}
	}

	for _, bad := range []struct{ src, msg string }{
		{"select1.test:12\n", "has no reason"},
		{"select1.test:x why\n", "not a line number"},
		{"select1.test:0 why\n", "not a line number"},
		{"select1.test why\n", "want 'file:line reason'"},
		{":12 why\n", "want 'file:line reason'"},
	} {
		_, err := ParseSkipList("s.txt", strings.NewReader(bad.src))
		if err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%q: error %v, want one containing %q", bad.src, err, bad.msg)
		}
	}
}

func TestSkipListMatchesTrailingPath(t *testing.T) {
	s, err := ParseSkipList("s", strings.NewReader("select1.test:1 a\nevidence/in1.test:2 b\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]int{
		"select1.test":                             1,
		"/work/shared/sqllogictest/select1.test":   1,
		"../shared/sqllogictest/evidence/in1.test": 1,
		"evidence/in1.test":                        1,
		"xselect1.test":                            0,
		"in1.test":                                 0, // the entry names a longer path
		"other/select1.test.bak":                   0,
	}
	for path, n := range cases {
		if got := len(s.forFile(path)); got != n {
			t.Errorf("%s: %d entries, want %d", path, got, n)
		}
	}
	var none *SkipList
	if none.forFile("select1.test") != nil || none.Len() != 0 {
		t.Error("a nil skip list skips something")
	}
}
