package netfault_test

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/internal/netfault"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	_, err = bufio.NewReader(c).ReadString('\n')
	return err
}

func TestCutDropsOpenConnectionsAndRestoreHeals(t *testing.T) {
	p, err := netfault.Listen(echoServer(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })

	require.NoError(t, roundTrip(p.Addr()))

	open, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer open.Close()
	_, err = open.Write([]byte("a\n"))
	require.NoError(t, err)
	_, err = bufio.NewReader(open).ReadString('\n')
	require.NoError(t, err)

	p.Cut()
	_ = open.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = bufio.NewReader(open).ReadString('\n')
	require.Error(t, err, "an open connection must be dropped by Cut")
	require.Error(t, roundTrip(p.Addr()), "a new connection must fail while cut")

	p.Restore()
	require.NoError(t, roundTrip(p.Addr()))
}

func TestSetDelaySlowsEveryRoundTripAndZeroRestores(t *testing.T) {
	p, err := netfault.Listen(echoServer(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })

	open, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer open.Close()
	r := bufio.NewReader(open)
	timed := func() time.Duration {
		start := time.Now()
		_, err := open.Write([]byte("ping\n"))
		require.NoError(t, err)
		_ = open.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "ping\n", line, "a delayed chunk arrives whole")
		return time.Since(start)
	}
	// Only the delayed round trips' lower bound is certain; an undelayed
	// one is merely told apart from them.
	const delay = 300 * time.Millisecond
	require.Less(t, timed(), 2*delay)

	// The delay reaches a connection opened before it was set, both ways.
	p.SetDelay(delay)
	require.GreaterOrEqual(t, timed(), 2*delay, "request and answer each wait the delay")
	require.NoError(t, roundTrip(p.Addr()), "new connections pass, slowly")

	p.SetDelay(0)
	require.Less(t, timed(), 2*delay)
}
