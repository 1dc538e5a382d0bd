#include "referencecounts.h"

// The Swift runtime's entry points (libswiftCore exports them with the C calling convention;
// they are part of its stable ABI on Apple's platforms). Declared here, not in the header, so
// that Swift code importing the header does not see a second declaration of functions its
// compiler declares itself.
extern void *swift_retain_n(void *object, uint32_t n);
extern void swift_release_n(void *object, uint32_t n);

void faultline_retain_n(void *object, uint32_t n) { swift_retain_n(object, n); }

void faultline_release_n(void *object, uint32_t n) { swift_release_n(object, n); }
