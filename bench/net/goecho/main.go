// SPDX-License-Identifier: GPL-2.0

// goecho is the Go peer of make bench's "net" group: a TCP echo server
// written as Go servers are, one goroutine per connection, blocking
// reads and writes through the net package, which parks the goroutine
// and lets the runtime's netpoller (epoll) wake it: the model kgo's
// echo sample brings into the kernel.
//
//	goecho [-port P]
//
// Built static without cgo (CGO_ENABLED=0) for the test VMs' busybox
// initramfs, by Debian's go 1.19 with nothing to download.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
)

func serve(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func main() {
	port := flag.Int("port", 7007, "TCP port to listen on")
	flag.Parse()

	// A connection is an fd. Go raises the soft limit to the hard one by
	// itself, but the initramfs's hard limit is 4096: root raises both.
	lim := syscall.Rlimit{Cur: 1 << 20, Max: 1 << 20}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintf(os.Stderr, "goecho: RLIMIT_NOFILE: %v\n", err)
	}

	// IPv4 like the other servers; Go sets SO_REUSEADDR on listeners and
	// TCP_NODELAY on every connection.
	ln, err := net.Listen("tcp4", fmt.Sprintf("0.0.0.0:%d", *port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "goecho: %v\n", err)
		os.Exit(1)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			// EMFILE and the like: say so, let some close, go on.
			fmt.Fprintf(os.Stderr, "goecho: accept: %v\n", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go serve(c)
	}
}
