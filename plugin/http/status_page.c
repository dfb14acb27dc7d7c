/* The status page's bytes (plugin/http/status_page.h), generated from
 * status_page.html at build time (cmake/GdEmbed.cmake). */
#include "plugin/http/status_page.h"

extern const unsigned char gd_status_page_html[];
extern const size_t gd_status_page_html_len;

const char *gd_status_page(size_t *len) {
    *len = gd_status_page_html_len;
    return (const char *)gd_status_page_html;
}
