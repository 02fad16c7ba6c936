package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"sync"
	"time"
)

// Errors a received message can be dropped for. They are logged, never
// answered: answering an unauthenticated peer would be an oracle.
var (
	ErrTruncated    = errors.New("truncated message")
	ErrNoDelimiter  = errors.New("no <IDS|MSG> delimiter")
	ErrUnsigned     = errors.New("unsigned message")
	ErrBadSignature = errors.New("bad signature")
	ErrReplayed     = errors.New("replayed message (signature seen before)")
	ErrBadHeader    = errors.New("malformed header")
)

// Signer signs outgoing messages and verifies incoming ones with the
// connection file's key (HMAC-SHA256). An empty key disables signing, as the
// protocol allows. It remembers the signatures it accepted, in a bounded
// set, to refuse replays. Safe for concurrent use.
type Signer struct {
	key []byte

	mu    sync.Mutex
	seen  map[string]struct{}
	order []string // ring of seen signatures, oldest at next
	next  int
}

// DefaultReplayWindow is how many accepted signatures are remembered.
const DefaultReplayWindow = 1 << 14

// NewSigner returns a signer for key, remembering up to window signatures
// (DefaultReplayWindow when window <= 0).
func NewSigner(key []byte, window int) *Signer {
	if window <= 0 {
		window = DefaultReplayWindow
	}
	return &Signer{key: key, seen: make(map[string]struct{}, window), order: make([]string, window)}
}

// Enabled reports whether messages are signed.
func (s *Signer) Enabled() bool { return len(s.key) > 0 }

func (s *Signer) mac() hash.Hash { return hmac.New(sha256.New, s.key) }

// Sign returns the hex signature of the four JSON parts ("" without a key).
func (s *Signer) Sign(parts ...[]byte) string {
	if !s.Enabled() {
		return ""
	}
	h := s.mac()
	for _, p := range parts {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// verify checks sig over the parts exactly as received and records it.
func (s *Signer) verify(sig []byte, parts ...[]byte) error {
	if !s.Enabled() {
		return nil
	}
	if len(sig) == 0 {
		return ErrUnsigned
	}
	got := make([]byte, hex.DecodedLen(len(sig)))
	if _, err := hex.Decode(got, sig); err != nil {
		return ErrBadSignature
	}
	h := s.mac()
	for _, p := range parts {
		h.Write(p)
	}
	if !hmac.Equal(got, h.Sum(nil)) {
		return ErrBadSignature
	}
	key := string(got)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.seen[key]; dup {
		return ErrReplayed
	}
	if old := s.order[s.next]; old != "" {
		delete(s.seen, old)
	}
	s.order[s.next] = key
	s.next = (s.next + 1) % len(s.order)
	s.seen[key] = struct{}{}
	return nil
}

// Decode parses the frames of one received message (identities first),
// verifies its signature and refuses replays. The JSON parts are kept as
// received.
func (s *Signer) Decode(frames [][]byte) (*Message, error) {
	d := -1
	for i, f := range frames {
		if string(f) == delimiter {
			d = i
			break
		}
	}
	if d < 0 {
		return nil, ErrNoDelimiter
	}
	rest := frames[d+1:]
	if len(rest) < 5 {
		return nil, fmt.Errorf("%w: %d frames after %s, want at least 5", ErrTruncated, len(rest), delimiter)
	}
	if err := s.verify(rest[0], rest[1], rest[2], rest[3], rest[4]); err != nil {
		return nil, err
	}
	m := &Message{
		Identities:   frames[:d],
		RawHeader:    json.RawMessage(rest[1]),
		ParentHeader: json.RawMessage(rest[2]),
		Metadata:     json.RawMessage(rest[3]),
		Content:      json.RawMessage(rest[4]),
		Buffers:      rest[5:],
		Received:     time.Now(),
	}
	if err := json.Unmarshal(rest[1], &m.Header); err != nil || m.Header.MsgType == "" {
		return nil, fmt.Errorf("%w: %q", ErrBadHeader, truncate(rest[1], 80))
	}
	return m, nil
}

// Encode serialises m (identities, delimiter, signature, the four JSON
// parts, buffers) into frames, signing the parts as they are sent.
func (s *Signer) Encode(m *Message) [][]byte {
	parent := nonEmpty(m.ParentHeader)
	meta := nonEmpty(m.Metadata)
	content := nonEmpty(m.Content)
	frames := make([][]byte, 0, len(m.Identities)+6+len(m.Buffers))
	frames = append(frames, m.Identities...)
	frames = append(frames, []byte(delimiter),
		[]byte(s.Sign(m.RawHeader, parent, meta, content)),
		m.RawHeader, parent, meta, content)
	return append(frames, m.Buffers...)
}

func nonEmpty(b []byte) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
