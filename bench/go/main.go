// SPDX-License-Identifier: GPL-2.0

// gobench runs Go's side of `make bench`: the workloads kgo's in-kernel
// benchmark runs with kgo goroutines, done here with Go's own, so that
// the two schedulers can be compared in the same VM boot.
//
//	gobench [-run NAME[,NAME...]] [-iters SCALE] [-depth D] [-smoke]
//
// It prints one JSON object per line on stdout, the format every
// benchmark of `make bench` prints and tools/bench/report reads:
//
//	{"metric":"spawn","impl":"go","unit":"ns/op","value":123.4,"iters":200000}
//
// Each benchmark is first run untimed at a tenth of its size, so that
// what is timed finds the runtime's caches (free Gs, stacks) as a
// long-running program would: kgo's side is measured with its caches
// warm as well.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"time"
)

// A benchmark runs its workload of size n and says how long it took.
// The size is a count of operations, or for a tree its depth. A
// workload of the scheduler under load (load.go) runs with load
// instead, and says how many operations it did as well.
type benchmark struct {
	metric string
	unit   string
	tree   bool
	iters  int64 // the size by default
	smoke  int64 // the size in smoke mode
	run    func(n int64) time.Duration
	load   func(n int64) loadResult
}

var benchmarks = []benchmark{
	{metric: "spawn", unit: "ns/op", iters: 200000, smoke: 1000, run: spawn},
	{metric: "yield_pingpong", unit: "ns/op", iters: 200000, smoke: 1000, run: yieldPingpong},
	{metric: "chan_pingpong", unit: "ns/op", iters: 100000, smoke: 1000, run: chanPingpong},
	// The trees' depths are bench/kmod's defaults (tree.c): each waiting
	// kgo node holds a 16 KiB kernel stack, and deep trees would not fit
	// the 1 GiB test VM. The bench job passes kgo's depth with -depth,
	// so that both sides run the same tree.
	{metric: "tree_1p", unit: "ms", tree: true, iters: 14, smoke: 12, run: tree1P},
	{metric: "tree_allp", unit: "ms", tree: true, iters: 14, smoke: 12, run: treeAllP},
	// The scheduler under load (load.go); sizes as bench/kmod/sched_load.c.
	{metric: "yield_n2", unit: "ns/op", iters: yieldOps, smoke: loadSmokeOps, load: yieldN(2)},
	{metric: "yield_n100", unit: "ns/op", iters: yieldOps, smoke: loadSmokeOps, load: yieldN(100)},
	{metric: "yield_n10000", unit: "ns/op", iters: yieldOps, smoke: loadSmokeOps, load: yieldN(10000)},
	{metric: "chan_buf", unit: "ns/op", iters: chanBufOps, smoke: loadSmokeOps, load: chanBuf},
	{metric: "select4", unit: "ns/op", iters: select4Ops, smoke: loadSmokeOps, load: select4},
	{metric: "chan_fanin", unit: "ns/op", iters: faninOps, smoke: loadSmokeOps, load: chanFanin},
	{metric: "mutex_contended", unit: "ns/op", iters: mutexOps, smoke: loadSmokeOps,
		load: mutexContended},
}

// report turns the time a run of size n took into its result line: a
// tree's total time and node count, or the time per operation.
func (b benchmark) report(n int64, d time.Duration) result {
	r := result{Metric: b.metric, Impl: "go", Unit: b.unit}
	if b.tree {
		r.Value = float64(d.Nanoseconds()) / 1e6
		r.Iters = treeNodes(n)
	} else {
		r.Value = float64(d.Nanoseconds()) / float64(n)
		r.Iters = n
	}
	return r
}

// reportLoad: the time per operation done, and how many were done (a
// run of n operations does at least one per goroutine).
func (b benchmark) reportLoad(l loadResult) result {
	return result{Metric: b.metric, Impl: "go", Unit: b.unit,
		Value: float64(l.d.Nanoseconds()) / float64(l.ops), Iters: l.ops,
		Goroutines: l.goroutines, Contended: l.contended}
}

const maxDepth = 24

func min(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

type result struct {
	Metric     string  `json:"metric"`
	Impl       string  `json:"impl"`
	Unit       string  `json:"unit"`
	Value      float64 `json:"value"`
	Iters      int64   `json:"iters"`
	Goroutines int64   `json:"goroutines,omitempty"`
	Contended  *int64  `json:"contended,omitempty"`
}

func main() {
	run := flag.String("run", "all", "benchmarks to run, comma-separated: "+names())
	scale := flag.Float64("iters", 1, "scale every size by this; a tree gets log2(SCALE) more levels")
	depth := flag.Int64("depth", 0, "levels below the root of the trees (default 14, smoke 12)")
	smoke := flag.Bool("smoke", false, "tiny sizes, to check that everything runs")
	flag.Parse()
	if flag.NArg() > 0 || *scale <= 0 || *depth < 0 || *depth > maxDepth {
		flag.Usage()
		os.Exit(2)
	}

	chosen, err := choose(*run)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gobench:", err)
		os.Exit(2)
	}
	out := json.NewEncoder(os.Stdout)
	for _, b := range chosen {
		n := sizeOf(b, *smoke, *scale, *depth)
		var r result
		if b.load != nil {
			b.load(warmSize(b, n))
			r = b.reportLoad(b.load(n))
		} else {
			b.run(warmSize(b, n))
			r = b.report(n, b.run(n))
		}
		if err := out.Encode(&r); err != nil {
			fmt.Fprintln(os.Stderr, "gobench: stdout:", err)
			os.Exit(1)
		}
	}
}

func names() string {
	var s []string
	for _, b := range benchmarks {
		s = append(s, b.metric)
	}
	return strings.Join(s, ",")
}

// choose returns the named benchmarks in the order asked for.
func choose(list string) ([]benchmark, error) {
	if list == "all" {
		return benchmarks, nil
	}
	var chosen []benchmark
next:
	for _, name := range strings.Split(list, ",") {
		for _, b := range benchmarks {
			if b.metric == name {
				chosen = append(chosen, b)
				continue next
			}
		}
		return nil, fmt.Errorf("no benchmark %q (there are: %s)", name, names())
	}
	return chosen, nil
}

func sizeOf(b benchmark, smoke bool, scale float64, depth int64) int64 {
	switch {
	case b.tree && depth > 0:
		return depth
	case smoke:
		return b.smoke
	case b.tree && scale >= 2:
		return min(b.iters+int64(math.Log2(scale)), maxDepth)
	case b.tree:
		return b.iters
	}
	if n := int64(float64(b.iters) * scale); n > 0 {
		return n
	}
	return 1
}

// A tenth of the work: for a tree, about an eighth (three levels fewer).
func warmSize(b benchmark, n int64) int64 {
	if b.tree {
		if n > 3 {
			return n - 3
		}
		return 0
	}
	if n >= 10 {
		return n / 10
	}
	return 1
}
