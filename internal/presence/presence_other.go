//go:build !linux

package presence

import "net"

// peerSocket is what presence asks of a connection's socket: its peerState.
type peerSocket interface{ state() peerState }

// socketOf is nil off Linux: an EOF on the read side counts as a departure, as in net/http.
func socketOf(net.Conn) peerSocket { return nil }
