// SPDX-License-Identifier: GPL-2.0
/*
 * kgo: goroutines inside the Linux kernel. This file only orders module
 * init and exit; teardown runs in reverse. No kind of kernel is refused:
 * PREEMPT_RT ones load kgo as any other (README, "PREEMPT_RT").
 */

#include <linux/init.h>
#include <linux/module.h>

#include "block.h"
#include "budget.h"
#include "feed.h"
#include "floor.h"
#include "debugfs.h"
#include "dev.h"
#include "monitor.h"
#include "procs.h"
#include "g.h"
#include "m.h"
#include "sched.h"
#include "session.h"
#include "stack.h"

static int __init kgo_init(void)
{
	int ret;

	/*
	 * Every parameter first: a bad one fails the load before anything
	 * starts or is undone, kthreads and the kernel's preempt notifier
	 * key (a jump label patched into the scheduler) included.
	 */
	ret = kgo_monitor_check_params();
	if (!ret)
		ret = kgo_budget_check_params();
	if (!ret)
		ret = kgo_floor_check_params();
	if (!ret)
		ret = kgo_procs_check_params();
	if (!ret)
		ret = kgo_dev_check_params();
	if (!ret)
		ret = kgo_feed_check_params();
	if (ret)
		return ret;
	ret = kgo_m_init();
	if (ret)
		goto err_m;
	ret = kgo_session_init();	/* checks the module parameters */
	if (ret)
		goto err_session;
	ret = kgo_block_init();		/* before the first M starts */
	if (ret)
		goto err_block;
	ret = kgo_g_init();
	if (ret)
		goto err_g;
	ret = kgo_sched_init();
	if (ret)
		goto err_sched;
	ret = kgo_stack_init();
	if (ret)
		goto err_stack;
	ret = kgo_procs_init();		/* starts the Ps, follows hotplug */
	if (ret)
		goto err_procs;
	ret = kgo_monitor_init();
	if (ret)
		goto err_monitor;
	kgo_debugfs_init();		/* optional: failures only logged */
	ret = kgo_dev_init();
	if (ret)
		goto err_dev;

	pr_info("loaded: %d Ps\n", kgo_sched.gomaxprocs);
	return 0;

err_dev:
	kgo_debugfs_exit();
	kgo_monitor_exit();
err_monitor:
	kgo_procs_exit();
err_procs:
	kgo_stack_exit();
err_stack:
	kgo_sched_exit();
err_sched:
	kgo_g_exit();
err_g:
	kgo_block_exit();
err_block:
	kgo_session_exit();
err_session:
err_m:
	return ret;
}

static void __exit kgo_exit_module(void)
{
	kgo_dev_exit();
	kgo_sched_drain();	/* before anything they use goes */
	kgo_debugfs_exit();
	kgo_monitor_exit();
	kgo_procs_exit();
	kgo_stack_exit();
	kgo_sched_exit();
	kgo_g_exit();
	kgo_block_exit();
	kgo_session_exit();
}

module_init(kgo_init);
module_exit(kgo_exit_module);

MODULE_LICENSE("GPL");
MODULE_VERSION(KGO_VERSION);
MODULE_DESCRIPTION("kgo: goroutines inside the Linux kernel");
MODULE_AUTHOR("The kgo authors");
