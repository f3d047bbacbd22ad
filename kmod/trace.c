// SPDX-License-Identifier: GPL-2.0
/*
 * The one place kgo's tracepoints are instantiated (see trace.h); every
 * other file only includes trace.h and calls trace_kgo_*().
 */

#define CREATE_TRACE_POINTS
#include "trace.h"
