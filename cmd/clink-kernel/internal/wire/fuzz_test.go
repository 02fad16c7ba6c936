package wire

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"log"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

// The fuzz targets below run their seeds under `go test`; for a bounded
// search run, e.g.:
//
//	go test ./cmd/clink-kernel/internal/wire/ -run '^$' -fuzz FuzzFrameGuard -fuzztime 60s
//	go test ./cmd/clink-kernel/internal/wire/ -run '^$' -fuzz FuzzDecode -fuzztime 60s
//	go test ./cmd/clink-kernel/internal/wire/ -run '^$' -fuzz FuzzSockets -fuzztime 120s

const fuzzKey = "fuzz-key"

// A request's header as jupyter_client 7 writes it (key order, spacing
// and date format included).
const realHeader = `{"msg_id": "8f1f3b9e-5b0e4c3a9d2e1f00a1b2c3d4_1234_1", "msg_type": "execute_request", ` +
	`"username": "user", "session": "8f1f3b9e-5b0e4c3a9d2e1f00a1b2c3d4", "date": "2026-12-02T06:00:00.123456Z", "version": "5.3"}`

// realRequest is the frames of a signed Jupyter request, identities first,
// as a DEALER client's ROUTER peer receives them.
func realRequest(key, header, content string) [][]byte {
	parts := [][]byte{[]byte(header), []byte("{}"), []byte("{}"), []byte(content)}
	h := hmac.New(sha256.New, []byte(key))
	for _, p := range parts {
		h.Write(p)
	}
	out := [][]byte{[]byte("\x00k\x8b\x45g"), []byte(delimiter), []byte(hex.EncodeToString(h.Sum(nil)))}
	return append(out, parts...)
}

// zmtpMessage encodes frames as one ZMTP message (MORE on all but the
// last; LONG when a frame needs it).
func zmtpMessage(frames [][]byte) []byte {
	var b []byte
	for i, f := range frames {
		flags := byte(0)
		if i < len(frames)-1 {
			flags |= flagMore
		}
		if len(f) > 255 {
			b = append(b, flags|flagLong)
			b = binary.BigEndian.AppendUint64(b, uint64(len(f)))
		} else {
			b = append(b, flags, byte(len(f)))
		}
		b = append(b, f...)
	}
	return b
}

// realStreams are whole client byte streams: greeting, READY, messages.
func realStreams() [][]byte {
	hello := append(zmtpGreetingNull(), readyDealer()...)
	stream := func(msgs ...[][]byte) []byte {
		s := append([]byte(nil), hello...)
		for _, m := range msgs {
			s = append(s, zmtpMessage(m)...)
		}
		return s
	}
	exec := realRequest(fuzzKey, realHeader, `{"code": "SELECT 1;", "silent": false, "store_history": true, `+
		`"user_expressions": {}, "allow_stdin": true, "stop_on_error": true}`)
	info := realRequest(fuzzKey, `{"msg_id": "a", "msg_type": "kernel_info_request", "username": "u", "session": "s", `+
		`"date": "2026-12-02T06:00:00.000000Z", "version": "5.3"}`, `{}`)
	big := realRequest(fuzzKey, realHeader, `{"code": "`+string(bytes.Repeat([]byte("x"), 400))+`"}`)
	return [][]byte{
		stream(exec),
		stream(info, exec),
		stream(big),
		stream([][]byte{[]byte("ping")}),
		hello,
		append(append([]byte(nil), hello...), longFrame(0, 1<<62)...),
		append(append([]byte(nil), hello...), longFrame(flagMore, 1<<20)...),
		zmtpGreetingNull()[:30],
	}
}

// refParse walks a whole ZMTP stream the simple way (not incrementally)
// and reports the offset just past the first header that takes a message
// over limit, or -1 when none does within data.
func refParse(data []byte, limit uint64) int {
	if len(data) < zmtpGreeting {
		return -1
	}
	i := zmtpGreeting
	var message uint64
	for i < len(data) {
		flags := data[i]
		i++
		var size uint64
		if flags&flagLong != 0 {
			if i+8 > len(data) {
				return -1
			}
			size = binary.BigEndian.Uint64(data[i : i+8])
			i += 8
		} else {
			if i >= len(data) {
				return -1
			}
			size = uint64(data[i])
			i++
		}
		if size > limit || message+size > limit {
			return i
		}
		if flags&flagMore != 0 && flags&flagCommand == 0 {
			message += size
		} else {
			message = 0
		}
		if size > uint64(len(data)-i) {
			return -1
		}
		i += int(size)
	}
	return -1
}

// FuzzFrameGuard: whatever bytes arrive, in whatever pieces, the guard
// neither panics nor lets a header through that takes a message over its
// limit, and refuses exactly where a plain whole-stream parse says.
func FuzzFrameGuard(f *testing.F) {
	for _, s := range realStreams() {
		f.Add(s, uint16(1000), uint8(7))
	}
	f.Add(append(zmtpGreetingNull(), flagMore, 200), uint16(300), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, limit uint16, piece uint8) {
		want := refParse(data, uint64(limit))
		g := newFrameGuard(nil, uint64(limit))
		step := int(piece%64) + 1
		refused := -1
		for i := 0; i < len(data); i += step {
			end := min(i+step, len(data))
			if err := g.scan(data[i:end]); err != nil {
				var hs *HandshakeError
				if errors.As(err, &hs) {
					// A READY zmq4 could not take (FuzzReady checks
					// those); only a size refusal due before it counts.
					if want >= 0 && want < i {
						t.Fatalf("a header ending at %d takes a message over %d bytes; refused only at %d for %v", want, limit, end, err)
					}
					return
				}
				var tl *FrameTooLargeError
				if !errors.As(err, &tl) || tl.Size <= uint64(limit) {
					t.Fatalf("refusal %v under a limit of %d", err, limit)
				}
				refused = end
				break
			}
		}
		switch {
		case want < 0 && refused >= 0:
			t.Fatalf("refused a stream the reference accepts (at piece ending %d)", refused)
		case want >= 0 && refused < 0:
			t.Fatalf("passed a header ending at %d that takes a message over %d bytes", want, limit)
		case want >= 0 && (want > refused || refused-want >= step):
			// The refusal comes in the piece holding the header's end.
			t.Fatalf("refused at the piece ending %d; the header ends at %d", refused, want)
		}
	})
}

// zmq4Takes reports whether go-zeromq/zmq4 takes a peer's READY command
// body (name length, name, data) without panicking, doing what its NULL
// handshake does with it: read the metadata, then check the peer's socket
// type against a ROUTER's.
func zmq4Takes(cmd []byte) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if len(cmd) == 0 || int(cmd[0]) > len(cmd)-1 || string(cmd[1:1+int(cmd[0])]) != "READY" {
		return true // not READY: zmq4 returns ErrBadCmd
	}
	md := zmq4.Metadata{}
	if err := md.UnmarshalZMTP(cmd[1+int(cmd[0]):]); err != nil {
		return true // an error, which drops the connection
	}
	zmq4.SocketType(md["Socket-Type"]).IsCompatible(zmq4.Router)
	return true
}

// FuzzReady: any first command a peer sends that would panic zmq4's
// handshake is refused by the guard, which itself never panics.
func FuzzReady(f *testing.F) {
	f.Add(readyDealer()[2:])
	f.Add([]byte("\x05READY\x0bSocket-Type\x00\x00\x00\x05EALER"))
	f.Add([]byte("\x05READY\x0bsocket-type\x00\x00\x00\x03REQ"))
	f.Add([]byte("\x05READY"))
	f.Add([]byte("\x05READY\x0bSocket-Type\x00\x00"))
	f.Add([]byte("\x05READY\x0bSocket-Type\xff\xff\xff\xffDEALER"))
	f.Add([]byte("\x05ERROR\x03bad"))
	f.Fuzz(func(t *testing.T, cmd []byte) {
		err := checkReady(cmd)
		if !zmq4Takes(cmd) && err == nil {
			t.Fatalf("zmq4 panics on READY %q; the guard let it through", cmd)
		}
		// Through the guard as a stream: greeting, the command, framed.
		g := newFrameGuard(nil, MaxMessageBytes)
		stream := append(zmtpGreetingNull(), zmtpMessage([][]byte{cmd})...)
		stream[zmtpGreeting] |= flagCommand
		if gerr := g.scan(stream); (gerr == nil) != (err == nil) && len(cmd) <= maxHandshake {
			t.Fatalf("checkReady %v, the guard %v", err, gerr)
		}
	})
}

// FuzzDecode: arbitrary frames never panic the decoder; a message it
// accepts carries a valid HMAC over the exact parts (checked here
// independently) and a header with a type, and is refused when replayed.
func FuzzDecode(f *testing.F) {
	exec := realRequest(fuzzKey, realHeader, `{"code": "SELECT 1;"}`)
	f.Add(exec[3], exec[4], exec[5], exec[6], []byte(nil), uint8(0))
	f.Add(exec[3], exec[4], exec[5], exec[6], []byte("buffer"), uint8(0))
	f.Add(exec[3], exec[4], exec[5], exec[6], []byte("zz"), uint8(2))
	f.Add([]byte(`{"msg_type": ""}`), []byte("{}"), []byte("{}"), []byte("{}"), []byte(nil), uint8(0))
	f.Add([]byte("not json"), []byte("{}"), []byte("{}"), []byte("{}"), []byte(nil), uint8(1))
	f.Add(bytes.Join(exec, []byte{0}), []byte(nil), []byte(nil), []byte(nil), []byte(nil), uint8(3))
	f.Fuzz(func(t *testing.T, header, parent, meta, content, extra []byte, mode uint8) {
		var frames [][]byte
		switch mode % 4 {
		case 0: // signed with the key
			frames = realRequestParts(fuzzKey, header, parent, meta, content)
			if len(extra) > 0 {
				frames = append(frames, extra)
			}
		case 1: // unsigned
			frames = append([][]byte{[]byte("id"), []byte(delimiter), nil}, header, parent, meta, content)
		case 2: // a signature of the fuzzer's choosing
			frames = append([][]byte{[]byte("id"), []byte(delimiter), extra}, header, parent, meta, content)
		case 3: // any frames at all: header split at NUL bytes
			frames = bytes.Split(header, []byte{0})
		}
		s := NewSigner([]byte(fuzzKey), 4)
		m, err := s.Decode(frames)
		if err != nil {
			return
		}
		d := 0
		for string(frames[d]) != delimiter {
			d++
		}
		rest := frames[d+1:]
		h := hmac.New(sha256.New, []byte(fuzzKey))
		for _, p := range rest[1:5] {
			h.Write(p)
		}
		sig, herr := hex.DecodeString(string(rest[0]))
		if herr != nil || !hmac.Equal(sig, h.Sum(nil)) {
			t.Fatalf("accepted a message whose signature %q does not verify", rest[0])
		}
		if m.Header.MsgType == "" || !bytes.Equal(m.RawHeader, rest[1]) || !bytes.Equal(m.Content, rest[4]) {
			t.Fatalf("accepted %+v", m)
		}
		if _, err := s.Decode(frames); !errors.Is(err, ErrReplayed) {
			t.Fatalf("replay: %v", err)
		}
	})
}

func realRequestParts(key string, parts ...[]byte) [][]byte {
	h := hmac.New(sha256.New, []byte(key))
	for _, p := range parts {
		h.Write(p)
	}
	return append([][]byte{[]byte("id"), []byte(delimiter), []byte(hex.EncodeToString(h.Sum(nil)))}, parts...)
}

// fuzzServer is one live server per fuzzing process, its shell and
// control sockets read (and decoded) as the kernel reads them.
var fuzzServer = sync.OnceValues(func() (ConnectionInfo, error) {
	var ports []int
	var ls []net.Listener
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return ConnectionInfo{}, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	ci := ConnectionInfo{Transport: "tcp", IP: "127.0.0.1", Key: fuzzKey, ShellPort: ports[0], ControlPort: ports[1],
		StdinPort: ports[2], IOPubPort: ports[3], HBPort: ports[4]}
	ctx := context.Background() // lives as long as the fuzzing process
	srv, err := Listen(ctx, ci, log.New(io.Discard, "", 0))
	if err != nil {
		return ci, err
	}
	go srv.Heartbeat(ctx)
	for _, ch := range []Channel{Shell, Control, Stdin} {
		go srv.Receive(ctx, ch, func(m *Message) { _ = m.DecodeContent(new(map[string]any)) })
	}
	return ci, nil
})

// FuzzSockets sends arbitrary bytes to the live kernel sockets (shell,
// control, stdin, heartbeat), with or without a valid ZMTP handshake
// first: the process survives, allocates no more than the frame limit
// for it, and the heartbeat still answers afterwards.
func FuzzSockets(f *testing.F) {
	for i, s := range realStreams() {
		f.Add(s[min(len(s), zmtpGreeting+len(readyDealer())):], uint8(i), true)
		f.Add(s, uint8(i), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, port uint8, handshake bool) {
		ci, err := fuzzServer()
		if err != nil {
			t.Fatal(err)
		}
		target := []int{ci.ShellPort, ci.ControlPort, ci.StdinPort, ci.HBPort}[int(port)%4]
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)

		c, err := net.Dial("tcp", net.JoinHostPort(ci.IP, itoa(target)))
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		if handshake {
			out = append(zmtpGreetingNull(), readyDealer()...)
		}
		out = append(out, data...)
		_ = c.SetDeadline(time.Now().Add(300 * time.Millisecond))
		_, _ = c.Write(out)
		// End our side and give the kernel the time to read it all: it
		// drops the connection at a bad stream's end; one stopped inside
		// a valid message it keeps, and the read deadline ends the wait.
		_ = c.(*net.TCPConn).CloseWrite()
		_, _ = io.Copy(io.Discard, c)
		c.Close()

		runtime.ReadMemStats(&after)
		// One peer's claims are capped at MaxMessageBytes per message;
		// its whole stream, well within that, cannot cost more than a
		// message's worth plus the library's buffers.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > MaxMessageBytes+8<<20 {
			t.Fatalf("%d bytes sent; the kernel allocated %d", len(out), grew)
		}
		ping(t, ci)
	})
}

// ping fails t unless the kernel's heartbeat echoes a ping.
func ping(t *testing.T, ci ConnectionInfo) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := zmq4.NewReq(ctx, zmq4.WithTimeout(5*time.Second))
	defer req.Close()
	if err := req.Dial("tcp://" + net.JoinHostPort(ci.IP, itoa(ci.HBPort))); err != nil {
		t.Fatalf("heartbeat dial: %v", err)
	}
	if err := req.Send(zmq4.NewMsgString("ping")); err != nil {
		t.Fatalf("heartbeat send: %v", err)
	}
	m, err := req.Recv()
	if err != nil || len(m.Frames) != 1 || string(m.Frames[0]) != "ping" {
		t.Fatalf("heartbeat: %v %v", m, err)
	}
}
