// A test-only SQLite VFS: every call goes to SQLite's default VFS, counted by kind, except the
// one a test arms to fail. See include/faultvfs.h.

#include "faultvfs.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct faultvfs {
    sqlite3_vfs base; // first: SQLite hands this pointer back to every method
    sqlite3_vfs *real;
    char *name;
    pthread_mutex_t mutex; // guards everything below: connections may run on several threads
    int64_t counts[FAULTVFS_KIND_COUNT];
    int armed;
    faultvfs_kind kind;
    int64_t nth;
    int code;
    int sticky;
    int64_t injected;
    sqlite3_io_methods methods[4]; // indexed by the real file's io_methods version (1...3)
};

typedef struct {
    sqlite3_file base;
    faultvfs *vfs;
    sqlite3_file *real; // the default VFS's file, stored right after this struct
} faultfile;

// Counts a call of `kind`; returns the code to fail it with, or SQLITE_OK to let it through.
static int fault_check(faultvfs *v, faultvfs_kind kind) {
    pthread_mutex_lock(&v->mutex);
    int64_t n = ++v->counts[kind];
    int rc = SQLITE_OK;
    if (v->armed && v->kind == kind && (n == v->nth || (v->sticky && n > v->nth))) {
        rc = v->code;
        v->injected += 1;
    }
    pthread_mutex_unlock(&v->mutex);
    return rc;
}

#define REAL(f) (((faultfile *)(f))->real)
#define VFS(f) (((faultfile *)(f))->vfs)
#define CHECK(f, k)                                   \
    do {                                              \
        int fault_rc = fault_check(VFS(f), (k));      \
        if (fault_rc != SQLITE_OK) return fault_rc;   \
    } while (0)

// MARK: io_methods

static int fvClose(sqlite3_file *f) {
    return REAL(f)->pMethods->xClose(REAL(f));
}

static int fvRead(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    int rc = fault_check(VFS(f), FAULTVFS_READ);
    if (rc != SQLITE_OK) {
        memset(buffer, 0, (size_t)amount);
        return rc;
    }
    return REAL(f)->pMethods->xRead(REAL(f), buffer, amount, offset);
}

static int fvWrite(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    CHECK(f, FAULTVFS_WRITE);
    return REAL(f)->pMethods->xWrite(REAL(f), buffer, amount, offset);
}

static int fvTruncate(sqlite3_file *f, sqlite3_int64 size) {
    CHECK(f, FAULTVFS_TRUNCATE);
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int fvSync(sqlite3_file *f, int flags) {
    CHECK(f, FAULTVFS_SYNC);
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int fvFileSize(sqlite3_file *f, sqlite3_int64 *size) {
    int rc = fault_check(VFS(f), FAULTVFS_FILESIZE);
    if (rc != SQLITE_OK) {
        *size = 0;
        return rc;
    }
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int fvLock(sqlite3_file *f, int level) {
    CHECK(f, FAULTVFS_LOCK);
    return REAL(f)->pMethods->xLock(REAL(f), level);
}

static int fvUnlock(sqlite3_file *f, int level) {
    CHECK(f, FAULTVFS_UNLOCK);
    return REAL(f)->pMethods->xUnlock(REAL(f), level);
}

static int fvCheckReservedLock(sqlite3_file *f, int *result) {
    int rc = fault_check(VFS(f), FAULTVFS_CHECKRESERVED);
    if (rc != SQLITE_OK) {
        *result = 0;
        return rc;
    }
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), result);
}

static int fvFileControl(sqlite3_file *f, int op, void *arg) {
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int fvSectorSize(sqlite3_file *f) {
    return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int fvDeviceCharacteristics(sqlite3_file *f) {
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int fvShmMap(sqlite3_file *f, int page, int pageSize, int extend, void volatile **pointer) {
    int rc = fault_check(VFS(f), FAULTVFS_SHMMAP);
    if (rc != SQLITE_OK) {
        *pointer = NULL;
        return rc;
    }
    return REAL(f)->pMethods->xShmMap(REAL(f), page, pageSize, extend, pointer);
}

static int fvShmLock(sqlite3_file *f, int offset, int n, int flags) {
    // Only taking a lock can fail (another connection holds it); releasing one cannot, and
    // failing it would make SQLite believe it released a lock it still holds.
    if (flags & SQLITE_SHM_LOCK) CHECK(f, FAULTVFS_SHMLOCK);
    return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}

static void fvShmBarrier(sqlite3_file *f) {
    REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int fvShmUnmap(sqlite3_file *f, int deleteFlag) {
    return REAL(f)->pMethods->xShmUnmap(REAL(f), deleteFlag);
}

static int fvFetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **pointer) {
    return REAL(f)->pMethods->xFetch(REAL(f), offset, amount, pointer);
}

static int fvUnfetch(sqlite3_file *f, sqlite3_int64 offset, void *pointer) {
    return REAL(f)->pMethods->xUnfetch(REAL(f), offset, pointer);
}

// MARK: VFS methods

static int fvOpen(sqlite3_vfs *pVfs, sqlite3_filename name, sqlite3_file *file, int flags, int *outFlags) {
    faultvfs *v = (faultvfs *)pVfs;
    faultfile *f = (faultfile *)file;
    f->base.pMethods = NULL;
    f->vfs = v;
    f->real = (sqlite3_file *)&f[1];
    int rc = fault_check(v, FAULTVFS_OPEN);
    if (rc != SQLITE_OK) return rc;
    rc = v->real->xOpen(v->real, name, f->real, flags, outFlags);
    // SQLite calls xClose whenever pMethods is set, even after a failed open: mirror the real file.
    if (f->real->pMethods != NULL) {
        int version = f->real->pMethods->iVersion;
        if (version < 1) version = 1;
        if (version > 3) version = 3;
        f->base.pMethods = &v->methods[version];
    }
    return rc;
}

static int fvDelete(sqlite3_vfs *pVfs, const char *name, int syncDirectory) {
    faultvfs *v = (faultvfs *)pVfs;
    int rc = fault_check(v, FAULTVFS_DELETE);
    if (rc != SQLITE_OK) return rc;
    return v->real->xDelete(v->real, name, syncDirectory);
}

static int fvAccess(sqlite3_vfs *pVfs, const char *name, int flags, int *result) {
    faultvfs *v = (faultvfs *)pVfs;
    int rc = fault_check(v, FAULTVFS_ACCESS);
    if (rc != SQLITE_OK) {
        *result = 0;
        return rc;
    }
    return v->real->xAccess(v->real, name, flags, result);
}

#define REALVFS(p) (((faultvfs *)(p))->real)

static int fvFullPathname(sqlite3_vfs *p, const char *name, int size, char *out) {
    return REALVFS(p)->xFullPathname(REALVFS(p), name, size, out);
}
static void *fvDlOpen(sqlite3_vfs *p, const char *name) { return REALVFS(p)->xDlOpen(REALVFS(p), name); }
static void fvDlError(sqlite3_vfs *p, int size, char *out) { REALVFS(p)->xDlError(REALVFS(p), size, out); }
static void (*fvDlSym(sqlite3_vfs *p, void *handle, const char *symbol))(void) {
    return REALVFS(p)->xDlSym(REALVFS(p), handle, symbol);
}
static void fvDlClose(sqlite3_vfs *p, void *handle) { REALVFS(p)->xDlClose(REALVFS(p), handle); }
static int fvRandomness(sqlite3_vfs *p, int size, char *out) { return REALVFS(p)->xRandomness(REALVFS(p), size, out); }
static int fvSleep(sqlite3_vfs *p, int microseconds) { return REALVFS(p)->xSleep(REALVFS(p), microseconds); }
static int fvCurrentTime(sqlite3_vfs *p, double *out) { return REALVFS(p)->xCurrentTime(REALVFS(p), out); }
static int fvGetLastError(sqlite3_vfs *p, int size, char *out) {
    return REALVFS(p)->xGetLastError ? REALVFS(p)->xGetLastError(REALVFS(p), size, out) : 0;
}
static int fvCurrentTimeInt64(sqlite3_vfs *p, sqlite3_int64 *out) {
    return REALVFS(p)->xCurrentTimeInt64(REALVFS(p), out);
}
static int fvSetSystemCall(sqlite3_vfs *p, const char *name, sqlite3_syscall_ptr call) {
    return REALVFS(p)->xSetSystemCall(REALVFS(p), name, call);
}
static sqlite3_syscall_ptr fvGetSystemCall(sqlite3_vfs *p, const char *name) {
    return REALVFS(p)->xGetSystemCall(REALVFS(p), name);
}
static const char *fvNextSystemCall(sqlite3_vfs *p, const char *name) {
    return REALVFS(p)->xNextSystemCall(REALVFS(p), name);
}

// MARK: API

faultvfs *faultvfs_create(const char *name) {
    if (name == NULL || sqlite3_initialize() != SQLITE_OK) return NULL;
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (real == NULL || sqlite3_vfs_find(name) != NULL) return NULL;
    faultvfs *v = calloc(1, sizeof(faultvfs));
    if (v == NULL) return NULL;
    v->name = strdup(name);
    if (v->name == NULL || pthread_mutex_init(&v->mutex, NULL) != 0) {
        free(v->name);
        free(v);
        return NULL;
    }
    v->real = real;

    sqlite3_io_methods methods = {
        .iVersion = 3,
        .xClose = fvClose,
        .xRead = fvRead,
        .xWrite = fvWrite,
        .xTruncate = fvTruncate,
        .xSync = fvSync,
        .xFileSize = fvFileSize,
        .xLock = fvLock,
        .xUnlock = fvUnlock,
        .xCheckReservedLock = fvCheckReservedLock,
        .xFileControl = fvFileControl,
        .xSectorSize = fvSectorSize,
        .xDeviceCharacteristics = fvDeviceCharacteristics,
        .xShmMap = fvShmMap,
        .xShmLock = fvShmLock,
        .xShmBarrier = fvShmBarrier,
        .xShmUnmap = fvShmUnmap,
        .xFetch = fvFetch,
        .xUnfetch = fvUnfetch,
    };
    for (int version = 1; version <= 3; version++) {
        v->methods[version] = methods;
        v->methods[version].iVersion = version;
        if (version < 2) {
            v->methods[version].xShmMap = NULL;
            v->methods[version].xShmLock = NULL;
            v->methods[version].xShmBarrier = NULL;
            v->methods[version].xShmUnmap = NULL;
        }
        if (version < 3) {
            v->methods[version].xFetch = NULL;
            v->methods[version].xUnfetch = NULL;
        }
    }

    sqlite3_vfs *b = &v->base;
    b->iVersion = real->iVersion > 3 ? 3 : real->iVersion;
    b->szOsFile = (int)sizeof(faultfile) + real->szOsFile;
    b->mxPathname = real->mxPathname;
    b->zName = v->name;
    b->pAppData = NULL;
    b->xOpen = fvOpen;
    b->xDelete = fvDelete;
    b->xAccess = fvAccess;
    b->xFullPathname = fvFullPathname;
    b->xDlOpen = fvDlOpen;
    b->xDlError = fvDlError;
    b->xDlSym = fvDlSym;
    b->xDlClose = fvDlClose;
    b->xRandomness = fvRandomness;
    b->xSleep = fvSleep;
    b->xCurrentTime = fvCurrentTime;
    b->xGetLastError = fvGetLastError;
    if (b->iVersion >= 2) b->xCurrentTimeInt64 = fvCurrentTimeInt64;
    if (b->iVersion >= 3) {
        b->xSetSystemCall = fvSetSystemCall;
        b->xGetSystemCall = fvGetSystemCall;
        b->xNextSystemCall = fvNextSystemCall;
    }
    if (sqlite3_vfs_register(b, 0) != SQLITE_OK) {
        pthread_mutex_destroy(&v->mutex);
        free(v->name);
        free(v);
        return NULL;
    }
    return v;
}

void faultvfs_destroy(faultvfs *v) {
    if (v == NULL) return;
    sqlite3_vfs_unregister(&v->base);
    pthread_mutex_destroy(&v->mutex);
    free(v->name);
    free(v);
}

const char *faultvfs_name(const faultvfs *v) { return v->name; }

void faultvfs_reset_counts(faultvfs *v) {
    pthread_mutex_lock(&v->mutex);
    memset(v->counts, 0, sizeof v->counts);
    v->injected = 0;
    pthread_mutex_unlock(&v->mutex);
}

int64_t faultvfs_count(const faultvfs *cv, faultvfs_kind kind) {
    faultvfs *v = (faultvfs *)cv;
    if ((int)kind < 0 || kind >= FAULTVFS_KIND_COUNT) return 0;
    pthread_mutex_lock(&v->mutex);
    int64_t n = v->counts[kind];
    pthread_mutex_unlock(&v->mutex);
    return n;
}

void faultvfs_arm(faultvfs *v, faultvfs_kind kind, int64_t nth, int code, int sticky) {
    pthread_mutex_lock(&v->mutex);
    memset(v->counts, 0, sizeof v->counts);
    v->injected = 0;
    v->armed = 1;
    v->kind = kind;
    v->nth = nth;
    v->code = code;
    v->sticky = sticky;
    pthread_mutex_unlock(&v->mutex);
}

void faultvfs_disarm(faultvfs *v) {
    pthread_mutex_lock(&v->mutex);
    v->armed = 0;
    pthread_mutex_unlock(&v->mutex);
}

int64_t faultvfs_injected(const faultvfs *cv) {
    faultvfs *v = (faultvfs *)cv;
    pthread_mutex_lock(&v->mutex);
    int64_t n = v->injected;
    pthread_mutex_unlock(&v->mutex);
    return n;
}
