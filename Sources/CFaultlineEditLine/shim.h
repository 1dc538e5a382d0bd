#ifndef CFAULTLINE_EDITLINE_SHIM_H
#define CFAULTLINE_EDITLINE_SHIM_H
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <editline/readline.h>

// libedit's readline settings are C globals, which Swift 6 refuses to touch as shared
// mutable state; these accessors keep the reads and writes in C. Only the interactive
// loop's thread calls them.

static inline void faultline_rl_set_word_breaks(char *characters) {
    // libedit's completion reads the basic set; readline's reads the completer set.
    rl_completer_word_break_characters = characters;
    rl_basic_word_break_characters = characters;
}

/// Leaves SIGINT to the shell's own handler (libedit would otherwise re-raise it with the
/// previous disposition after restoring the terminal, ending the process).
static inline void faultline_rl_leave_signals_alone(void) {
    rl_catch_signals = 0;
}

static inline void faultline_rl_set_append_character(int character) {
    rl_completion_append_character = character;
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
/// Installs `handler` for SIGINT without SA_RESTART, so a blocking read at the prompt returns
/// (EINTR) and the shell can drop the line being typed.
static inline int faultline_install_sigint(void (*handler)(int)) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    return sigaction(SIGINT, &action, NULL);
}
/// libedit's readline returns with SIGINT still blocked in the signal mask; unblock it so
/// Ctrl-C reaches the handler while a command runs.
static inline void faultline_unblock_sigint(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
}
#endif
