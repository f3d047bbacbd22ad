// SPDX-License-Identifier: GPL-2.0

package main

import (
	"runtime"
	"sync"
	"time"
)

// spawn starts n empty goroutines and waits for all of them: the cost of
// a go statement, the goroutine's first run and its exit, together.
// GOMAXPROCS is left as it is (one P per CPU), as a Go program has it.
func spawn(n int64) time.Duration {
	var wg sync.WaitGroup

	start := time.Now()
	for i := int64(0); i < n; i++ {
		wg.Add(1)
		go func() { wg.Done() }()
	}
	wg.Wait()
	return time.Since(start)
}

// node is one node of the spawn tree: it starts two children one level
// down, unless it is a leaf, and waits for them with a WaitGroup, as
// the nodes of kgo_bench.ko's tree (bench/kmod/tree.c) do.
func node(depth int64, parent *sync.WaitGroup) {
	if depth > 0 {
		var wg sync.WaitGroup

		wg.Add(2)
		go node(depth-1, &wg)
		go node(depth-1, &wg)
		wg.Wait()
	}
	parent.Done()
}

// tree runs a whole tree depth levels below its root on procs Ps.
func tree(depth int64, procs int) time.Duration {
	var wg sync.WaitGroup

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	start := time.Now()
	wg.Add(1)
	go node(depth, &wg)
	wg.Wait()
	return time.Since(start)
}

func tree1P(depth int64) time.Duration   { return tree(depth, 1) }
func treeAllP(depth int64) time.Duration { return tree(depth, runtime.NumCPU()) }

// treeNodes is the size of a tree depth levels below its root.
func treeNodes(depth int64) int64 { return 1<<(depth+1) - 1 }
