//go:build !linux

package connlimit

import "net"

// PeerUser would be the user at the other end of a Unix socket connection;
// off Linux it is "" (the connection counts against Config.MaxConns only).
func PeerUser(net.Conn) string { return "" }
