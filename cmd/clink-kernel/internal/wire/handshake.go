package wire

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// go-zeromq/zmq4 (v0.17.0) also panics, in its accept goroutine, on a
// peer's READY command it cannot read: a property whose lengths run past
// the command (security.go Handshake -> protocol.go Property.Write slices
// without checking), or a Socket-Type it does not know or that is missing
// (socket_types.go IsCompatible: panic("unknown socket-type")). FuzzSockets
// found the second. The guard therefore reads the first command of a
// connection (the NULL mechanism's READY) whole, and cuts a connection
// whose READY zmq4 would choke on before zmq4 sees it.

// maxHandshake bounds the READY command the guard holds to check; a
// client's is a few dozen bytes.
const maxHandshake = 64 << 10

// zmqSocketTypes are the socket types zmq4's IsCompatible knows.
var zmqSocketTypes = map[string]bool{
	"PAIR": true, "PUB": true, "SUB": true, "REQ": true, "REP": true, "DEALER": true,
	"ROUTER": true, "PULL": true, "PUSH": true, "XPUB": true, "XSUB": true,
}

// HandshakeError is the read error of a connection cut for a READY
// command the kernel's ZeroMQ library could not take. Like
// FrameTooLargeError, a net.Error that is not a timeout.
type HandshakeError struct{ Reason string }

func (e *HandshakeError) Error() string {
	return "zeromq peer's handshake refused: " + e.Reason + ": connection closed"
}
func (e *HandshakeError) Timeout() bool   { return false }
func (e *HandshakeError) Temporary() bool { return false }

// checkReady checks a connection's first command (its body: name length,
// name, data). A READY must hold well-formed properties (name length,
// name, 4-byte value length, value) and exactly one Socket-Type, spelled
// so, of a type zmq4 knows. Other commands pass: zmq4 refuses them with
// an error.
func checkReady(cmd []byte) error {
	if len(cmd) == 0 || int(cmd[0]) > len(cmd)-1 || string(cmd[1:1+int(cmd[0])]) != "READY" {
		return nil
	}
	md := cmd[1+int(cmd[0]):]
	socketType := ""
	for len(md) > 0 {
		klen := int(md[0])
		if 1+klen+4 > len(md) {
			return &HandshakeError{"a READY property runs past the command"}
		}
		name := string(md[1 : 1+klen])
		vlen := binary.BigEndian.Uint32(md[1+klen : 1+klen+4])
		rest := md[1+klen+4:]
		if uint64(vlen) > uint64(len(rest)) {
			return &HandshakeError{"a READY property's value runs past the command"}
		}
		value := string(rest[:vlen])
		md = rest[vlen:]
		// zmq4 keys properties by a title-cased name: any spelling of
		// socket-type can land on its Socket-Type.
		if strings.EqualFold(name, "socket-type") {
			if name != "Socket-Type" || socketType != "" {
				return &HandshakeError{fmt.Sprintf("READY property %q", name)}
			}
			socketType = value
		}
	}
	if !zmqSocketTypes[socketType] {
		return &HandshakeError{fmt.Sprintf("unknown socket type %q", socketType)}
	}
	return nil
}
