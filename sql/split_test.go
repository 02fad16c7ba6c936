package sql

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	cases := []struct {
		script string
		want   []string
	}{
		{"SELECT 1; SELECT 2", []string{"SELECT 1", "SELECT 2"}},
		{"SELECT 1;\n\n  ;  -- nothing\n SELECT 2;", []string{"SELECT 1", "-- nothing\n SELECT 2"}},
		// A backslash is an ordinary character in '...': 'a\' is a string.
		{`SELECT 'a\'; SELECT 2`, []string{`SELECT 'a\'`, "SELECT 2"}},
		// In E'...' it escapes, so the ; is quoted.
		{`SELECT E'a\'; b'; SELECT 2`, []string{`SELECT E'a\'; b'`, "SELECT 2"}},
		// An E ending a word is no E'...': the string is plain.
		{`SELECT fooE'a\'; SELECT 2`, []string{`SELECT fooE'a\'`, "SELECT 2"}},
		{`SELECT 'it''s;'; SELECT "a;""b", ` + "`c;``d`; SELECT 3", []string{`SELECT 'it''s;'`, `SELECT "a;""b", ` + "`c;``d`", "SELECT 3"}},
		{"-- a;b\nSELECT 1; /* ; */ SELECT 2", []string{"-- a;b\nSELECT 1", "/* ; */ SELECT 2"}},
		{"EXECUTE STATEMENT SET BEGIN\n  INSERT INTO a SELECT 1;\n  INSERT INTO b SELECT CASE WHEN x THEN 1 END;\nEND;\nSELECT 1;",
			[]string{"EXECUTE STATEMENT SET BEGIN\n  INSERT INTO a SELECT 1;\n  INSERT INTO b SELECT CASE WHEN x THEN 1 END;\nEND", "SELECT 1"}},
		{"execute /* x; */ statement\nset begin insert into a select ';'; end", []string{"execute /* x; */ statement\nset begin insert into a select ';'; end"}},
		{"BEGIN STATEMENT SET; INSERT INTO a SELECT 1; END;", []string{"BEGIN STATEMENT SET", "INSERT INTO a SELECT 1", "END"}},
	}
	for _, c := range cases {
		var got []string
		for _, p := range Split(c.script) {
			got = append(got, p.Text)
			if c.script[p.Offset:p.Offset+len(p.Text)] != p.Text {
				t.Errorf("Split(%q): piece %q is not at offset %d", c.script, p.Text, p.Offset)
			}
			if want := 1 + strings.Count(c.script[:p.Offset], "\n"); p.Line != want {
				t.Errorf("Split(%q): piece %q line %d, want %d", c.script, p.Text, p.Line, want)
			}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Split(%q)\n got  %q\n want %q", c.script, got, c.want)
		}
	}
}

func TestComplete(t *testing.T) {
	cases := []struct {
		text string
		want bool
	}{
		{"", true},
		{"-- only a comment", true},
		{"SELECT 1", false},
		{"SELECT 1;", true},
		{"SELECT 1; -- done", true},
		{"SELECT 1; SELECT", false},
		{"SELECT 'a;", false},
		{`SELECT 'a\';`, true},
		{`SELECT E'a\';`, false},
		{`SELECT "a;`, false},
		{"SELECT 1 /* ;", false},
		{"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1;", false},
		{"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END", false},
		{"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END;", true},
	}
	for _, c := range cases {
		if got := Complete(c.text); got != c.want {
			t.Errorf("Complete(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func TestInLiteral(t *testing.T) {
	for text, want := range map[string]bool{
		"":                      false,
		"SELECT 1":              false,
		"SELECT 1 -- a comment": false, // the newline ends it
		"SELECT 'a":             true,
		"SELECT 'a''":           true,
		"SELECT 'a'":            false,
		"SELECT E'a\\'":         true,
		`SELECT "col`:           true,
		"SELECT 1 /* open":      true,
		"SELECT 1 /* shut */":   false,
		"SELECT `x":             true,
	} {
		if got := InLiteral(text); got != want {
			t.Errorf("InLiteral(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestTrailing(t *testing.T) {
	for _, c := range []struct {
		text  string
		want  Enclosure
		start int
	}{
		{"SELECT 1", InCode, 0},
		{"SELECT 'a', 'data/b", InString, 13},
		{"SELECT 'it''s", InString, 8},
		{"SELECT E'a\\'", InString, 9},
		{"SELECT 'a'", InCode, 0},
		{`SELECT "co`, InIdentifier, 8},
		{"SELECT 1 -- note", InComment, 11},
		{"SELECT 1 -- note\n", InCode, 0},
		{"SELECT /* x", InComment, 9},
	} {
		got, start := Trailing(c.text)
		if got != c.want || (got != InCode && start != c.start) {
			t.Errorf("Trailing(%q) = %v at %d, want %v at %d", c.text, got, start, c.want, c.start)
		}
	}
}

// TestSplitAgreesWithParse: every statement of the corpora is one piece
// for Split, so a script of them all splits back into them; the lexer and
// the splitter read quotes and comments alike.
func TestSplitAgreesWithParse(t *testing.T) {
	var stmts []string
	for _, c := range repoCorpus(t) {
		if _, err := Parse(c.text); err == nil {
			stmts = append(stmts, c.text)
		}
	}
	script := strings.Join(stmts, ";\n")
	pieces := Split(script)
	if len(pieces) != len(stmts) {
		t.Fatalf("Split: %d pieces, want %d", len(pieces), len(stmts))
	}
	for i, p := range pieces {
		if p.Text != strings.TrimSpace(stmts[i]) {
			t.Errorf("piece %d = %q, want %q", i, p.Text, stmts[i])
		}
	}
}
