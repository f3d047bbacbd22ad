// SPDX-License-Identifier: GPL-2.0
/*
 * kgo_crc32c: the CRC32C of a file, computed three ways and timed.
 *
 *   # echo /tmp/data 64K >/sys/kernel/debug/kgo_crc32c/control
 *   # cat /sys/kernel/debug/kgo_crc32c/result
 *   kgo crc=0x1a2b3c4d ns=812345 bytes=1048576 chunks=16
 *   thread crc=0x1a2b3c4d ns=1523456 bytes=1048576 chunks=16
 *   workqueue crc=0x1a2b3c4d ns=901234 bytes=1048576 chunks=16
 *
 * What it shows. Work that mixes a call that may sleep (kernel_read()
 * of the file) with CPU work on what it read (the checksum), cut into
 * chunks and fanned out to goroutines joined by a kgo WaitGroup: how
 * an offload to kgo looks, next to the two ways a module would do it
 * today, one thread in a loop and a workqueue item per chunk. The
 * write to control runs all three on the same open file and fails
 * unless they agree; result has one line per method.
 *
 * Why each choice:
 *
 *  - Chunks are combined, not chained. A CRC is linear, so the CRC of
 *    A then B is CRC(A) shifted over B's length, xor CRC(B) started
 *    from 0 (crc_shift() below: the kernel's own combine helper is
 *    gone since 6.16). Each chunk is checksummed from seed 0, in any
 *    order, on any CPU, and the writer folds the results in file
 *    order. The thread checksums straight through, seed ~0 to the end,
 *    so it also checks the combining.
 *  - crc32c() rather than a private table: it takes the best
 *    implementation the kernel has (the SSE4.2 instruction where there
 *    is one). Before 6.15 it is libcrc32c's, a module on Debian's
 *    kernels that modprobe loads with its crc32c provider; from 6.15 it
 *    is the built-in library's (kmod/compat.h includes the header).
 *  - kgo_block_begin()/kgo_block_end() bracket the allocation and the
 *    read, the part that may sleep (page cache misses, reclaim): the
 *    goroutine's P goes to another M at once, so other chunks are
 *    checksummed meanwhile. Without the bracket kgo would notice the
 *    sleep anyway, after handoff_us. The checksum stays outside it:
 *    CPU work belongs on a P, and the Ps bound it to GOMAXPROCS CPUs.
 *    Nothing is held across either call (include/kgo.h's rules).
 *  - In flight at once: at most max_inflight chunks per method, each
 *    with its own buffer of one chunk, freed when the chunk is done.
 *    For kgo the bound is Go's counting semaphore, a buffered channel
 *    of max_inflight empty elements: the writer sends one before each
 *    kgo_go() and blocks while it is full, the goroutine receives one
 *    as it ends. The workqueue gets the same bound from its
 *    max_active. The file size is bounded by max_file_mb, and with it
 *    the array of chunks.
 *  - One open file, read at explicit offsets (kernel_read()'s pos, as
 *    pread() does): concurrent readers need no lock. The methods run
 *    one after the other, kgo first; on a disk file the first pays for
 *    the cache misses, so time a file that is already cached (tmpfs).
 *  - Errors: every goroutine and work item runs to its join even when
 *    another failed, so nothing is freed under one; then the first
 *    failed chunk's errno goes back to the writer, and result is
 *    emptied.
 *
 * Unloading: kgo takes no reference on the module whose function a
 * goroutine runs. So each goroutine is started with kgo_go_wg(): kgo
 * itself does the kgo_wg_done() once kgo_chunk() has returned into
 * kgo's code, and when kgo_wg_wait() returns nothing of this module is
 * left to run (flush_work()'s promise); the exit function may then go.
 */

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include <kgo.h>
#include "compat.h"

static unsigned int max_file_mb = 256;
module_param(max_file_mb, uint, 0644);
MODULE_PARM_DESC(max_file_mb, "Largest file checksummed, in MiB (default 256)");

static unsigned int chunk_kb = 64;
module_param(chunk_kb, uint, 0644);
MODULE_PARM_DESC(chunk_kb, "Chunk size when the write names none, in KiB (default 64)");

static unsigned int max_inflight = 32;
module_param(max_inflight, uint, 0444);
MODULE_PARM_DESC(max_inflight, "Chunks in flight at once per method, 1 to 512 (default 32)");

#define CHUNK_MIN	SZ_4K
#define CHUNK_MAX	SZ_16M

/* One chunk of the file, as a goroutine or a work item checksums it. */
struct crc_chunk {
	struct crc_run *run;
	loff_t off;
	size_t len;
	u32 crc;			/* crc32c(0, chunk), for combining */
	int err;
	struct work_struct work;	/* the workqueue method's */
};

/* One write to control: the file, its chunks, each method's join. */
struct crc_run {
	struct file *file;
	loff_t size;
	unsigned int nchunks;
	struct crc_chunk *chunks;
	struct kgo_waitgroup wg;	/* kgo: goroutines not done */
	struct kgo_chan *slots;		/* kgo: one element per chunk in flight */
	atomic_t pending;		/* workqueue: items not done */
	struct completion done;		/* workqueue: pending reached 0 */
};

static DEFINE_MUTEX(crc_lock);		/* one run at a time; guards results */
static char results[512];		/* result's text, empty after a failure */
static struct workqueue_struct *crc_wq;
static struct dentry *crc_dir;

/* Reads @len bytes at @off. May sleep. A file that shrank is -EIO. */
static int read_full(struct file *file, void *buf, size_t len, loff_t off)
{
	while (len) {
		ssize_t n = kernel_read(file, buf, len, &off);

		if (n < 0)
			return n;
		if (!n)
			return -EIO;
		buf += n;
		len -= n;
	}
	return 0;
}

/*
 * CRC32C's polynomial, bit-reflected as the kernel's crc32c() computes
 * it: bit 31 holds the coefficient of x^0, bit 0 that of x^31.
 */
#define CRC32C_POLY	0x82f63b78U

/* a * b modulo the polynomial, both reflected. */
static u32 crc_mulmod(u32 a, u32 b)
{
	u32 p = 0;
	int i;

	for (i = 0; i < 32; i++) {
		if (a & 0x80000000U)	/* a's next coefficient, from x^0 up */
			p ^= b;
		a <<= 1;
		b = (b >> 1) ^ (b & 1 ? CRC32C_POLY : 0);	/* b *= x */
	}
	return p;
}

/*
 * @crc as if @len zero bytes followed what it covers: crc * x^(8 len),
 * by squaring x^8 along the bits of @len (64 products at most).
 */
static u32 crc_shift(u32 crc, size_t len)
{
	u32 pow = 0x00800000U;	/* x^8 */

	for (; len; len >>= 1) {
		if (len & 1)
			crc = crc_mulmod(crc, pow);
		pow = crc_mulmod(pow, pow);
	}
	return crc;
}

/* The CRC32C of the file from the chunks' CRCs, in file order. */
static int crc_combine(struct crc_run *r, u32 *crc)
{
	u32 acc = ~0U;
	unsigned int i;

	for (i = 0; i < r->nchunks; i++) {
		if (r->chunks[i].err)
			return r->chunks[i].err;
		acc = crc_shift(acc, r->chunks[i].len) ^ r->chunks[i].crc;
	}
	*crc = ~acc;
	return 0;
}

/* (a) kgo: a goroutine per chunk. */
static void kgo_chunk(void *arg)
{
	struct crc_chunk *c = arg;
	struct crc_run *r = c->run;
	void *buf;

	kgo_block_begin();	/* may sleep: our P runs other chunks meanwhile */
	buf = kvmalloc(c->len, GFP_KERNEL);
	c->err = buf ? read_full(r->file, buf, c->len, c->off) : -ENOMEM;
	kgo_block_end();
	if (!c->err)
		c->crc = crc32c(0, buf, c->len);
	kvfree(buf);
	/* Free the slot the writer took for us: there is one to take. */
	kgo_chan_recv(r->slots, NULL, NULL, KGO_NOWAIT);
	/* kgo_go_wg(): kgo is done on r->wg once this has returned. */
}

static int crc_kgo(struct crc_run *r, u32 *crc)
{
	unsigned int i;
	int err = 0;
	s64 id;

	r->slots = kgo_chan_create(0, max_inflight, GFP_KERNEL);
	if (IS_ERR(r->slots))
		return PTR_ERR(r->slots);
	kgo_wg_init(&r->wg);
	for (i = 0; i < r->nchunks; i++) {
		/* Take a slot: waits while max_inflight chunks are in flight. */
		err = kgo_chan_send(r->slots, NULL, KGO_FOREVER);
		if (err)
			break;
		id = kgo_go_wg(&r->wg, kgo_chunk, &r->chunks[i], GFP_KERNEL);
		if (id < 0) {	/* -ENOMEM: kgo's memory budget */
			kgo_chan_recv(r->slots, NULL, NULL, KGO_NOWAIT);
			err = id;
			break;
		}
	}
	kgo_wg_wait(&r->wg);	/* the writer sleeps; no goroutine is left */
	kgo_chan_destroy(r->slots);
	return err ?: crc_combine(r, crc);
}

/* (b) One thread, the writer: chunk after chunk, one running CRC. */
static int crc_thread(struct crc_run *r, u32 *crc)
{
	size_t chunk = r->nchunks ? r->chunks[0].len : 0;
	u32 acc = ~0U;
	unsigned int i;
	void *buf;
	int err = 0;

	buf = kvmalloc(max_t(size_t, chunk, 1), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < r->nchunks && !err; i++) {
		struct crc_chunk *c = &r->chunks[i];

		err = read_full(r->file, buf, c->len, c->off);
		if (!err)
			acc = crc32c(acc, buf, c->len);
		cond_resched();
	}
	kvfree(buf);
	*crc = ~acc;
	return err;
}

/* (c) A workqueue: an item per chunk, at most max_inflight running. */
static void wq_chunk(struct work_struct *work)
{
	struct crc_chunk *c = container_of(work, struct crc_chunk, work);
	struct crc_run *r = c->run;
	void *buf;

	buf = kvmalloc(c->len, GFP_KERNEL);
	c->err = buf ? read_full(r->file, buf, c->len, c->off) : -ENOMEM;
	if (!c->err)
		c->crc = crc32c(0, buf, c->len);
	kvfree(buf);
	if (atomic_dec_and_test(&r->pending))
		complete(&r->done);
}

static int crc_workqueue(struct crc_run *r, u32 *crc)
{
	unsigned int i;

	atomic_set(&r->pending, r->nchunks);
	init_completion(&r->done);
	for (i = 0; i < r->nchunks; i++) {
		INIT_WORK(&r->chunks[i].work, wq_chunk);
		queue_work(crc_wq, &r->chunks[i].work);
	}
	if (r->nchunks)
		wait_for_completion(&r->done);
	return crc_combine(r, crc);
}

static const struct {
	const char *name;
	int (*fn)(struct crc_run *r, u32 *crc);
} methods[] = {
	{ "kgo", crc_kgo },
	{ "thread", crc_thread },
	{ "workqueue", crc_workqueue },
};

/* Opens @path, checks it, cuts it in chunks of @chunk bytes. */
static int crc_run_init(struct crc_run *r, const char *path, size_t chunk)
{
	struct inode *inode;
	unsigned int i;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	r->file = filp_open(path, O_RDONLY | O_NONBLOCK | O_LARGEFILE, 0);
	if (IS_ERR(r->file))
		return PTR_ERR(r->file);
	inode = file_inode(r->file);
	if (!S_ISREG(inode->i_mode))
		return S_ISDIR(inode->i_mode) ? -EISDIR : -EINVAL;
	r->size = i_size_read(inode);
	if (r->size > (loff_t)READ_ONCE(max_file_mb) * SZ_1M)
		return -EFBIG;
	r->nchunks = DIV_ROUND_UP_ULL(r->size, chunk);
	r->chunks = kvcalloc(r->nchunks, sizeof(*r->chunks), GFP_KERNEL);
	if (!r->chunks)
		return -ENOMEM;
	for (i = 0; i < r->nchunks; i++) {
		r->chunks[i].run = r;
		r->chunks[i].off = (loff_t)i * chunk;
		r->chunks[i].len = min_t(loff_t, chunk, r->size - r->chunks[i].off);
	}
	return 0;
}

/* Runs every method on @path into results. Called with crc_lock held. */
static int crc_run_file(const char *path, size_t chunk)
{
	u32 crc[ARRAY_SIZE(methods)];
	u64 ns[ARRAY_SIZE(methods)];
	struct crc_run *r;
	int err, i, len = 0;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	err = crc_run_init(r, path, chunk);
	for (i = 0; i < ARRAY_SIZE(methods) && !err; i++) {
		ns[i] = ktime_get_ns();
		err = methods[i].fn(r, &crc[i]);
		ns[i] = ktime_get_ns() - ns[i];
	}
	for (i = 0; i < ARRAY_SIZE(methods) && !err; i++)
		len += scnprintf(results + len, sizeof(results) - len,
				 "%s crc=0x%08x ns=%llu bytes=%lld chunks=%u\n",
				 methods[i].name, crc[i], ns[i], r->size, r->nchunks);
	if (!err && (crc[1] != crc[0] || crc[2] != crc[0])) {
		pr_err("%s: the methods disagree\n", path);
		err = -EIO;	/* results stay, to be looked at */
	}
	if (!IS_ERR_OR_NULL(r->file))
		filp_close(r->file, NULL);
	kvfree(r->chunks);
	kfree(r);
	return err;
}

/* "PATH [CHUNK]": CHUNK in bytes, K and M suffixes allowed. */
static ssize_t control_write(struct file *f, const char __user *ubuf, size_t len,
			     loff_t *ppos)
{
	size_t chunk = (size_t)READ_ONCE(chunk_kb) * SZ_1K;
	char *buf, *path, *arg, *end;
	bool bad = false;
	int err;

	if (len > PATH_MAX + 32)
		return -ENAMETOOLONG;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	arg = strim(buf);
	path = strsep(&arg, " \t");
	if (arg) {
		chunk = memparse(skip_spaces(arg), &end);
		bad = *end;
	}
	bad |= !*path || chunk < CHUNK_MIN || chunk > CHUNK_MAX;
	err = mutex_lock_interruptible(&crc_lock);
	if (!err) {
		results[0] = '\0';	/* a request that fails leaves none */
		err = bad ? -EINVAL : crc_run_file(path, chunk);
		mutex_unlock(&crc_lock);
	}
	kfree(buf);
	return err ?: len;
}

static const struct file_operations control_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = control_write,
	.llseek = noop_llseek,
};

static int result_show(struct seq_file *m, void *v)
{
	int err = mutex_lock_interruptible(&crc_lock);

	if (err)
		return err;
	seq_puts(m, results);
	mutex_unlock(&crc_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(result);

static int __init kgo_crc32c_init(void)
{
	if (!max_inflight || max_inflight > WQ_MAX_ACTIVE)
		return -EINVAL;
	crc_wq = alloc_workqueue("kgo_crc32c", WQ_UNBOUND, max_inflight);
	if (!crc_wq)
		return -ENOMEM;
	/* Without debugfs this loads but does nothing. */
	crc_dir = debugfs_create_dir("kgo_crc32c", NULL);
	debugfs_create_file("control", 0200, crc_dir, NULL, &control_fops);
	debugfs_create_file("result", 0444, crc_dir, NULL, &result_fops);
	return 0;
}

static void __exit kgo_crc32c_exit(void)
{
	debugfs_remove_recursive(crc_dir);	/* waits for writers in flight */
	destroy_workqueue(crc_wq);
}

module_init(kgo_crc32c_init);
module_exit(kgo_crc32c_exit);
MODULE_DESCRIPTION("kgo sample: CRC32C of a file by goroutines, a thread and a workqueue");
MODULE_LICENSE("GPL");
KGO_MODULE_IMPORT();
