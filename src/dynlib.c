#include "dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "log.h"

static pthread_mutex_t dynlib_lock = PTHREAD_MUTEX_INITIALIZER;

static int dynlib_open(struct dynlib *lib)
{
	/* RTLD_LOCAL: the library's symbols stay out of the global scope. */
	void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(lib->err, sizeof(lib->err), "cannot load %s (install %s): %s",
			 lib->soname, lib->package, dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < lib->nsyms; i++) {
		void *p = dlsym(h, lib->syms[i].name);
		if (!p) {
			snprintf(lib->err, sizeof(lib->err), "%s has no %s: install a newer %s",
				 lib->soname, lib->syms[i].name, lib->package);
			dlclose(h);
			return -ENOSYS;
		}
		*lib->syms[i].addr = p;
	}
	return 1;
}

int dynlib_load(struct dynlib *lib, char *err)
{
	int state;

	pthread_mutex_lock(&dynlib_lock);
	if (!lib->state)
		lib->state = dynlib_open(lib);
	state = lib->state;
	pthread_mutex_unlock(&dynlib_lock);
	if (state > 0)
		return 0;
	return err_set(err, -state, "%s", lib->err);
}
