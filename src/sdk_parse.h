/* Internal to the SDK client (sdk_client.c, sdk_parse.c): not an API. */
#ifndef RETOP_SDK_PARSE_H
#define RETOP_SDK_PARSE_H

#include <stddef.h>

#define SDK_SHOW_LEN 64 /* characters of SDK text quoted in a message */
#define FALLBACK "using the binary's own tables"

/* SDK text for a message: at most SDK_SHOW_LEN characters, printable ASCII
 * kept, anything else shown as ?. */
void sdk_text_show(char *dst, size_t dst_len, const char *s, size_t len);
/* The SDK's own words from a 404 body, screened: "function not found". */
void sdk_parse_not_found(const char *buf, size_t len, char *out, size_t out_len);

#endif
