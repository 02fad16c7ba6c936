// Package wire is the Jupyter messaging protocol (version 5.3) as clink's
// kernel speaks it: the connection file, the five ZeroMQ sockets, HMAC
// signing and verification over the exact frames, and message framing. It
// knows nothing about SQL; the dispatcher gives it content to send.
package wire

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// ProtocolVersion is the messaging protocol version the kernel implements.
const ProtocolVersion = "5.3"

// delimiter separates the routing identities from the signed message.
const delimiter = "<IDS|MSG>"

// Header is a message header. Field order follows the specification.
type Header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// Message is one received or outgoing Jupyter message. The JSON parts of a
// received message are kept as the bytes that arrived, because the
// signature is over those bytes and the parent_header of a reply must echo
// the request's header exactly.
type Message struct {
	Identities [][]byte
	Header     Header
	// RawHeader is the header frame as received (or as serialised).
	RawHeader    json.RawMessage
	ParentHeader json.RawMessage
	Metadata     json.RawMessage
	Content      json.RawMessage
	Buffers      [][]byte
	// Received is when the kernel read the message off its socket; the
	// dispatcher uses it to abort requests queued behind a failed cell.
	Received time.Time
}

// Type is the message type from the header.
func (m *Message) Type() string { return m.Header.MsgType }

// DecodeContent unmarshals the content into v.
func (m *Message) DecodeContent(v any) error {
	if len(m.Content) == 0 {
		return nil
	}
	return json.Unmarshal(m.Content, v)
}

// FormatDate renders t as the protocol wants it: ISO 8601 in UTC with
// exactly six fractional digits and a Z (some clients choke on Go's
// nanosecond RFC 3339).
func FormatDate(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// NewID returns a random (version 4) UUID string for msg_id and session.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // cannot happen on Linux
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}
