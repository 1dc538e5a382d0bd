#ifndef CFAULTLINE_INTARRAY_H
#define CFAULTLINE_INTARRAY_H
// An eponymous-only SQLite virtual table of one INTEGER column, `value`, whose rows are an
// array of 64-bit integers the program binds in memory: `… IN (SELECT * FROM <name>)` reads
// them without a table being created, filled or emptied. This is how Core Data binds id
// lists (its `_Z_intarray0`), after SQLite's own `intarray` test extension.
//
// The table holds a pointer to the caller's array, not a copy: the caller keeps the array
// alive and unchanged while it is bound, and binds an empty array (or another one) before it
// frees it. Each scan copies the array bound when its statement starts the scan, so a
// statement stepped again after the array is unbound reads that copy, never freed memory.

#include <stdint.h>

typedef struct sqlite3 sqlite3;

/// One registered table (one connection, one name).
typedef struct faultline_intarray faultline_intarray;

/// Registers the module `name` on `db` as an eponymous-only virtual table: `SELECT value FROM
/// name` works at once and no schema changes. The returned handle is freed by SQLite when the
/// connection closes (or the module is registered again). NULL when registration fails.
faultline_intarray *faultline_intarray_register(sqlite3 *db, const char *name);

/// Makes `keys[0..<count]` the table's rows (not copied); `count` 0 (keys may be NULL) empties it.
void faultline_intarray_bind(faultline_intarray *array, const int64_t *keys, int64_t count);

#endif
