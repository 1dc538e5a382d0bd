#ifndef CFAULTLINE_EDITLINE_SHIM_H
#define CFAULTLINE_EDITLINE_SHIM_H
#include <stdio.h>
#include <editline/readline.h>

// libedit's readline settings are C globals, which Swift 6 refuses to touch as shared
// mutable state; these accessors keep the reads and writes in C. Only the interactive
// loop's thread calls them.

static inline void faultline_rl_set_word_breaks(char *characters) {
    rl_completer_word_break_characters = characters;
}

static inline void faultline_rl_set_completion(rl_completion_func_t *function) {
    rl_attempted_completion_function = function;
}

static inline const char *faultline_rl_line_buffer(void) {
    return rl_line_buffer;
}

static inline void faultline_rl_completion_over(void) {
    rl_attempted_completion_over = 1;
}
#endif
