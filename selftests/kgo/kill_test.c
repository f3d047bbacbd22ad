// SPDX-License-Identifier: GPL-2.0
/*
 * SIGKILL a process with 65536 long tasks in flight, then unload kgo.
 *
 * A child opens /dev/kgo and submits up to 65536 tasks ($KGO_KILL_TASKS
 * sets another number; make check's debug kernel takes fewer, and make
 * matrix runs it with all of them) that would keep
 * goroutines busy for seconds: SLEEP 10 s, SELECT with 10 ms gaps (10 s),
 * SPIN 1 s, BLOCK 10 s, YIELD a million times (one task in 32: each one
 * that started goes on for seconds, minutes under KASAN), and small
 * SPAWN trees.
 * The parent SIGKILLs it at once. Closing the fd (the process exiting)
 * must cancel the running tasks too, not only the unstarted ones, so
 * that they stop within milliseconds and let go of the module: the test
 * tries delete_module() every 50 ms and requires it to succeed within
 * 10 s; or, where 65536 goroutines take longer than that only to be
 * scheduled once and drop their cancelled job (the debug kernel, KASAN
 * under TCG), that none of them is still asleep or waiting in its task
 * at 10 s, and that from then on their number falls at every census
 * until kgo unloads. How fast they drain is the machine's business: on
 * the debug kernel beside a CPU hog, 15,000 took 75 s, and a bound in
 * seconds there only measured the host. A census that finds as many
 * goroutines as the last one is a stall, and a failure. It then loads
 * kgo back with the parameters it had and checks that a NOP runs. Three rounds: killed after submitting everything,
 * killed in the middle of a SUBMIT, and after everything again. Past
 * 10 s it says, from debugfs, what the goroutines still alive are
 * doing, keeps trying (so that kgo is back for the tests after it) and
 * stops after that round.
 *
 * It unloads the module the other selftests use: it runs after them and
 * before unload_test (the Makefile's order, which the VMs follow), and
 * always leaves kgo loaded with the parameters it found. The module file
 * is $KGO_MODULE (default /kgo/kgo.ko); without it the test skips before
 * unloading anything.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kgo.h>
#include "kgo_util.h"
#include "kgo_stress.h"
#include "kselftest_harness.h"

#define DEFAULT_MODULE	"/kgo/kgo.ko"
#define PARAMS_DIR	"/sys/module/kgo/parameters"
#define NTASKS		65536	/* unless $KGO_KILL_TASKS says fewer */
#define BATCH		4096
#define ROUNDS		3
#define RETRY_MS	50
#define UNLOAD_NS	(10 * NSEC)	/* the contract */
/*
 * Past the contract the queue of cancelled goroutines may still be
 * draining: it is counted this often, and must be shorter each time.
 */
#define CENSUS_EVERY_NS	(20 * NSEC)
/*
 * A last resort against a drain that shrinks by a few goroutines a
 * census and never ends, so that kgo is back for the tests after this
 * one; the harness's limit is above three rounds of it.
 */
#define UNLOAD_GIVEUP_NS (600 * NSEC)
/* Asleep in a task this long at the contract: the cancel did not reach it. */
#define STUCK_NS	(1 * NSEC)
#define DEBUGFS		"/sys/kernel/debug/kgo/"
/*
 * How long the child may go without a batch accepted before the test
 * calls it stuck. The whole submission takes 90 s and more under KASAN
 * on an emulated machine, which is no fault: progress is what counts.
 */
#define SUBMIT_STALL_NS	(120 * NSEC)
#define YIELDS		1000000ULL

static uint64_t ntasks = NTASKS;

FIXTURE(kill) {
	char module[256];
	char params[1024];
};

static bool module_loaded(void)
{
	struct stat st;

	return stat("/sys/module/kgo", &st) == 0;
}

/* "name=value ..." of every parameter kgo has now. */
static int read_params(char *buf, size_t len)
{
	DIR *d = opendir(PARAMS_DIR);
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return -1;
	buf[0] = '\0';
	while ((e = readdir(d))) {
		char path[512], val[128];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), PARAMS_DIR "/%s", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(val, sizeof(val), f)) {
			val[strcspn(val, "\n")] = '\0';
			n += snprintf(buf + n, n < len ? len - n : 0, "%s%s=%s",
				      n ? " " : "", e->d_name, val);
		}
		fclose(f);
	}
	closedir(d);
	return n < len ? 0 : -1;
}

FIXTURE_SETUP(kill)
{
	const char *path = getenv("KGO_MODULE") ?: DEFAULT_MODULE;

	snprintf(self->module, sizeof(self->module), "%s", path);
	/* The 6.1 harness runs the test after a SKIP in setup: the test skips. */
	if (access(path, R_OK))
		return;
	ASSERT_TRUE(module_loaded()) TH_LOG("kgo is not loaded");
	ASSERT_EQ(0, read_params(self->params, sizeof(self->params)));
}

FIXTURE_TEARDOWN(kill)
{
	/* Whatever happened, leave kgo loaded as it was. */
	if (self->params[0] && !module_loaded()) {
		int err = load_module(self->module, self->params);

		if (err)
			fprintf(stderr, "# reloading %s: %s\n", self->module, strerror(err));
	}
}

/*
 * What kgo's goroutines are doing, from debugfs (*@alive is N): "N goroutines: running
 * a, runnable b, syscall c, waiting d (sleep e, select f, ...); in a task
 * for over 1 s: k". Empty without debugfs. Holds the module while it
 * reads. Returns k, how many are still in a task, not cancelled: asleep
 * in the kernel (syscall) or waiting on anything but a WaitGroup (a SPAWN
 * node waits on one for children that are only queued, draining), and
 * that for over STUCK_NS. A goroutine of the draining queue passes
 * through these states for microseconds on its way out (it starts its
 * task, then sees the cancel), and a snapshot may catch one there; a task
 * that ignored a cancel sent 10 s earlier has been asleep for seconds.
 * -1 without debugfs.
 */
static long long census(char *out, size_t len, unsigned long long *alive)
{
	static const char *const st[] = { "running", "runnable", "syscall", "waiting" };
	static const char *const why[] = {
		"sleep", "select", "waitgroup", "chan receive", "chan send", "park", "mutex",
	};
	unsigned long long n = 0, nst[4] = { 0 }, nwhy[7] = { 0 }, stuck = 0;
	char line[256];
	size_t off;
	FILE *f = fopen(DEBUGFS "goroutines", "r");

	out[0] = '\0';
	*alive = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		const char *fn = strstr(line, "for_ns=");
		/*
		 * Not counted: waits that a queued partner ends, not a
		 * cancel: a SPAWN node's WaitGroup, and the second goroutine
		 * of a PINGPONG or SELECT task blocked on a channel until its
		 * partner, cancelled but still queued, returns and closes it.
		 */
		bool asleep = strstr(line, "status=syscall ") ||
			      (strstr(line, "status=waiting ") &&
			       !strstr(line, "waitreason=\"waitgroup\"") &&
			       !strstr(line, "waitreason=\"chan send\"") &&
			       !strstr(line, "waitreason=\"chan receive\""));

		n++;
		if (asleep && fn && strtoull(fn + 7, NULL, 10) > STUCK_NS)
			stuck++;
		for (int i = 0; i < 4; i++) {
			char key[32];

			snprintf(key, sizeof(key), "status=%s ", st[i]);
			if (strstr(line, key))
				nst[i]++;
		}
		for (int i = 0; i < 7; i++) {
			char key[48];

			snprintf(key, sizeof(key), "waitreason=\"%s\"", why[i]);
			if (strstr(line, "status=waiting") && strstr(line, key))
				nwhy[i]++;
		}
	}
	fclose(f);
	*alive = n;
	off = snprintf(out, len, "%llu goroutines: running %llu, runnable %llu, syscall %llu, waiting %llu (",
		       n, nst[0], nst[1], nst[2], nst[3]);
	for (int i = 0; i < 7 && off < len; i++)
		off += snprintf(out + off, len - off, "%s%s %llu", i ? ", " : "", why[i], nwhy[i]);
	if (off < len)
		snprintf(out + off, len - off, "); in a task for over %.0f s: %llu",
			 STUCK_NS / 1e9, stuck);
	return stuck;
}

/* The mix: 32 slots, YIELD in one (its goroutines go on for long). */
static struct kgo_task long_task(uint64_t i)
{
	static const uint8_t mix[32] = {
		0, 1, 2, 3, 5, 0, 1, 3, 5, 0, 1, 2, 3, 5, 0, 1,
		4, 0, 1, 3, 5, 0, 2, 3, 5, 0, 1, 3, 5, 0, 2, 5,
	};
	struct kgo_task t = { .tag = i };

	switch (mix[i % 32]) {
	case 0:
		t.kind = KGO_TASK_SLEEP;
		t.args[0] = KGO_SLEEP_MAX_NS;			/* 10 s */
		break;
	case 1:
		t.kind = KGO_TASK_SELECT;
		t.args[0] = 1000;
		t.args[1] = KGO_SELECT_GAP_MAX_NS;		/* 10 ms: 10 s */
		break;
	case 2:
		t.kind = KGO_TASK_SPIN;
		t.args[0] = KGO_SPIN_MAX_NS;			/* 1 s */
		break;
	case 3:
		t.kind = KGO_TASK_BLOCK;
		t.args[0] = KGO_BLOCK_MAX_US;			/* 10 s */
		break;
	case 4:
		t.kind = KGO_TASK_YIELD;
		t.args[0] = YIELDS;
		break;
	default:
		t.kind = KGO_TASK_SPAWN;
		t.args[0] = 2;
		t.args[1] = 3;					/* 15 nodes */
	}
	return t;
}

/* What the child tells the parent after each batch accepted. */
struct progress {
	uint64_t accepted;
	uint64_t done;		/* the parent may kill it now */
};

static void tell(int wfd, uint64_t accepted, bool done)
{
	struct progress pr = { accepted, done };

	/* Smaller than PIPE_BUF: one write, whole. */
	if (write(wfd, &pr, sizeof(pr)) != sizeof(pr))
		_exit(2);
}

/*
 * The child: submits up to NTASKS, telling @wfd how many it got after
 * each batch; done after the first batch if @early, else at the end.
 * Then waits to be killed.
 */
static void child(int wfd, bool early)
{
	static struct kgo_task t[BATCH];
	uint64_t accepted = 0, stuck = 0;
	int fd = open(KGO_DEVICE_PATH, O_RDWR);

	if (fd < 0)
		_exit(1);
	while (accepted < ntasks) {
		int n;

		for (unsigned int i = 0; i < BATCH; i++)
			t[i] = long_task(accepted + i);
		n = submit(fd, t, ntasks - accepted < BATCH ? ntasks - accepted : BATCH);
		if (n > 0) {
			accepted += n;
			stuck = 0;
			tell(wfd, accepted, early);
			continue;
		}
		/* The memory budget or a cap: that many is what fits. */
		if (errno != ENOMEM && errno != EAGAIN)
			_exit(3);
		if (++stuck > 20)
			break;
		usleep(50000);
	}
	tell(wfd, accepted, true);
	for (;;)
		pause();
}

TEST_F_TIMEOUT(kill, kill_then_rmmod, 2400)
{
	const char *env = getenv("KGO_KILL_TASKS");

	/* Without a module to load back, unloading would break what follows. */
	if (!self->params[0])
		SKIP(return, "%s: %s (set KGO_MODULE)", self->module, strerror(ENOENT));
	if (env && *env)
		ntasks = strtoull(env, NULL, 0);
	ASSERT_TRUE(ntasks > 0 && ntasks <= NTASKS)
		TH_LOG("KGO_KILL_TASKS=%s: 1 to %u", env, NTASKS);
	for (int round = 0; round < ROUNDS; round++) {
		bool early = round == 1;
		uint64_t accepted = 0, t0, t_kill, t_exit, t_gone = 0, next_census;
		long long in_task = 0;	/* goroutines still in a task at the contract */
		unsigned long long alive, last = ~0ULL;	/* at this census and the one before */
		bool stalled = false;
		char info[512];
		unsigned int tries = 0;
		struct pollfd p;
		int pfd[2], status, ret = -1, err = 0;
		pid_t pid;

		ASSERT_EQ(0, pipe(pfd));
		t0 = now_ns();
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close(pfd[0]);
			child(pfd[1], early);
		}
		close(pfd[1]);
		p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
		for (struct progress pr = {};;) {
			if (poll(&p, 1, SUBMIT_STALL_NS / 1000000) != 1 ||
			    read(pfd[0], &pr, sizeof(pr)) != sizeof(pr)) {
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
				ASSERT_TRUE(false)
					TH_LOG("round %d: the child got no batch in for %llu s, %llu tasks in (status %#x)",
					       round, SUBMIT_STALL_NS / NSEC,
					       (unsigned long long)accepted, status);
			}
			accepted = pr.accepted;
			if (pr.done)
				break;
		}
		/* Right away. */
		t_kill = now_ns();
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		t_exit = now_ns();
		close(pfd[0]);
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			TH_LOG("round %d: child status %#x", round, status);
		}

		/* Unload: no fd of kgo is open anywhere now. */
		next_census = t_exit + UNLOAD_NS;
		for (;;) {
			tries++;
			ret = syscall(SYS_delete_module, "kgo", 0);
			err = errno;
			if (!ret) {
				t_gone = now_ns();
				break;
			}
			if ((err != EAGAIN && err != EBUSY) || now_ns() - t_exit > UNLOAD_GIVEUP_NS)
				break;
			if (now_ns() > next_census) {
				/* Over the contract: say what still holds kgo. */
				long long busy = census(info, sizeof(info), &alive);

				if (next_census == t_exit + UNLOAD_NS)
					in_task = busy;
				TH_LOG("round %d, %.0f s after the exit: %s", round,
				       (now_ns() - t_exit) / 1e9, info[0] ? info : "(no debugfs)");
				/* Draining, however slowly, or stuck. */
				if (busy >= 0 && alive >= last)
					stalled = true;
				last = alive;
				next_census += CENSUS_EVERY_NS;
			}
			usleep(RETRY_MS * 1000);
		}
		TH_LOG("round %d: %llu tasks accepted in %.2f s%s; killed, exited after %.3f s; %s after %.3f s (%u delete_module calls)",
		       round, (unsigned long long)accepted, (t_kill - t0) / 1e9,
		       early ? " (killed during SUBMIT)" : "", (t_exit - t_kill) / 1e9,
		       ret ? "still loaded" : "unloaded",
		       ((ret ? now_ns() : t_gone) - t_exit) / 1e9, tries);
		ASSERT_LT(0, accepted);
		ASSERT_EQ(0, ret) TH_LOG("delete_module: %s", strerror(err));
		EXPECT_FALSE(module_loaded());

		/* Back, as it was. */
		err = load_module(self->module, self->params);
		ASSERT_EQ(0, err) TH_LOG("finit_module %s %s: %s", self->module, self->params,
					 strerror(err));
		err = kgo_nop_works(30 * NSEC);
		ASSERT_EQ(0, err) TH_LOG("a NOP after reloading: %s", strerror(err));

		/*
		 * The contract, checked last so that kgo is back whatever it
		 * says: gone within 10 s, or by then every task cancelled
		 * and only their goroutines' queue left to drain, shorter at
		 * every census.
		 */
		if (t_gone - t_exit > UNLOAD_NS) {
			EXPECT_EQ(0, in_task) {
				TH_LOG("round %d: %lld goroutines still in their tasks %.0f s after the process died",
				       round, in_task, UNLOAD_NS / 1e9);
			}
			EXPECT_FALSE(stalled) {
				TH_LOG("round %d: the goroutines stopped draining: a census found as many as the one %.0f s before",
				       round, CENSUS_EVERY_NS / 1e9);
			}
			if (in_task || stalled)
				break;	/* the next rounds would only say it again, slowly */
		}
	}
	{
		char now[1024];

		ASSERT_EQ(0, read_params(now, sizeof(now)));
		EXPECT_STREQ(self->params, now);
	}
}

TEST_HARNESS_MAIN
