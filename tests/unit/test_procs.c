/* Unit tests for procs_cpu_ns: another process's CPU time, against that
 * process's own clock, threads that exited included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "procs.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spin until the calling thread has used ns of CPU. */
static void spin(uint64_t ns)
{
	uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	volatile uint64_t x = 0;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0 < ns)
		x++;
}

static void *spin_thread(void *arg)
{
	(void)arg;
	spin(150000000ull);
	return NULL;
}

/* The child: a thread spins 150 ms and exits, the main thread spins
 * 100 ms, then the child reports its own process clock and waits. */
static pid_t start_child(int *rfd)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pthread_t t;
		close(p[0]);
		if (pthread_create(&t, NULL, spin_thread, NULL) != 0)
			_exit(1);
		pthread_join(t, NULL);
		spin(100000000ull);
		uint64_t own = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		if (write(p[1], &own, sizeof(own)) != (ssize_t)sizeof(own))
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	*rfd = p[0];
	return pid;
}

static void test_cpu_of_another_process(void **state)
{
	(void)state;
	int rfd;
	uint64_t own = 0;
	pid_t pid = start_child(&rfd);

	assert_int_equal(read(rfd, &own, sizeof(own)), (ssize_t)sizeof(own));
	close(rfd);
	uint64_t seen = procs_cpu_ns(pid);
	/* The child stands in pause(): its clock no longer moves but for
	 * the few microseconds between its read and the pause.  The exited
	 * thread's 150 ms are in it (a walk of the live threads had them
	 * not). */
	assert_true(own >= 250000000ull);
	assert_true(seen >= own);
	assert_true(seen - own < 20000000ull);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* Gone (reaped): no figure. */
	assert_int_equal(procs_cpu_ns(pid), 0);
}

static void test_no_process(void **state)
{
	(void)state;
	assert_int_equal(procs_cpu_ns(0), 0);
	assert_int_equal(procs_cpu_ns(-1), 0);
	/* Past the kernel's pid_max (4,194,304 at most). */
	assert_int_equal(procs_cpu_ns(4194305 * 2), 0);
}

static void test_own_process(void **state)
{
	(void)state;
	spin(20000000ull);
	uint64_t a = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	uint64_t seen = procs_cpu_ns(getpid());
	uint64_t b = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

	assert_true(seen >= a && seen <= b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpu_of_another_process),
	    cmocka_unit_test(test_no_process),
	    cmocka_unit_test(test_own_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
