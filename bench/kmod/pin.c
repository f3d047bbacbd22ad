// SPDX-License-Identifier: GPL-2.0
/*
 * Confining goroutines to one P.
 *
 * Some workloads need their goroutines on one P: the yield ping-pong,
 * tree_1p, and the memory ones, whose filler keeps what it spawns from
 * starting by never switching on the only P. kgo_gomaxprocs(1) leaves
 * one P, and the previous count is put back afterwards.
 */

#include "bench.h"

/**
 * kgo_bench_pin_start() - leave goroutines one P
 * @pin: the state to undo it, initialised here
 *
 * Goroutines spawned from process context after this run on the one P
 * left, and only there, until kgo_bench_pin_stop().
 *
 * Context: process, outside any goroutine (a goroutine would hold a P
 * itself). Return: 0 or -errno, with nothing changed.
 */
int kgo_bench_pin_start(struct kgo_bench_pin *pin)
{
	pin->prev = kgo_gomaxprocs(1);
	return pin->prev < 0 ? pin->prev : 0;
}

/* Undoes kgo_bench_pin_start(). Context: process, not a goroutine. */
void kgo_bench_pin_stop(struct kgo_bench_pin *pin)
{
	kgo_gomaxprocs(pin->prev);
}

/* The Ps kgo runs goroutines on. */
int kgo_bench_nprocs(void)
{
	return kgo_gomaxprocs(0);
}
