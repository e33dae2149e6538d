/* Go's wait reasons by release (go_waitreasons.c). */
#ifndef RETOP_GO_WAITREASONS_H
#define RETOP_GO_WAITREASONS_H

/* The words of wait reason number reason (g.waitreason) in Go 1.go_minor:
 * "chan receive", "sleep"...; NULL for a release or a number it does not
 * know. */
const char *go_wait_reason(int go_minor, unsigned reason);

#endif
