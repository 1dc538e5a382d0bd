// The in-memory integer array virtual table: see include/intarray.h.

#include "intarray.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct faultline_intarray {
    const int64_t *keys;
    int64_t count;
};

typedef struct {
    sqlite3_vtab base; // first: SQLite hands this pointer back
    faultline_intarray *array;
} intarray_vtab;

typedef struct {
    sqlite3_vtab_cursor base; // first: SQLite hands this pointer back
    int64_t *keys;            // a copy of the array bound when the scan began (owned)
    int64_t count;
    int64_t index;
} intarray_cursor;

static int intarray_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                            sqlite3_vtab **out, char **error) {
    (void)argc;
    (void)argv;
    (void)error;
    int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(value INTEGER)");
    if (rc != SQLITE_OK) return rc;
    intarray_vtab *table = sqlite3_malloc(sizeof *table);
    if (table == NULL) return SQLITE_NOMEM;
    memset(table, 0, sizeof *table);
    table->array = aux;
    *out = &table->base;
    return SQLITE_OK;
}

static int intarray_disconnect(sqlite3_vtab *base) {
    sqlite3_free(base);
    return SQLITE_OK;
}

// Only full scans. The planner is told a small table, whatever is bound when a statement is
// prepared (statements are cached and run again with other arrays): `Z_PK IN (SELECT * FROM
// t)` then looks each key up instead of scanning the other table.
static int intarray_best_index(sqlite3_vtab *base, sqlite3_index_info *info) {
    (void)base;
    info->estimatedCost = 100.0;
    info->estimatedRows = 100;
    return SQLITE_OK;
}

static int intarray_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out) {
    (void)base;
    intarray_cursor *cursor = sqlite3_malloc(sizeof *cursor);
    if (cursor == NULL) return SQLITE_NOMEM;
    memset(cursor, 0, sizeof *cursor);
    *out = &cursor->base;
    return SQLITE_OK;
}

static int intarray_close(sqlite3_vtab_cursor *base) {
    sqlite3_free(((intarray_cursor *)base)->keys);
    sqlite3_free(base);
    return SQLITE_OK;
}

static int intarray_filter(sqlite3_vtab_cursor *base, int plan, const char *planName, int argc,
                           sqlite3_value **argv) {
    (void)plan;
    (void)planName;
    (void)argc;
    (void)argv;
    intarray_cursor *cursor = (intarray_cursor *)base;
    const faultline_intarray *array = ((intarray_vtab *)base->pVtab)->array;
    // The scan reads its own copy: a statement may be stepped again after the caller's array
    // is unbound and freed (the copy is 8 bytes a key, once per scan).
    sqlite3_free(cursor->keys);
    cursor->keys = NULL;
    cursor->count = 0;
    cursor->index = 0;
    if (array->keys != NULL && array->count > 0) {
        cursor->keys = sqlite3_malloc64((sqlite3_uint64)array->count * sizeof(int64_t));
        if (cursor->keys == NULL) return SQLITE_NOMEM;
        memcpy(cursor->keys, array->keys, (size_t)array->count * sizeof(int64_t));
        cursor->count = array->count;
    }
    return SQLITE_OK;
}

static int intarray_next(sqlite3_vtab_cursor *base) {
    ((intarray_cursor *)base)->index += 1;
    return SQLITE_OK;
}

static int intarray_eof(sqlite3_vtab_cursor *base) {
    const intarray_cursor *cursor = (const intarray_cursor *)base;
    return cursor->index >= cursor->count;
}

static int intarray_column(sqlite3_vtab_cursor *base, sqlite3_context *context, int column) {
    (void)column; // one column
    const intarray_cursor *cursor = (const intarray_cursor *)base;
    sqlite3_result_int64(context, cursor->keys[cursor->index]);
    return SQLITE_OK;
}

static int intarray_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *rowid) {
    *rowid = ((const intarray_cursor *)base)->index;
    return SQLITE_OK;
}

static const sqlite3_module intarray_module = {
    .iVersion = 0,
    .xCreate = NULL, // eponymous-only: the table exists by the module's name alone
    .xConnect = intarray_connect,
    .xBestIndex = intarray_best_index,
    .xDisconnect = intarray_disconnect,
    .xDestroy = intarray_disconnect,
    .xOpen = intarray_open,
    .xClose = intarray_close,
    .xFilter = intarray_filter,
    .xNext = intarray_next,
    .xEof = intarray_eof,
    .xColumn = intarray_column,
    .xRowid = intarray_rowid,
};

faultline_intarray *faultline_intarray_register(sqlite3 *db, const char *name) {
    faultline_intarray *array = sqlite3_malloc(sizeof *array);
    if (array == NULL) return NULL;
    memset(array, 0, sizeof *array);
    // On failure SQLite calls the destructor (sqlite3_free) itself.
    if (sqlite3_create_module_v2(db, name, &intarray_module, array, sqlite3_free) != SQLITE_OK) return NULL;
    return array;
}

void faultline_intarray_bind(faultline_intarray *array, const int64_t *keys, int64_t count) {
    array->keys = count > 0 ? keys : NULL;
    array->count = count > 0 ? count : 0;
}
