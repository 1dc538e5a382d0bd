#ifndef CFAULTLINE_SQLITE_SHIM_H
#define CFAULTLINE_SQLITE_SHIM_H
#include <sqlite3.h>

// Swift cannot call C variadic functions; these wrappers give the few variadic
// sqlite3 calls we need a fixed signature.

/// sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, NULL)
static inline int faultline_sqlite3_db_config_int(sqlite3 *db, int op, int value) {
    int out = 0;
    return sqlite3_db_config(db, op, value, &out);
}

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type faultline_sqlite3_transient(void) {
    return SQLITE_TRANSIENT;
}
/// sqlite3_interrupt from a signal handler: Swift's signal handler closure cannot capture,
/// and the handle is reached through a global; the wrapper keeps the call in C.
static inline void faultline_interrupt(sqlite3 *db) {
    sqlite3_interrupt(db);
}
#endif
