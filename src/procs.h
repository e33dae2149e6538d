/* Processes from /proc: which are Go programs, and the binary each runs.
 *
 * A process's binary is read through /proc/PID/exe, which reaches it even
 * inside a container's mount namespace or after it was deleted on disk. */
#ifndef RETOP_PROCS_H
#define RETOP_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

struct proc_info {
	int pid;
	uid_t uid;
	char user[32];
	char comm[64];
	char cmdline[256];
	char exe[512];	      /* its binary, for display: the readlink of
			       * /proc/PID/exe, or /proc/PID/root/PATH when
			       * only that names it here (a container's) */
	char go_version[32];  /* "" when not Go */
	bool stripped;	      /* no .symtab */
	bool has_dwarf;
	bool in_container;    /* its root or its PID namespace differs from ours */
	int ns_pid;	      /* its PID in its own PID namespace; 0 when that is ours */
	/* For the picker's CPU and MEM columns: CPU% is the change of
	 * cpu_ticks between two scans over the change of sampled_ns. */
	unsigned long long cpu_ticks; /* utime + stime, in clock ticks */
	unsigned long long rss_bytes;
	unsigned long long sampled_ns; /* CLOCK_MONOTONIC */
};

bool procs_alive(int pid);
/* The number of a "name:\tvalue" line of a /proc file (status, fdinfo),
 * read in one go with no stdio; 0: not there. */
uint64_t procs_field(const char *path, const char *name);
/* CPU time of every thread of pid so far, exited ones too, in ns (its
 * process CPU clock): 0 when gone. */
uint64_t procs_cpu_ns(int pid);
/* "/proc/PID/exe" into buf after checking the process exists and is
 * readable; one clear message in err otherwise. */
int procs_exe_path(int pid, char *buf, size_t len, char *err);
/* comm, cmdline, user, exe link of one process (no ELF work). */
int procs_describe(int pid, struct proc_info *out);
/* PIDs whose /proc/PID/exe is the same file (device and inode) as path. */
size_t procs_running(const char *path, int *pids, size_t max);
/* The same for the file (dev, ino), which needs no path: one reached through
 * /proc/PID/root (a container's) has none once that process is gone. */
size_t procs_running_file(uint64_t dev, uint64_t ino, int *pids, size_t max);
/* Rewrite an index error about /proc/PID/exe as one about the process. */
/* ret is the index's error: -ENODATA (no Go function table) or -ENOEXEC. */
void procs_explain_not_go(int pid, int ret, char *err);
/* CPU time and resident memory of pid into out (0 when unreadable). */
void procs_usage(int pid, struct proc_info *out);
/* The address at which pid maps byte file_off of the file (dev, ino): 0,
 * or -ENOENT when it does not map it. */
int procs_map_addr(int pid, uint64_t dev, uint64_t ino, uint64_t file_off, uint64_t *addr);
/* Whether pid itself holds a TCP socket listening on port of the loopback
 * (or any) address, in its own network namespace: 1 yes, 0 no, -errno when
 * that cannot be read. */
int procs_listens_on(int pid, unsigned port);
/* Every Go process (the picker); *out is malloc'd. */
int procs_scan_go(struct proc_info **out, size_t *n);

#endif
