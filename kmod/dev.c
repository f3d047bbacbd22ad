// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kgo: the misc character device userspace talks to. Each open is
 * a session (session.c); read(2) and poll(2) serve its completions.
 */

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/stat.h>

#include "dev.h"
#include "ioctl.h"
#include "ring.h"
#include "session.h"

/* Running work in the kernel on behalf of a caller is root's call. */
static ushort dev_mode = 0600;
module_param(dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode, "Mode of /dev/kgo: 0600 (default) up to 0666");

static int kgo_dev_open(struct inode *inode, struct file *file)
{
	struct kgo_session *s = kgo_session_create();

	if (IS_ERR(s))
		return PTR_ERR(s);
	file->private_data = s;
	return nonseekable_open(inode, file);
}

static int kgo_dev_release(struct inode *inode, struct file *file)
{
	kgo_session_close(file->private_data);
	return 0;
}

static ssize_t kgo_dev_read(struct file *file, char __user *buf, size_t count,
			    loff_t *ppos)
{
	return kgo_session_read(file->private_data, buf, count,
				file->f_flags & O_NONBLOCK);
}

static __poll_t kgo_dev_poll(struct file *file, poll_table *wait)
{
	return kgo_session_poll(file->private_data, file, wait);
}

/* The ring of KGO_IOC_RING_SETUP (ring.c). */
static int kgo_dev_mmap(struct file *file, struct vm_area_struct *vma)
{
	return kgo_ring_mmap(file->private_data, vma);
}

static const struct file_operations kgo_dev_fops = {
	.owner		= THIS_MODULE,
	.open		= kgo_dev_open,
	.release	= kgo_dev_release,
	.read		= kgo_dev_read,
	.poll		= kgo_dev_poll,
	.mmap		= kgo_dev_mmap,
	.unlocked_ioctl	= kgo_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice kgo_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "kgo",
	.fops	= &kgo_dev_fops,
};

int kgo_dev_check_params(void)
{
	/* Read and write for root always; others may be let in, no more. */
	if ((dev_mode & ~0666) || (dev_mode & 0600) != 0600) {
		pr_err("dev_mode=%#o: must be between 0600 and 0666\n", dev_mode);
		return -EINVAL;
	}
	return 0;
}

int kgo_dev_init(void)
{
	kgo_miscdev.mode = dev_mode;
	return misc_register(&kgo_miscdev);
}

void kgo_dev_exit(void)
{
	misc_deregister(&kgo_miscdev);
}
