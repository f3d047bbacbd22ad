// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kgo: the misc character device userspace talks to.
 */

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "dev.h"
#include "ioctl.h"

static const struct file_operations kgo_dev_fops = {
	.owner		= THIS_MODULE,
	.open		= nonseekable_open,
	.unlocked_ioctl	= kgo_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= no_llseek,
};

static struct miscdevice kgo_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "kgo",
	.fops	= &kgo_dev_fops,
	/* Running work in the kernel on behalf of a caller is root's call. */
	.mode	= 0600,
};

int kgo_dev_init(void)
{
	return misc_register(&kgo_miscdev);
}

void kgo_dev_exit(void)
{
	misc_deregister(&kgo_miscdev);
}
