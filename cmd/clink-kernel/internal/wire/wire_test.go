package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"testing"
	"time"
)

func sign(key string, parts ...string) string {
	h := hmac.New(sha256.New, []byte(key))
	for _, p := range parts {
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// frames builds a request as a client would, with the JSON parts exactly
// as given (odd spacing included: the signature must be over these bytes).
func frames(sig string, parts ...string) [][]byte {
	out := [][]byte{[]byte("client-id"), []byte("<IDS|MSG>"), []byte(sig)}
	for _, p := range parts {
		out = append(out, []byte(p))
	}
	return out
}

var parts = []string{
	`{"msg_id": "a1",  "session":"s", "username":"u", "date":"2024-01-01T00:00:00Z", "msg_type":"kernel_info_request", "version":"5.3"}`,
	`{}`, `{ }`, `{"x":  1}`,
}

func TestDecodeVerifiesExactBytes(t *testing.T) {
	s := NewSigner([]byte("secret"), 0)
	m, err := s.Decode(frames(sign("secret", parts...), parts...))
	if err != nil {
		t.Fatalf("valid message refused: %v", err)
	}
	if m.Type() != "kernel_info_request" || string(m.Content) != parts[3] || string(m.RawHeader) != parts[0] {
		t.Fatalf("decoded %+v", m)
	}
	if len(m.Identities) != 1 || string(m.Identities[0]) != "client-id" {
		t.Fatalf("identities %q", m.Identities)
	}
	// Re-serialising the content would change the bytes ({"x":1}) and so
	// the signature: a verifier that did so would refuse this message.
	other := append([]string(nil), parts...)
	other[3] = `{"x":1}`
	if _, err := s.Decode(frames(sign("secret", parts...), other...)); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("content changed after signing: got %v, want bad signature", err)
	}
}

func TestDecodeRefusals(t *testing.T) {
	good := sign("secret", parts...)
	cases := []struct {
		name   string
		frames [][]byte
		want   error
	}{
		{"unsigned", frames("", parts...), ErrUnsigned},
		{"wrong key", frames(sign("other", parts...), parts...), ErrBadSignature},
		{"not hex", frames("zz"+good[2:], parts...), ErrBadSignature},
		{"truncated", frames(good, parts[:3]...), ErrTruncated},
		{"no delimiter", [][]byte{[]byte("id"), []byte(good)}, ErrNoDelimiter},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewSigner([]byte("secret"), 0)
			if _, err := s.Decode(c.frames); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

func TestReplayRefusedAndWindowBounded(t *testing.T) {
	s := NewSigner([]byte("k"), 2)
	msg := func(id string) [][]byte {
		p := []string{`{"msg_id":"` + id + `","msg_type":"x"}`, `{}`, `{}`, `{}`}
		return frames(sign("k", p...), p...)
	}
	if _, err := s.Decode(msg("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decode(msg("1")); !errors.Is(err, ErrReplayed) {
		t.Fatalf("replay: got %v", err)
	}
	// The set is bounded: after two newer messages the oldest is forgotten.
	for _, id := range []string{"2", "3"} {
		if _, err := s.Decode(msg(id)); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.seen) != 2 {
		t.Fatalf("seen set holds %d, want 2", len(s.seen))
	}
	if _, err := s.Decode(msg("3")); !errors.Is(err, ErrReplayed) {
		t.Fatalf("recent replay: got %v", err)
	}
}

func TestNoKeyAcceptsUnsigned(t *testing.T) {
	s := NewSigner(nil, 0)
	if _, err := s.Decode(frames("", parts...)); err != nil {
		t.Fatal(err)
	}
	if got := s.Sign([]byte("x")); got != "" {
		t.Fatalf("signature without key: %q", got)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	s := NewSigner([]byte("secret"), 0)
	srv := &Server{signer: s, session: NewID()}
	req, err := s.Decode(frames(sign("secret", parts...), parts...))
	if err != nil {
		t.Fatal(err)
	}
	m, err := srv.NewMessage(req, "kernel_info_reply", map[string]string{"status": "ok"})
	if err != nil {
		t.Fatal(err)
	}
	fr := s.Encode(m)
	if string(fr[0]) != "client-id" || string(fr[1]) != "<IDS|MSG>" {
		t.Fatalf("routing frames %q", fr[:2])
	}
	if string(fr[4]) != parts[0] {
		t.Fatalf("parent header not echoed verbatim: %s", fr[4])
	}
	back, err := NewSigner([]byte("secret"), 0).Decode(fr)
	if err != nil {
		t.Fatalf("own message does not verify: %v", err)
	}
	if back.Header.MsgType != "kernel_info_reply" || back.Header.Version != "5.3" || back.Header.Session != srv.session {
		t.Fatalf("header %+v", back.Header)
	}
}

var dateRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

func TestFormatDate(t *testing.T) {
	loc := time.FixedZone("X", 5*3600)
	d := time.Date(2024, 3, 4, 10, 11, 12, 123456789, loc)
	got := FormatDate(d)
	if got != "2024-03-04T05:11:12.123456Z" {
		t.Fatalf("got %s", got)
	}
	if !dateRE.MatchString(FormatDate(time.Now())) {
		t.Fatalf("now: %s", FormatDate(time.Now()))
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewID(t *testing.T) {
	a, b := NewID(), NewID()
	if !uuidRE.MatchString(a) || a == b {
		t.Fatalf("ids %s %s", a, b)
	}
}
