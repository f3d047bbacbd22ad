/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kgo's tracepoints: /sys/kernel/tracing/events/kgo/, perf and
 * trace-cmd (-e kgo). They follow a goroutine through its life (create,
 * ready, start, park, end) and record the scheduler's decisions that
 * move work or threads around (steal, M park and wake, handoff,
 * preemption). Every field is an integer or an address, so that
 * recording stays cheap and the binary format needs no string copies.
 *
 * A P field of -1 means no P: the event came from outside any goroutine
 * (a thread that is not an M, or interrupt context), or from a
 * goroutine whose M lost its P while it blocked; kgo_m_wake's p=-1
 * wakes the M to exit.
 *
 * This header is read several times (TRACE_HEADER_MULTI_READ): once
 * normally and again by define_trace.h, from trace.c only, to emit the
 * tracepoints' code. It is found there through TRACE_INCLUDE_PATH ".",
 * which the -I$(src) of trace.o in Kbuild resolves.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kgo

#if !defined(_KGO_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KGO_TRACE_H

#include <linux/tracepoint.h>

#include "g.h"

/* Userspace decoders (perf, trace-cmd) see the numbers, not the names. */
#define KGO_TRACE_WAIT_ENUM(name, word)	TRACE_DEFINE_ENUM(KGO_WAIT_REASON_##name);
KGO_WAIT_REASONS(KGO_TRACE_WAIT_ENUM, KGO_TRACE_WAIT_ENUM)
#undef KGO_TRACE_WAIT_ENUM

/* The same words as kgo_waitreason_str() (g.c): both come from g.h's list. */
#define KGO_TRACE_WAIT_SYM(name, word)	{ KGO_WAIT_REASON_##name, word },
#define KGO_TRACE_WAIT_SYMe(name, word)	{ KGO_WAIT_REASON_##name, word }
#define kgo_show_waitreason(r)						\
	__print_symbolic(r, KGO_WAIT_REASONS(KGO_TRACE_WAIT_SYM, KGO_TRACE_WAIT_SYMe))

/* A goroutine and the P where something happened to it. */
DECLARE_EVENT_CLASS(kgo_g_class,
		    TP_PROTO(u64 goid, int p),
		    TP_ARGS(goid, p),
		    TP_STRUCT__entry(__field(u64, goid)
				     __field(int, p)),
		    TP_fast_assign(__entry->goid = goid;
				   __entry->p = p;),
		    TP_printk("goid=%llu p=%d", __entry->goid, __entry->p)
);

/*
 * @p: the spawner's P, -1 when spawned from outside a goroutine. @fn is
 * recorded as an address and shown as a symbol: a goroutine is known by
 * its function, as in Go's traceback ("created by").
 */
TRACE_EVENT(kgo_g_create,
	    TP_PROTO(u64 goid, int p, void *fn),
	    TP_ARGS(goid, p, fn),
	    TP_STRUCT__entry(__field(u64, goid)
			     __field(void *, fn)
			     __field(int, p)),
	    TP_fast_assign(__entry->goid = goid;
			   __entry->fn = fn;
			   __entry->p = p;),
	    TP_printk("goid=%llu p=%d fn=%ps", __entry->goid, __entry->p,
		      __entry->fn)
);

/* The goroutine exited on @p. */
DEFINE_EVENT(kgo_g_class, kgo_g_end,
	     TP_PROTO(u64 goid, int p),
	     TP_ARGS(goid, p)
);

/* Made runnable; @p: the readier's P, -1 from outside a goroutine. */
DEFINE_EVENT(kgo_g_class, kgo_g_ready,
	     TP_PROTO(u64 goid, int p),
	     TP_ARGS(goid, p)
);

/* A G starts or resumes on @p after @wait_ns runnable. */
TRACE_EVENT(kgo_g_start,
	    TP_PROTO(u64 goid, int p, u64 wait_ns),
	    TP_ARGS(goid, p, wait_ns),
	    TP_STRUCT__entry(__field(u64, goid)
			     __field(u64, wait_ns)
			     __field(int, p)),
	    TP_fast_assign(__entry->goid = goid;
			   __entry->wait_ns = wait_ns;
			   __entry->p = p;),
	    TP_printk("goid=%llu p=%d wait_ns=%llu",
		      __entry->goid, __entry->p, __entry->wait_ns)
);

/*
 * A G parked on @p; @reason is an enum kgo_waitreason. Single quotes:
 * the format file repeats this format inside double quotes unescaped,
 * and double quotes in it would end the string for perf's parser.
 */
TRACE_EVENT(kgo_g_park,
	    TP_PROTO(u64 goid, int p, u8 reason),
	    TP_ARGS(goid, p, reason),
	    TP_STRUCT__entry(__field(u64, goid)
			     __field(int, p)
			     __field(u8, reason)),
	    TP_fast_assign(__entry->goid = goid;
			   __entry->p = p;
			   __entry->reason = reason;),
	    TP_printk("goid=%llu p=%d reason='%s'", __entry->goid, __entry->p,
		      kgo_show_waitreason(__entry->reason))
);

/* P @p took @n Gs from the run queue of P @victim. */
TRACE_EVENT(kgo_steal,
	    TP_PROTO(int p, int victim, u32 n),
	    TP_ARGS(p, victim, n),
	    TP_STRUCT__entry(__field(int, p)
			     __field(int, victim)
			     __field(u32, n)),
	    TP_fast_assign(__entry->p = p;
			   __entry->victim = victim;
			   __entry->n = n;),
	    TP_printk("p=%d victim=%d n=%u", __entry->p, __entry->victim, __entry->n)
);

/* M @mid, bound to @cpu, goes to sleep without a P. */
TRACE_EVENT(kgo_m_park,
	    TP_PROTO(u64 mid, int cpu),
	    TP_ARGS(mid, cpu),
	    TP_STRUCT__entry(__field(u64, mid)
			     __field(int, cpu)),
	    TP_fast_assign(__entry->mid = mid;
			   __entry->cpu = cpu;),
	    TP_printk("mid=%llu cpu=%d", __entry->mid, __entry->cpu)
);

/* M @mid, bound to @cpu, is woken to run P @p. */
TRACE_EVENT(kgo_m_wake,
	    TP_PROTO(u64 mid, int cpu, int p),
	    TP_ARGS(mid, cpu, p),
	    TP_STRUCT__entry(__field(u64, mid)
			     __field(int, cpu)
			     __field(int, p)),
	    TP_fast_assign(__entry->mid = mid;
			   __entry->cpu = cpu;
			   __entry->p = p;),
	    TP_printk("mid=%llu cpu=%d p=%d", __entry->mid, __entry->cpu, __entry->p)
);

/*
 * P @p was retaken from M @mid, blocked in the kernel for @blocked_ns
 * while it ran goroutine @goid, and handed to another M.
 */
TRACE_EVENT(kgo_handoff,
	    TP_PROTO(int p, u64 mid, u64 goid, u64 blocked_ns),
	    TP_ARGS(p, mid, goid, blocked_ns),
	    TP_STRUCT__entry(__field(u64, mid)
			     __field(u64, goid)
			     __field(u64, blocked_ns)
			     __field(int, p)),
	    TP_fast_assign(__entry->mid = mid;
			   __entry->goid = goid;
			   __entry->blocked_ns = blocked_ns;
			   __entry->p = p;),
	    TP_printk("p=%d mid=%llu goid=%llu blocked_ns=%llu",
		      __entry->p, __entry->mid, __entry->goid, __entry->blocked_ns)
);

/*
 * P @p was taken from M @mid, whose goroutine @goid had run @ran_ns in
 * one slice without a kgo call (hog.c); counted as for kgo_preempt.
 */
TRACE_EVENT(kgo_hog_relief,
	    TP_PROTO(int p, u64 mid, u64 goid, u64 ran_ns),
	    TP_ARGS(p, mid, goid, ran_ns),
	    TP_STRUCT__entry(__field(u64, mid)
			     __field(u64, goid)
			     __field(u64, ran_ns)
			     __field(int, p)),
	    TP_fast_assign(__entry->mid = mid;
			   __entry->goid = goid;
			   __entry->ran_ns = ran_ns;
			   __entry->p = p;),
	    TP_printk("p=%d mid=%llu goid=%llu ran_ns=%llu",
		      __entry->p, __entry->mid, __entry->goid, __entry->ran_ns)
);

/*
 * Goroutine @goid was preempted on @p at a kgo call after @ran_ns in one
 * slice, counted from the monitor's first sight of that slice: short by
 * up to one monitor tick.
 */
TRACE_EVENT(kgo_preempt,
	    TP_PROTO(u64 goid, int p, u64 ran_ns),
	    TP_ARGS(goid, p, ran_ns),
	    TP_STRUCT__entry(__field(u64, goid)
			     __field(u64, ran_ns)
			     __field(int, p)),
	    TP_fast_assign(__entry->goid = goid;
			   __entry->ran_ns = ran_ns;
			   __entry->p = p;),
	    TP_printk("goid=%llu p=%d ran_ns=%llu",
		      __entry->goid, __entry->p, __entry->ran_ns)
);

#endif /* _KGO_TRACE_H */

/* Outside the guard: define_trace.h must see this on every read. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
