#ifndef FAULTLINE_REFERENCE_COUNTS_H
#define FAULTLINE_REFERENCE_COUNTS_H

#include <stdint.h>

/// Adds `n` to the strong reference count of the Swift object at `object`, in one atomic
/// operation: the Swift runtime's `swift_retain_n`, which compiled Swift code calls for a
/// retain of several counts at once. Faultline's fetches take, this way, the counts of the
/// references every object of a fetch holds to the same few objects (its entity, its
/// context's link, its row page), instead of one atomic operation per object and reference.
void faultline_retain_n(void *object, uint32_t n);

/// Gives back `n` strong references to the Swift object at `object` (`swift_release_n`): the
/// counts a fetch took in bulk and did not use.
void faultline_release_n(void *object, uint32_t n);

/// Asks the processor to bring the cache line at `address` in for writing, without waiting
/// for it: a hint, no effect on what the program computes.
static inline void faultline_prefetch_for_writing(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

#endif
