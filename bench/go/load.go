// SPDX-License-Identifier: GPL-2.0

package main

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The scheduler under load, as bench/kmod/sched_load.c runs it on kgo:
// many goroutines runnable at once, channels with more than two
// parties, a lock that many goroutines want. The sizes and the way of
// measuring are that file's; see it, and Documentation/bench.rst.
const (
	chanBufCap      = 64
	selectCases     = 4
	faninSenders    = 64
	mutexGoroutines = 8
	loadSmokeOps    = 1000
	yieldOps        = 200000
	chanBufOps      = 200000
	select4Ops      = 100000
	faninOps        = 100000
	mutexOps        = 100000
)

// loadResult is what one run measured: from the gate's opening to the
// end of the last worker, the operations done, and for the mutex the
// locks that found it held.
type loadResult struct {
	d          time.Duration
	ops        int64
	goroutines int64
	contended  *int64
}

// load is one run: workers goroutines, each of which runs body once the
// gate opens.
type load struct {
	workers     int
	per         int64 // operations per worker (per sender)
	start       int32 // the gate, atomic
	left        int64 // workers not yet ended, atomic
	ops         int64 // atomic
	contended   int64 // atomic
	t1          time.Time
	ready, done sync.WaitGroup
}

// run starts every worker, waits until each has run once and spins
// with Gosched on the gate, then opens it at t0; the last worker to end
// takes t1. kgo's side starts its workers from a goroutine, waits and
// opens its gate the same way.
func (l *load) run(body func(l *load, i int)) loadResult {
	l.left = int64(l.workers)
	l.ready.Add(l.workers)
	l.done.Add(l.workers)
	for i := 0; i < l.workers; i++ {
		go func(i int) {
			l.ready.Done()
			for atomic.LoadInt32(&l.start) == 0 {
				runtime.Gosched()
			}
			body(l, i)
			if atomic.AddInt64(&l.left, -1) == 0 {
				l.t1 = time.Now()
			}
			l.done.Done()
		}(i)
	}
	l.ready.Wait()
	t0 := time.Now()
	atomic.StoreInt32(&l.start, 1)
	l.done.Wait()
	return loadResult{d: l.t1.Sub(t0), ops: atomic.LoadInt64(&l.ops),
		goroutines: int64(l.workers)}
}

// share is n operations over k parties, at least one each.
func share(n int64, k int) int64 {
	if n/int64(k) > 0 {
		return n / int64(k)
	}
	return 1
}

// yieldN: n goroutines on one P (GOMAXPROCS=1, as yield_pingpong),
// each calling Gosched in a loop; an operation is a Gosched.
func yieldN(goroutines int) func(n int64) loadResult {
	return func(n int64) loadResult {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		l := &load{workers: goroutines, per: share(n, goroutines)}
		return l.run(func(l *load, i int) {
			for j := int64(0); j < l.per; j++ {
				runtime.Gosched()
			}
			atomic.AddInt64(&l.ops, l.per)
		})
	}
}

// recvAll receives from c until it is closed; an operation is a value.
func recvAll(l *load, c chan int64) {
	got := int64(0)
	for range c {
		got++
	}
	atomic.AddInt64(&l.ops, got)
}

func sendN(l *load, c chan int64) {
	for j := int64(0); j < l.per; j++ {
		c <- j
	}
}

// chanBuf: one sender, one receiver, a channel of 64.
func chanBuf(n int64) loadResult {
	c := make(chan int64, chanBufCap)
	l := &load{workers: 2, per: n}
	return l.run(func(l *load, i int) {
		if i == 1 {
			recvAll(l, c)
			return
		}
		sendN(l, c)
		close(c)
	})
}

// select4: 4 senders, each on its own unbuffered channel, a receiver
// selecting over the 4; a closed channel's case is set to nil, as kgo's
// receiver sets its case's channel to NULL.
func select4(n int64) loadResult {
	var cs [selectCases]chan int64
	for k := range cs {
		cs[k] = make(chan int64)
	}
	l := &load{workers: selectCases + 1, per: share(n, selectCases)}
	return l.run(func(l *load, i int) {
		if i < selectCases {
			sendN(l, cs[i])
			close(cs[i])
			return
		}
		c0, c1, c2, c3 := cs[0], cs[1], cs[2], cs[3]
		got, open := int64(0), selectCases
		for open > 0 {
			var ok bool
			select {
			case _, ok = <-c0:
				if !ok {
					c0 = nil
				}
			case _, ok = <-c1:
				if !ok {
					c1 = nil
				}
			case _, ok = <-c2:
				if !ok {
					c2 = nil
				}
			case _, ok = <-c3:
				if !ok {
					c3 = nil
				}
			}
			if ok {
				got++
			} else {
				open--
			}
		}
		atomic.AddInt64(&l.ops, got)
	})
}

// chanFanin: 64 senders on one unbuffered channel, one receiver; the
// last sender to finish closes it.
func chanFanin(n int64) loadResult {
	c := make(chan int64)
	senders := int64(faninSenders)
	l := &load{workers: faninSenders + 1, per: share(n, faninSenders)}
	return l.run(func(l *load, i int) {
		if i == faninSenders {
			recvAll(l, c)
			return
		}
		sendN(l, c)
		if atomic.AddInt64(&senders, -1) == 0 {
			close(c)
		}
	})
}

// mutexContended: 8 goroutines, each taking a sync.Mutex around an
// increment of a shared counter and a Gosched, so that the others run
// while it is held and find it so, on one P as on many; an operation
// is a lock. A failed TryLock first counts the locks that found it
// held.
func mutexContended(n int64) loadResult {
	var mu sync.Mutex
	counter := int64(0)
	l := &load{workers: mutexGoroutines, per: share(n, mutexGoroutines)}
	r := l.run(func(l *load, i int) {
		contended := int64(0)
		for j := int64(0); j < l.per; j++ {
			if !mu.TryLock() {
				contended++
				mu.Lock()
			}
			counter++
			runtime.Gosched()
			mu.Unlock()
		}
		atomic.AddInt64(&l.ops, l.per)
		atomic.AddInt64(&l.contended, contended)
	})
	if counter != r.ops {
		panic("mutexContended: the mutex let two in")
	}
	c := atomic.LoadInt64(&l.contended)
	r.contended = &c
	return r
}
