// libFuzzer's driver, called from a target's own `main` (SwiftPM renames an executable's
// `main`, so libFuzzer's would not run). Defined by the `-sanitize=fuzzer` runtime.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
