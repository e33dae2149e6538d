/* test_sdk_client's fixture: the hostile server started per mode, the
 * export it serves (written from the payments fixture's real index), a
 * client for it, and the checks on a result.  Include it after cmocka,
 * funcs.h, sdk_client.h and the system headers test_sdk_client.c names. */
#ifndef RETOP_TEST_SDK_FIXTURE_H
#define RETOP_TEST_SDK_FIXTURE_H

#define MIB (1024u * 1024u)
#define TOKEN "s3cret-token_1"
#define HANG_LIMIT_S 8.0 /* 5 s total timeout + margin */

struct fixture {
	struct func_index *idx;
	char dir[64];
	char export_path[128];
	size_t nexport;	    /* records written to the export file */
	const char *sample; /* a function name with characters to escape */
	pid_t server;
	int port;
	char base[64]; /* http://127.0.0.1:PORT */
};

static struct fixture fx;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the hostile server ---- */

/* Start argv[0] with stdout on a pipe and read the port it prints. */
static pid_t server_start(char *const argv[], int *port)
{
	int fds[2];
	char line[32] = "";
	size_t len = 0;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fds[1], 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	struct pollfd p = {fds[0], POLLIN, 0};
	while (len < sizeof(line) - 1 && !strchr(line, '\n') && poll(&p, 1, 10000) == 1) {
		ssize_t n = read(fds[0], line + len, sizeof(line) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		line[len] = '\0';
	}
	close(fds[0]);
	*port = atoi(line);
	if (*port <= 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("%s printed no port (got \"%s\")", argv[0], line);
	}
	return pid;
}

static void server_stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

/* One JSON line per function of the real index, as the SDK would send. */
static void write_export(void)
{
	FILE *f = fopen(fx.export_path, "w");

	assert_non_null(f);
	for (size_t i = 0; i < fx.idx->count; i++) {
		const struct func_info *fi = &fx.idx->funcs[i];
		if (!fi->file_offset || funcs_find(fx.idx, fi->name) != fi)
			continue; /* duplicates: the check looks names up */
		struct json_object *o = json_object_new_object();
		assert_non_null(o);
		json_object_object_add(o, "name", json_object_new_string(fi->name));
		json_object_object_add(o, "address", json_object_new_uint64(fi->entry));
		json_object_object_add(o, "entry", json_object_new_uint64(fi->entry));
		json_object_object_add(o, "offset", json_object_new_uint64(fi->file_offset));
		json_object_object_add(o, "size_bytes", json_object_new_uint64(fi->size));
		json_object_object_add(o, "has_size", json_object_new_boolean(1));
		json_object_object_add(o, "file", json_object_new_string(fi->file ? fi->file : ""));
		json_object_object_add(o, "line", json_object_new_int(fi->line > 0 ? fi->line : 0));
		fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		if (!fx.sample && strchr(fi->name, '*') && strchr(fi->name, '('))
			fx.sample = fi->name;
		fx.nexport++;
	}
	assert_int_equal(fclose(f), 0);
	assert_non_null(fx.sample);
}

static int setup(void **state)
{
	char err[ERR_LEN], path[512];
	const char *dir = getenv("RETOP_FIXTURE_DIR"), *hostile = getenv("RETOP_SDK_HOSTILE");

	(void)state;
	unsetenv(SDK_TOKEN_ENV);
	if (!hostile || !*hostile) {
		fprintf(stderr, "RETOP_SDK_HOSTILE is not set: build the server with "
				"`cd tests/sdk/hostile && go build -o /tmp/hostile .` and set "
				"RETOP_SDK_HOSTILE=/tmp/hostile\n");
		return -1;
	}
	if (!dir || !*dir) {
		fprintf(stderr, "RETOP_FIXTURE_DIR is not set: make tests/go/bin/.stamp\n");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/payments-default", dir);
	if (funcs_load(path, 0, &fx.idx, err)) {
		fprintf(stderr, "funcs_load(%s): %s\n", path, err);
		return -1;
	}
	strcpy(fx.dir, "/tmp/test_sdk_client.XXXXXX");
	if (!mkdtemp(fx.dir))
		return -1;
	snprintf(fx.export_path, sizeof(fx.export_path), "%s/export.jsonl", fx.dir);
	write_export();
	char *argv[] = {(char *)hostile, "-export", fx.export_path, "-token", TOKEN, NULL};
	fx.server = server_start(argv, &fx.port);
	snprintf(fx.base, sizeof(fx.base), "http://127.0.0.1:%d", fx.port);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	server_stop(fx.server);
	if (fx.export_path[0])
		unlink(fx.export_path);
	if (fx.dir[0])
		rmdir(fx.dir);
	funcs_free(fx.idx);
	return 0;
}

/* A client on base/MODE with default options. */
static struct sdk_client *client_for(const char *mode)
{
	char url[128], err[ERR_LEN];
	struct sdk_client *c;

	snprintf(url, sizeof(url), "%s/%s", fx.base, mode);
	int ret = sdk_client_open(url, NULL, &c, err);
	if (ret)
		fail_msg("sdk_client_open(%s) = %d: %s", url, ret, err);
	return c;
}

/* Export from a mode: the return value, err, the records and the time. */
struct result {
	int ret;
	char err[ERR_LEN];
	struct sdk_func *funcs;
	size_t n;
	double secs;
	struct sdk_client_stats stats;
};

static void export_from(const char *mode, struct result *r)
{
	struct sdk_client *c = client_for(mode);
	double t0 = now_s();

	memset(r, 0, sizeof(*r));
	r->ret = sdk_client_export(c, &r->funcs, &r->n, r->err);
	r->secs = now_s() - t0;
	sdk_client_last_stats(c, &r->stats);
	sdk_client_close(c);
	if (r->ret < 0) {
		assert_null(r->funcs);
		assert_int_equal(r->n, 0);
	}
}

#define assert_err_has(r, s)                                                                       \
	do {                                                                                       \
		if (!strstr((r)->err, (s)))                                                        \
			fail_msg("status \"%s\" lacks \"%s\"", (r)->err, (s));                     \
	} while (0)

#endif
