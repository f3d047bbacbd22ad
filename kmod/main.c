// SPDX-License-Identifier: GPL-2.0
/*
 * kgo: goroutines inside the Linux kernel. This file only orders module
 * init and exit; teardown runs in reverse.
 */

#include <linux/init.h>
#include <linux/module.h>

#include "dev.h"

static int __init kgo_init(void)
{
	int ret;

	ret = kgo_dev_init();
	if (ret)
		goto err_dev;

	pr_info("loaded\n");
	return 0;

err_dev:
	return ret;
}

static void __exit kgo_exit(void)
{
	kgo_dev_exit();
}

module_init(kgo_init);
module_exit(kgo_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kgo: goroutines inside the Linux kernel");
MODULE_AUTHOR("The kgo authors");
