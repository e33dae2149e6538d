#include "procs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "elf_image.h"
#include "log.h"

/* The task flag of a process being torn down (include/linux/sched.h). */
#define PF_EXITING 0x00000004

static void read_small_file(const char *path, char *buf, size_t len, bool nul_to_space);

/* Alive means running code: a zombie still has /proc/PID but no memory,
 * so nothing of it can be traced any more. */
bool procs_alive(int pid)
{
	char path[64], buf[512];
	const char *paren;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	read_small_file(path, buf, sizeof(buf), false);
	if (!buf[0])
		return false;
	paren = strrchr(buf, ')');
	if (!paren || paren[1] != ' ' || paren[2] == 'Z' || paren[2] == 'X')
		return false;
	/* Killed but not yet a zombie: the kernel is tearing it down (its
	 * memory and /proc/PID/exe already gone), still in state R or D.
	 * flags is the 9th field, the 6th after the state. */
	const char *p = paren + 2;
	for (int i = 0; i < 6 && p; i++) {
		p = strchr(p, ' ');
		p = p ? p + 1 : NULL;
	}
	return !p || !(strtoul(p, NULL, 10) & PF_EXITING);
}

int procs_exe_path(int pid, char *buf, size_t len, char *err)
{
	char link[512];

	if (!procs_alive(pid))
		return err_set(err, ESRCH, "no such process: PID %d (is it still running?)", pid);
	snprintf(buf, len, "/proc/%d/exe", pid);
	/* AT_EACCESS: capabilities count (access() ignores them for non-root). */
	if (faccessat(AT_FDCWD, buf, R_OK, AT_EACCESS) != 0) {
		int e = errno;
		if ((e == EACCES || e == EPERM) && geteuid() != 0)
			return err_set(err, e, "cannot read %s: %s (run retop as root)", buf, strerror(e));
		if (e == EACCES || e == EPERM)
			return err_set(err, e, "cannot read %s: %s (a security module or a PID namespace hides it)",
				       buf, strerror(e));
		if (readlink(buf, link, sizeof(link)) < 0)
			return err_set(err, e, "PID %d has no executable (kernel thread or exiting): %s",
				       pid, strerror(e));
		return err_set(err, e, "cannot read %s: %s", buf, strerror(e));
	}
	return 0;
}

/* Memory figures read it at every refresh: one read, no stdio. */
uint64_t procs_field(const char *path, const char *name)
{
	char buf[2048];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	size_t len = strlen(name);
	for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, len) == 0 && p[len] == ':')
			return strtoull(p + len + 1, NULL, 10);
	return 0;
}

static void read_small_file(const char *path, char *buf, size_t len, bool nul_to_space)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0'))
		buf[--n] = '\0';
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == '\0' && nul_to_space)
			buf[i] = ' ';
		else if ((unsigned char)buf[i] < 0x20)
			buf[i] = '?'; /* never print a control character */
	}
}

void procs_usage(int pid, struct proc_info *out)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st, pages;
	struct timespec ts;
	FILE *f;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	out->sampled_ns = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
	out->cpu_ticks = out->rss_bytes = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((f = fopen(path, "re"))) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
		/* comm may hold spaces and parentheses: fields start after the
		 * last ')'; utime and stime are fields 14 and 15. */
		if ((p = strrchr(buf, ')')) &&
		    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2)
			out->cpu_ticks = ut + st;
	}
	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	if ((f = fopen(path, "re"))) {
		if (fscanf(f, "%*u %llu", &pages) == 1)
			out->rss_bytes = pages * (unsigned long long)sysconf(_SC_PAGESIZE);
		fclose(f);
	}
}

/* Its PID in its own PID namespace, the last of the NSpid line of its
 * status (one PID per namespace, ours first): 0 when it is in ours, or the
 * kernel has no such line (before Linux 4.1). */
static int procs_ns_pid(int pid)
{
	char path[64], line[256];
	int ns_pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p = line + 6;
		int n = 0, v, used;
		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		while (sscanf(p, "%d%n", &v, &used) == 1) {
			ns_pid = v;
			p += used;
			n++;
		}
		if (n < 2)
			ns_pid = 0;
		break;
	}
	fclose(f);
	return ns_pid;
}

static bool same_file(const char *path, const struct stat *want)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_dev == want->st_dev && st.st_ino == want->st_ino;
}

/* The link /proc/PID/exe names the binary as the process's own mount
 * namespace sees it: for a process in a container that path is, here,
 * another file or none. Then the binary is named through the process's
 * root, /proc/PID/root/PATH, which reaches it from here (it works for -x)
 * while the process lives; when neither names the binary, the link stays. */
static void procs_reachable_exe(struct proc_info *out)
{
	char path[64], alt[sizeof(out->exe)];
	struct stat exe;

	snprintf(path, sizeof(path), "/proc/%d/exe", out->pid);
	if (out->exe[0] != '/' || stat(path, &exe) != 0 || same_file(out->exe, &exe))
		return;
	if ((size_t)snprintf(alt, sizeof(alt), "/proc/%d/root%s", out->pid, out->exe) <
		sizeof(alt) &&
	    same_file(alt, &exe))
		memcpy(out->exe, alt, sizeof(alt));
}

int procs_describe(int pid, struct proc_info *out)
{
	char path[64];
	struct stat st, self_root, root;
	struct passwd *pw;
	ssize_t n;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st) != 0)
		return -errno;
	out->uid = st.st_uid;
	pw = getpwuid(st.st_uid);
	if (pw)
		snprintf(out->user, sizeof(out->user), "%s", pw->pw_name);
	else
		snprintf(out->user, sizeof(out->user), "%u", (unsigned)st.st_uid);
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	read_small_file(path, out->comm, sizeof(out->comm), false);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	read_small_file(path, out->cmdline, sizeof(out->cmdline), true);
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, out->exe, sizeof(out->exe) - 1);
	out->exe[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	if (stat("/proc/self/root", &self_root) == 0 && stat(path, &root) == 0)
		out->in_container = self_root.st_ino != root.st_ino || self_root.st_dev != root.st_dev;
	out->ns_pid = procs_ns_pid(pid);
	out->in_container = out->in_container || out->ns_pid;
	if (out->exe[0])
		procs_reachable_exe(out);
	procs_usage(pid, out);
	return 0;
}

static bool is_pid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

size_t procs_running_file(uint64_t dev, uint64_t ino, int *pids, size_t max)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	size_t n = 0;

	if (!(d = opendir("/proc")))
		return 0;
	while ((de = readdir(d)) && n < max) {
		char exe[300];
		if (!is_pid_name(de->d_name))
			continue;
		snprintf(exe, sizeof(exe), "/proc/%s/exe", de->d_name);
		if (stat(exe, &st) == 0 && (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino)
			pids[n++] = atoi(de->d_name);
	}
	closedir(d);
	return n;
}

size_t procs_running(const char *path, int *pids, size_t max)
{
	struct stat want;

	if (stat(path, &want) != 0)
		return 0;
	return procs_running_file((uint64_t)want.st_dev, (uint64_t)want.st_ino, pids, max);
}

/* A Go binary carries .go.buildinfo or a Go build-id note; reading the ELF
 * headers and notes is cheap, the function table is not needed here. */
static bool procs_probe_go(struct proc_info *p)
{
	char path[64];
	struct elf_image *img;

	snprintf(path, sizeof(path), "/proc/%d/exe", p->pid);
	if (elf_image_open(path, &img, NULL) != 0)
		return false;
	snprintf(p->go_version, sizeof(p->go_version), "%s", elf_image_go_version(img));
	bool is_go = p->go_version[0] || elf_image_go_build_id(img)[0];
	if (is_go && !p->go_version[0])
		snprintf(p->go_version, sizeof(p->go_version), "go?");
	p->stripped = !elf_image_has_symtab(img);
	p->has_dwarf = elf_image_has_dwarf(img);
	elf_image_close(img);
	return is_go;
}

int procs_scan_go(struct proc_info **out, size_t *n)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t cap = 0;
	int self = getpid();

	*out = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct proc_info p;
		if (!is_pid_name(de->d_name) || atoi(de->d_name) == self)
			continue;
		if (procs_describe(atoi(de->d_name), &p) != 0 || !p.exe[0] || !procs_probe_go(&p))
			continue;
		if (*n == cap) {
			size_t ncap = cap ? cap * 2 : 32;
			struct proc_info *np = realloc(*out, ncap * sizeof(*np));
			if (!np) {
				closedir(d);
				return -ENOMEM;
			}
			*out = np;
			cap = ncap;
		}
		(*out)[(*n)++] = p;
	}
	closedir(d);
	return 0;
}

void procs_explain_not_go(int pid, int ret, char *err)
{
	struct proc_info p;
	char exe[64];
	const char *why;
	size_t n;

	if (!err)
		return;
	/* Keep only the reason: the path in the message is /proc/PID/exe. */
	n = (size_t)snprintf(exe, sizeof(exe), "/proc/%d/exe: ", pid);
	why = strncmp(err, exe, n) == 0 ? err + n : err;
	procs_describe(pid, &p);
	char reason[ERR_LEN];
	snprintf(reason, sizeof(reason), "%s", why);
	if (ret == -ENODATA)
		snprintf(reason, sizeof(reason), "its binary has no .gopclntab section");
	err_set(err, ENOEXEC, "PID %d (%s, %s) is not a Go program: %s", pid, p.comm,
		p.exe[0] ? p.exe : "?", reason);
}

/* Inodes of the LISTEN sockets on port in one /proc/PID/net/tcp{,6} table
 * whose local address is the loopback or any address. */
static size_t listen_inodes(const char *path, unsigned port, unsigned long *ino, size_t max,
			    size_t n)
{
	char line[512], addr[64];
	unsigned lport, state;
	unsigned long inode;
	FILE *f = fopen(path, "re");

	if (!f)
		return n;
	while (n < max && fgets(line, sizeof(line), f)) {
		/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
		if (sscanf(line, " %*d: %63[0-9A-Fa-f]:%x %*s %x %*s %*s %*s %*u %*u %lu", addr,
			   &lport, &state, &inode) != 4 ||
		    lport != port || state != 0x0A /* TCP_LISTEN */)
			continue;
		/* 127.0.0.1 and 0.0.0.0 as the kernel prints them (host byte
		 * order); ::, ::1 and ::ffff:127.0.0.1 in four such words. */
		if (strcmp(addr, "0100007F") && strcmp(addr, "00000000") &&
		    strcmp(addr, "00000000000000000000000000000000") &&
		    strcmp(addr, "00000000000000000000000001000000") &&
		    strcmp(addr, "0000000000000000FFFF00000100007F"))
			continue;
		ino[n++] = inode;
	}
	fclose(f);
	return n;
}

int procs_listens_on(int pid, unsigned port)
{
	unsigned long ino[64];
	char path[64], link[64];
	size_t n = 0;
	struct dirent *de;
	DIR *d;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/net/tcp", pid);
	n = listen_inodes(path, port, ino, 64, n);
	snprintf(path, sizeof(path), "/proc/%d/net/tcp6", pid);
	n = listen_inodes(path, port, ino, 64, n);
	if (n == 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!found && (de = readdir(d))) {
		char fd[320];
		ssize_t len;
		unsigned long inode;

		snprintf(fd, sizeof(fd), "%s/%s", path, de->d_name);
		len = readlink(fd, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		if (sscanf(link, "socket:[%lu]", &inode) != 1)
			continue;
		for (size_t i = 0; i < n && !found; i++)
			found = ino[i] == inode;
	}
	closedir(d);
	return found;
}

int procs_map_addr(int pid, uint64_t dev, uint64_t ino, uint64_t file_off, uint64_t *addr)
{
	char path[64], line[4096];
	unsigned long long start, end, off, inode;
	unsigned maj, min;
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		/* start-end perms offset major:minor inode path */
		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu", &start, &end, &off, &maj, &min,
			   &inode) != 6 ||
		    inode != ino || makedev(maj, min) != dev || file_off < off ||
		    file_off - off >= end - start)
			continue;
		*addr = start + (file_off - off);
		ret = 0;
	}
	fclose(f);
	return ret;
}

uint64_t procs_cpu_ns(int pid)
{
	struct timespec ts;
	clockid_t clock;

	/* The process's CPU clock: every thread's time, those that exited
	 * too, in two syscalls (a walk of /proc/PID/task made a few dozen,
	 * ten times a second while a function is estimated). */
	if (pid <= 0 || clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
