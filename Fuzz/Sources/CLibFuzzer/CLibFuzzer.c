// Only the header matters: SwiftPM needs a source file for a C target.
#include "CLibFuzzer.h"
