// SPDX-License-Identifier: GPL-2.0

package main

import (
	"runtime"
	"sync"
	"time"
)

// yieldPingpong: two goroutines on one P take turns through
// runtime.Gosched, n switches in all (n/2 yields each). With a single P
// every Gosched hands the P to the other goroutine, so this is the cost
// of one voluntary switch through the scheduler.
func yieldPingpong(n int64) time.Duration {
	var wg sync.WaitGroup

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	each := (n + 1) / 2
	yielder := func() {
		for i := int64(0); i < each; i++ {
			runtime.Gosched()
		}
		wg.Done()
	}
	start := time.Now()
	wg.Add(2)
	go yielder()
	go yielder()
	wg.Wait()
	return time.Since(start)
}

// chanPingpong: n round trips of a value over two unbuffered channels,
// out and back: each trip blocks and wakes each side once. GOMAXPROCS is
// left as it is; the woken goroutine goes to the waker's runnext, so the
// pair mostly stays on one P, as a Go program's would.
func chanPingpong(n int64) time.Duration {
	ping := make(chan int64)
	pong := make(chan int64)

	go func() {
		for v := range ping {
			pong <- v
		}
	}()
	start := time.Now()
	for i := int64(0); i < n; i++ {
		ping <- i
		<-pong
	}
	d := time.Since(start)
	close(ping)
	return d
}
