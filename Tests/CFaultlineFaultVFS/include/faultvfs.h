#ifndef CFAULTLINE_FAULTVFS_H
#define CFAULTLINE_FAULTVFS_H
// A test-only SQLite VFS that wraps the default one, counts the calls SQLite makes through it
// by kind, and fails a chosen one with a chosen result code. Linked into tests only.
//
// Each instance is a separately registered VFS with its own name, counters and fault, so tests
// running in parallel do not share state. Open a database on it with sqlite3_open_v2(..., name)
// or a `file:` URI with `vfs=<name>`.

#include <stdint.h>

/// The kinds of calls counted (and that can be failed).
typedef enum {
    FAULTVFS_OPEN = 0,      ///< xOpen (database, journal, WAL, temporary files)
    FAULTVFS_DELETE,        ///< xDelete (a rollback journal when a transaction ends)
    FAULTVFS_ACCESS,        ///< xAccess (is there a hot journal, a -wal?)
    FAULTVFS_READ,          ///< xRead
    FAULTVFS_WRITE,         ///< xWrite
    FAULTVFS_TRUNCATE,      ///< xTruncate
    FAULTVFS_SYNC,          ///< xSync
    FAULTVFS_FILESIZE,      ///< xFileSize
    FAULTVFS_LOCK,          ///< xLock (SHARED, RESERVED, EXCLUSIVE)
    FAULTVFS_UNLOCK,        ///< xUnlock
    FAULTVFS_CHECKRESERVED, ///< xCheckReservedLock
    FAULTVFS_SHMMAP,        ///< xShmMap (WAL index)
    FAULTVFS_SHMLOCK,       ///< xShmLock taking a WAL-index lock (releases are not counted)
    FAULTVFS_KIND_COUNT
} faultvfs_kind;

typedef struct faultvfs faultvfs;

/// Registers a new VFS named `name` (copied) wrapping SQLite's default VFS (not made the
/// default). NULL when out of memory, the name is taken, or registration fails.
faultvfs *faultvfs_create(const char *name);

/// Unregisters and frees the VFS. Every connection opened on it must be closed first.
void faultvfs_destroy(faultvfs *vfs);

/// The registered name.
const char *faultvfs_name(const faultvfs *vfs);

/// Sets every counter (and the number of faults injected) to zero; the fault stays armed.
void faultvfs_reset_counts(faultvfs *vfs);

/// The calls of `kind` since the last reset.
int64_t faultvfs_count(const faultvfs *vfs, faultvfs_kind kind);

/// Arms a fault: the `nth` call of `kind` counted from now (1-based) returns `code` instead of
/// reaching the real file; with `sticky` non-zero every later call of that kind fails too (a
/// full disk, a dead device). Counters restart at zero. The call does not happen.
void faultvfs_arm(faultvfs *vfs, faultvfs_kind kind, int64_t nth, int code, int sticky);

/// Removes the fault (counters keep counting).
void faultvfs_disarm(faultvfs *vfs);

/// How many calls were failed since the last reset or arm.
int64_t faultvfs_injected(const faultvfs *vfs);

#endif
