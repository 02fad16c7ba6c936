package engine

import (
	"context"
	"strings"
	"testing"
)

// Issue 19's repro: a statement whose text changes length when lower-cased
// ('Ⱥ' is two bytes, 'ⱥ' three) once crashed the error path with a slice
// out of range. The error now points at the offending token, counted in
// characters of the original text.
func TestErrorPositionOnTextThatChangesLengthWhenLowerCased(t *testing.T) {
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	for _, c := range []struct{ q, want string }{
		{"SELECT 'ȺȺȺȺȺȺȺȺȺȺȺȺ' AS a FROM zz", "line 1, column 33: table or view 'zz' not found"},
		{"SELECT 'ȺȺȺȺȺȺȺȺȺȺȺȺ' AS a, İİİ FROM (VALUES (1)) t(x)", "line 1, column 29: column 'İİİ' not found"},
		{"SELECT 'ȺȺȺȺȺȺȺȺȺȺȺȺ' AS a FROM zz WHERE", "line 1, column 41: unexpected end of statement"},
	} {
		_, err := s.Execute(context.Background(), c.q, nil, ExecOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "runtime error") {
			t.Errorf("%q: %v, want %q...", c.q, err, c.want)
		}
	}
}
