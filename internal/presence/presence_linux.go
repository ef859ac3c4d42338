package presence

import (
	"encoding/binary"
	"net"
	"syscall"
)

// peerSocket is what presence asks of a connection's socket: its peerState.
type peerSocket interface{ state() peerState }

// tcpSocket reads the state of a TCP socket (TCP_INFO): CLOSE_WAIT after the client's FIN
// (a half-close, or a close not yet known as one), CLOSE once a reset came back.
type tcpSocket struct{ rc syscall.RawConn }

// socketOf is the TCP socket under c (through TLS), nil when c is not TCP.
func socketOf(c net.Conn) peerSocket {
	for {
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = u.NetConn()
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return tcpSocket{rc}
}

// TCP states, include/net/tcp_states.h.
const (
	tcpClose     = 7
	tcpCloseWait = 8
)

func (s tcpSocket) state() peerState {
	var state byte
	var serr error
	err := s.rc.Control(func(fd uintptr) {
		// The first byte of struct tcp_info is tcpi_state; the kernel copies as many bytes
		// as asked for.
		v, err := syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_INFO)
		var b [4]byte
		binary.NativeEndian.PutUint32(b[:], uint32(v))
		state, serr = b[0], err
	})
	switch {
	case err != nil || serr != nil || state == tcpClose:
		return peerGone
	case state == tcpCloseWait:
		return peerHalfClosed
	}
	return peerOpen
}
