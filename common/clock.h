/* The monotonic clock, the one home for reading it: deadlines, timeouts and
 * how long a phase took (never wall-clock time, which can jump). */
#ifndef GD_COMMON_CLOCK_H
#define GD_COMMON_CLOCK_H

#include <stdint.h>

/* Milliseconds since an arbitrary fixed point. */
int64_t gd_clock_ms(void);
/* The same in seconds, to the nanosecond. */
double gd_clock_seconds(void);

#endif
