#ifndef CBENCH_SQLITE_SHIM_H
#define CBENCH_SQLITE_SHIM_H
#include <sqlite3.h>
#include <malloc.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type bench_sqlite3_transient(void) {
    return SQLITE_TRANSIENT;
}
/// `--steady-heap`: glibc keeps the memory a round frees for the next (no trim of the heap's
/// top, mappings only past 32 MB, fixed thresholds instead of the dynamic ones other
/// variants' frees move). 1 when every setting took.
static inline int bench_steady_heap(void) {
    return mallopt(M_TRIM_THRESHOLD, 1 << 30) && mallopt(M_TOP_PAD, 256 << 20) && mallopt(M_MMAP_THRESHOLD, 32 << 20);
}
/// `--trimmed-heap`: gives every free page of the heap back to the system (`malloc_trim`), so
/// that the next variant starts from the heap a fresh process has, whatever the one before
/// it freed.
static inline void bench_trim_heap(void) {
    (void)malloc_trim(0);
}
#endif
