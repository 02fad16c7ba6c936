package wire

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/transport"
)

// MaxMessageBytes bounds one ZeroMQ message (all its frames) a peer may
// send the kernel. A Jupyter request is a few kilobytes; 64 MiB leaves
// room for large comm buffers.
const MaxMessageBytes = 64 << 20

// go-zeromq/zmq4 (v0.17.0, conn.go Conn.read) allocates each frame's body
// with make([]byte, size) straight from the size the peer's frame header
// claims: a claim of 2^62 bytes panics in the library's reader goroutine,
// which no recover of ours can reach, and a claim of 4 GB reserves 4 GB
// before a byte of it arrives. The kernel's sockets therefore listen on
// transports whose connections read the ZMTP framing as it passes and cut
// the connection at a header that claims more than MaxMessageBytes, before
// the library sees that header.
const (
	guardedTCP = "clink-guarded-tcp"
	guardedIPC = "clink-guarded-ipc"
)

var registerGuard = sync.OnceValue(func() error {
	if err := zmq4.RegisterTransport(guardedTCP, guardedTransport{transport.New("tcp"), MaxMessageBytes}); err != nil {
		return err
	}
	return zmq4.RegisterTransport(guardedIPC, guardedTransport{transport.New("unix"), MaxMessageBytes})
})

// guardedTransport is a zmq4 transport whose accepted and dialled
// connections refuse oversized frames.
type guardedTransport struct {
	transport.Transport
	limit uint64
}

func (g guardedTransport) Dial(ctx context.Context, d transport.Dialer, addr string) (net.Conn, error) {
	c, err := g.Transport.Dial(ctx, d, addr)
	if err != nil {
		return nil, err
	}
	return newFrameGuard(c, g.limit), nil
}

func (g guardedTransport) Listen(ctx context.Context, addr string) (net.Listener, error) {
	l, err := g.Transport.Listen(ctx, addr)
	if err != nil {
		return nil, err
	}
	return guardedListener{l, g.limit}, nil
}

type guardedListener struct {
	net.Listener
	limit uint64
}

func (l guardedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newFrameGuard(c, l.limit), nil
}

// ZMTP 3 (rfc.zeromq.org/spec/23): a 64-byte greeting, then frames of a
// flags byte (bit 0 MORE, bit 1 LONG, bit 2 COMMAND), a size of 1 byte
// (8 big-endian bytes when LONG) and the body.
const (
	zmtpGreeting = 64
	flagMore     = 1
	flagLong     = 2
	flagCommand  = 4
)

type guardState int

const (
	inGreeting guardState = iota
	inFlags
	inSize
	inBody
)

// frameGuard is a net.Conn that follows the framing of what it reads.
type frameGuard struct {
	net.Conn
	limit uint64

	state   guardState
	left    uint64 // greeting or body bytes still to pass
	flags   byte
	size    [8]byte
	sizeLen int    // size bytes read so far
	message uint64 // bytes of the current message's frames so far
	err     error

	// first: the frame being read is the connection's first (its
	// handshake command), whose body is held in cmd for checkReady.
	first, pastFirst bool
	cmd              []byte
}

func newFrameGuard(c net.Conn, limit uint64) *frameGuard {
	return &frameGuard{Conn: c, limit: limit, left: zmtpGreeting}
}

// FrameTooLargeError is the read error of a connection cut for an
// oversized frame. It is a net.Error that is not a timeout, so zmq4 drops
// the connection (and only it).
type FrameTooLargeError struct{ Size, Limit uint64 }

func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("zeromq peer sent a message of %d bytes, over the kernel's limit of %d: connection closed", e.Size, e.Limit)
}
func (e *FrameTooLargeError) Timeout() bool   { return false }
func (e *FrameTooLargeError) Temporary() bool { return false }

func (g *frameGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.Conn.Read(p)
	if e := g.scan(p[:n]); e != nil {
		g.err = e
		g.Conn.Close()
		return 0, e
	}
	return n, err
}

// endFirst checks the connection's first command, read whole.
func (g *frameGuard) endFirst() error {
	g.first = false
	err := checkReady(g.cmd)
	g.cmd = nil
	return err
}

// scan advances the framing over b; it fails at a header whose size would
// take the message over the limit, and at the end of a first command that
// is a READY zmq4 could not take (handshake.go).
func (g *frameGuard) scan(b []byte) error {
	for len(b) > 0 {
		switch g.state {
		case inGreeting, inBody:
			k := min(g.left, uint64(len(b)))
			if g.first {
				g.cmd = append(g.cmd, b[:k]...)
			}
			g.left -= k
			b = b[k:]
			if g.left == 0 {
				if g.state == inBody && g.first {
					if err := g.endFirst(); err != nil {
						return err
					}
				}
				g.state = inFlags
			}
		case inFlags:
			g.flags, g.sizeLen = b[0], 0
			b = b[1:]
			g.state = inSize
		case inSize:
			need := 1
			if g.flags&flagLong != 0 {
				need = 8
			}
			k := copy(g.size[g.sizeLen:need], b)
			g.sizeLen += k
			b = b[k:]
			if g.sizeLen < need {
				continue
			}
			size := uint64(g.size[0])
			if need == 8 {
				size = binary.BigEndian.Uint64(g.size[:])
			}
			total := g.message + size
			if size > g.limit || total > g.limit {
				return &FrameTooLargeError{Size: max(size, total), Limit: g.limit}
			}
			if g.flags&flagMore != 0 && g.flags&flagCommand == 0 {
				g.message = total
			} else {
				g.message = 0
			}
			g.left, g.state = size, inBody
			if !g.pastFirst && g.flags&flagCommand != 0 {
				if size > maxHandshake {
					return &HandshakeError{fmt.Sprintf("a first command of %d bytes", size)}
				}
				g.first = true
			}
			g.pastFirst = true
			if size == 0 {
				g.state = inFlags
				if g.first {
					if err := g.endFirst(); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
