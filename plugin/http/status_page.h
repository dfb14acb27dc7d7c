/* The daemon's status page (GET /): status_page.html, carried in the
 * binary. It fetches nothing but /v1/status from the daemon that served it. */
#ifndef GD_PLUGIN_HTTP_STATUS_PAGE_H
#define GD_PLUGIN_HTTP_STATUS_PAGE_H

#include <stddef.h>

#define GD_STATUS_PAGE_TYPE "text/html; charset=utf-8"

/* The page's bytes (static) and their number. */
const char *gd_status_page(size_t *len);

#endif
