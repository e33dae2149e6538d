/* Batch mode (-b): no TUI, a snapshot every --delay seconds, like top -b. */
#ifndef RETOP_BATCH_H
#define RETOP_BATCH_H

#include "cli.h"

/* Returns the process exit code. */
int batch_run(const struct cli_options *opts);

#endif
