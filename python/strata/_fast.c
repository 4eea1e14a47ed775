/*
 * strata._fast: the copy of a lent cache file's bytes out of its mapping,
 * with each unit checked against its CRC32C in the same pass, as the Go
 * client's crc32c.Copy does (docs/python.md, "Short-circuit in this
 * process"). Python has no such fused copy: a copy, then a CRC pass, costs
 * twice the CPU of Go's. Three units are checked at once, interleaved, so
 * that the CRC instruction's latency hides under the copy.
 *
 * A mapping of a file cut short under it faults (SIGBUS): the copy runs
 * under a handler that turns such a fault into an error for the caller, as
 * the Go client's reads run with debug.SetPanicOnFault; a fault elsewhere
 * goes to the handler that was there before.
 *
 * Pure C, no threads: it survives fork.
 */
#define PY_SSIZE_T_CLEAN
#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030B0000
#endif
#include <Python.h>

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#include <nmmintrin.h>
#define HAVE_FOLD 1
#define TARGET __attribute__((target("sse4.2")))
#define CRC64(c, v) _mm_crc32_u64((c), (v))
#define CRC8(c, v) _mm_crc32_u8((c), (v))
#define HAVE_CRC() __builtin_cpu_supports("sse4.2")
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#define TARGET
#define CRC64(c, v) __crc32cd((uint32_t)(c), (v))
#define CRC8(c, v) __crc32cb((c), (v))
#define HAVE_CRC() 1
#else
#define NO_CRC 1
#endif

static __thread sigjmp_buf *fault_jump;
static struct sigaction previous_bus;

static void on_bus(int sig, siginfo_t *info, void *ctx) {
    if (fault_jump != NULL) {
        siglongjmp(*fault_jump, 1);
    }
    /* Not a fault of ours: the handler that was there before takes it. */
    sigaction(SIGBUS, &previous_bus, NULL);
    raise(sig);
    (void)info;
    (void)ctx;
}

#ifndef NO_CRC
static inline uint64_t load64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* crc_copy: the CRC32C of src[0:n], copying src[lo:hi] to dst[0:hi-lo]. */
TARGET static uint32_t crc_copy(const uint8_t *src, size_t n, uint8_t *dst, size_t lo, size_t hi) {
    uint64_t c = 0xFFFFFFFFu;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = load64(src + i);
        if (i >= lo && i + 8 <= hi) {
            memcpy(dst + (i - lo), &v, 8);
        } else {
            for (size_t j = i; j < i + 8; j++) {
                if (j >= lo && j < hi) dst[j - lo] = src[j];
            }
        }
        c = CRC64(c, v);
    }
    for (; i < n; i++) {
        if (i >= lo && i < hi) dst[i - lo] = src[i];
        c = CRC8((uint32_t)c, src[i]);
    }
    return (uint32_t)c ^ 0xFFFFFFFFu;
}

#ifdef HAVE_FOLD
/* Where the CPU has AVX-512 and VPCLMULQDQ, a unit is copied and checked
 * by folding, as internal/crc32c's copyFold does (fold_amd64.s, which
 * explains it): 64-byte loads draw on memory at its speed, where chains of
 * 8-byte CRC32s keep too few cache lines in flight. fold_keys are its
 * foldKeysFor(2048, 512), computed at import. */
static uint64_t fold_keys[4];
static int can_fold;

static uint32_t mult_mod_p(uint32_t a, uint32_t b) {
    uint32_t p = 0;
    for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
        if (a & m) p ^= b;
        b = (b & 1) ? (b >> 1) ^ 0x82F63B78u : b >> 1;
    }
    return p;
}

static uint32_t x_pow_n(uint64_t n) {
    uint32_t pow2[32];
    pow2[0] = 1u << 30;
    for (int i = 1; i < 32; i++) pow2[i] = mult_mod_p(pow2[i - 1], pow2[i - 1]);
    uint32_t p = 1u << 31;
    for (int k = 0; n != 0; n >>= 1, k++) {
        if (n & 1) p = mult_mod_p(pow2[k % 32], p);
    }
    return p;
}

#define FOLD_TARGET __attribute__((target("avx512f,avx512vl,vpclmulqdq,sse4.2")))

FOLD_TARGET static inline __m512i fold(__m512i k, __m512i acc, __m512i data) {
    __m512i lo = _mm512_clmulepi64_epi128(acc, k, 0x00);
    __m512i hi = _mm512_clmulepi64_epi128(acc, k, 0x11);
    return _mm512_ternarylogic_epi64(hi, lo, data, 0x96);
}

/* fold_copy: the CRC32C of src[0:n] (n a multiple of 256), copied to dst. */
FOLD_TARGET static uint32_t fold_copy(const uint8_t *src, size_t n, uint8_t *dst) {
    __m512i z0 = _mm512_loadu_si512(src), z1 = _mm512_loadu_si512(src + 64);
    __m512i z2 = _mm512_loadu_si512(src + 128), z3 = _mm512_loadu_si512(src + 192);
    _mm512_storeu_si512(dst, z0);
    _mm512_storeu_si512(dst + 64, z1);
    _mm512_storeu_si512(dst + 128, z2);
    _mm512_storeu_si512(dst + 192, z3);
    z0 = _mm512_xor_si512(z0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)0xFFFFFFFFu)));
    __m512i k = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)fold_keys));
    for (size_t i = 256; i < n; i += 256) {
        __m512i z4 = _mm512_loadu_si512(src + i), z5 = _mm512_loadu_si512(src + i + 64);
        __m512i z6 = _mm512_loadu_si512(src + i + 128), z7 = _mm512_loadu_si512(src + i + 192);
        _mm512_storeu_si512(dst + i, z4);
        _mm512_storeu_si512(dst + i + 64, z5);
        _mm512_storeu_si512(dst + i + 128, z6);
        _mm512_storeu_si512(dst + i + 192, z7);
        z0 = fold(k, z0, z4);
        z1 = fold(k, z1, z5);
        z2 = fold(k, z2, z6);
        z3 = fold(k, z3, z7);
    }
    k = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(fold_keys + 2)));
    z0 = fold(k, z0, z1);
    z0 = fold(k, z0, z2);
    z0 = fold(k, z0, z3);
    uint64_t q[8];
    _mm512_storeu_si512(q, z0);
    uint64_t c = 0;
    for (int i = 0; i < 8; i++) c = _mm_crc32_u64(c, q[i]);
    return (uint32_t)c ^ 0xFFFFFFFFu;
}
#endif

/* crc_copy3: three whole units of n bytes (n a multiple of 8), copied and
 * checked in one interleaved pass. */
TARGET static void crc_copy3(const uint8_t *a, const uint8_t *b, const uint8_t *c, size_t n, uint8_t *da,
                             uint8_t *db, uint8_t *dc, uint32_t out[3]) {
    uint64_t x = 0xFFFFFFFFu, y = 0xFFFFFFFFu, z = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t va = load64(a + i), vb = load64(b + i), vc = load64(c + i);
        memcpy(da + i, &va, 8);
        memcpy(db + i, &vb, 8);
        memcpy(dc + i, &vc, 8);
        x = CRC64(x, va);
        y = CRC64(y, vb);
        z = CRC64(z, vc);
    }
    out[0] = (uint32_t)x ^ 0xFFFFFFFFu;
    out[1] = (uint32_t)y ^ 0xFFFFFFFFu;
    out[2] = (uint32_t)z ^ 0xFFFFFFFFu;
}

/* checked_copy copies src[off:off+n] (offsets within the lent range, which
 * starts at unit boundary 0 and holds `units` CRCs of `unit` bytes, the last
 * unit possibly short: `end` bytes in all) to dst, checking every unit it
 * touches. It returns -1, or the index of the first unit that failed. */
static Py_ssize_t checked_copy(const uint8_t *src, size_t end, size_t unit, const uint32_t *crcs, size_t off,
                               size_t n, uint8_t *dst) {
    size_t u = off / unit, stop = off + n;
    while (u * unit < stop) {
        size_t us = u * unit, ue = us + unit < end ? us + unit : end;
#ifdef HAVE_FOLD
        if (can_fold && us >= off && ue <= stop && ue - us == unit && unit % 256 == 0) {
            if (fold_copy(src + us, unit, dst + (us - off)) != crcs[u]) return (Py_ssize_t)u;
            u++;
            continue;
        }
#endif
        if (us >= off && us + 3 * unit <= stop && us + 3 * unit <= end && unit % 8 == 0) {
            uint32_t got[3];
            crc_copy3(src + us, src + us + unit, src + us + 2 * unit, unit, dst + (us - off),
                      dst + (us + unit - off), dst + (us + 2 * unit - off), got);
            for (int k = 0; k < 3; k++) {
                if (got[k] != crcs[u + k]) return (Py_ssize_t)(u + k);
            }
            u += 3;
            continue;
        }
        size_t lo = us > off ? us : off, hi = ue < stop ? ue : stop;
        if (crc_copy(src + us, ue - us, dst + (lo - off), lo - us, hi - us) != crcs[u]) return (Py_ssize_t)u;
        u++;
    }
    return -1;
}
#endif

/* copy(dst, src, end, unit, crcs, off, n) -> -1 or the bad unit's index;
 * raises OSError if the mapping faulted (the file was cut short). */
static PyObject *fast_copy(PyObject *self, PyObject *args) {
    (void)self;
#ifdef NO_CRC
    PyErr_SetString(PyExc_NotImplementedError, "strata._fast: no CRC32C instruction on this machine");
    return NULL;
#else
    Py_buffer dst, src, crcs;
    Py_ssize_t end, unit, off, n;
    if (!PyArg_ParseTuple(args, "w*y*nny*nn", &dst, &src, &end, &unit, &crcs, &off, &n)) return NULL;
    PyObject *result = NULL;
    size_t units = (size_t)crcs.len / 4;
    if (unit <= 0 || end < 0 || end > src.len || off < 0 || n < 0 || off + n > end || n > dst.len ||
        (size_t)((end + unit - 1) / unit) > units) {
        PyErr_SetString(PyExc_ValueError, "strata._fast.copy: ranges out of bounds");
        goto done;
    }
    Py_ssize_t bad = -1;
    int faulted = 0;
    sigjmp_buf jump;
    Py_BEGIN_ALLOW_THREADS
    if (sigsetjmp(jump, 1) == 0) {
        fault_jump = &jump;
        bad = checked_copy((const uint8_t *)src.buf, (size_t)end, (size_t)unit, (const uint32_t *)crcs.buf,
                           (size_t)off, (size_t)n, (uint8_t *)dst.buf);
    } else {
        faulted = 1;
    }
    fault_jump = NULL;
    Py_END_ALLOW_THREADS
    if (faulted) {
        PyErr_SetString(PyExc_OSError, "strata._fast.copy: the lent file was cut short under its mapping");
        goto done;
    }
    result = PyLong_FromSsize_t(bad);
done:
    PyBuffer_Release(&dst);
    PyBuffer_Release(&src);
    PyBuffer_Release(&crcs);
    return result;
#endif
}

/* take(src, end, unit, crcs, off, n) -> bytes, or the first bad unit's
 * index: copy() into a new bytes object, filled before anyone sees it. */
static PyObject *fast_take(PyObject *self, PyObject *args) {
    (void)self;
#ifdef NO_CRC
    PyErr_SetString(PyExc_NotImplementedError, "strata._fast: no CRC32C instruction on this machine");
    return NULL;
#else
    Py_buffer src, crcs;
    Py_ssize_t end, unit, off, n;
    if (!PyArg_ParseTuple(args, "y*nny*nn", &src, &end, &unit, &crcs, &off, &n)) return NULL;
    PyObject *out = NULL;
    size_t units = (size_t)crcs.len / 4;
    if (unit <= 0 || end < 0 || end > src.len || off < 0 || n < 0 || off + n > end ||
        (size_t)((end + unit - 1) / unit) > units) {
        PyErr_SetString(PyExc_ValueError, "strata._fast.take: ranges out of bounds");
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, n);
    if (out == NULL) goto done;
    uint8_t *dst = (uint8_t *)PyBytes_AsString(out);
    Py_ssize_t bad = -1;
    int faulted = 0;
    sigjmp_buf jump;
    Py_BEGIN_ALLOW_THREADS
    if (sigsetjmp(jump, 1) == 0) {
        fault_jump = &jump;
        bad = checked_copy((const uint8_t *)src.buf, (size_t)end, (size_t)unit, (const uint32_t *)crcs.buf,
                           (size_t)off, (size_t)n, dst);
    } else {
        faulted = 1;
    }
    fault_jump = NULL;
    Py_END_ALLOW_THREADS
    if (faulted || bad >= 0) {
        Py_DECREF(out);
        out = NULL;
        if (faulted) {
            PyErr_SetString(PyExc_OSError, "strata._fast.take: the lent file was cut short under its mapping");
        } else {
            out = PyLong_FromSsize_t(bad);
        }
    }
done:
    PyBuffer_Release(&src);
    PyBuffer_Release(&crcs);
    return out;
#endif
}

/* folds([on]) -> whether copies fold (AVX-512 and VPCLMULQDQ); with an
 * argument, a test turns folding off (or on again, where the CPU can). */
static PyObject *fast_folds(PyObject *self, PyObject *args) {
    (void)self;
    int on = -1;
    if (!PyArg_ParseTuple(args, "|p", &on)) return NULL;
#ifdef HAVE_FOLD
    if (on >= 0) {
        __builtin_cpu_init();
        can_fold = on && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                   __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("sse4.2");
    }
    return PyBool_FromLong(can_fold);
#else
    Py_RETURN_FALSE;
#endif
}

static PyObject *fast_available(PyObject *self, PyObject *args) {
    (void)self;
    (void)args;
#ifdef NO_CRC
    Py_RETURN_FALSE;
#else
    return PyBool_FromLong(HAVE_CRC());
#endif
}

static PyMethodDef methods[] = {
    {"copy", fast_copy, METH_VARARGS,
     "copy(dst, src, end, unit, crcs, off, n): copies src[off:off+n] to dst, checking each unit of src it "
     "touches against crcs (little-endian uint32 per unit); -1, or the first bad unit's index."},
    {"take", fast_take, METH_VARARGS,
     "take(src, end, unit, crcs, off, n): src[off:off+n] as new bytes, each unit it touches checked; "
     "or the first bad unit's index."},
    {"available", fast_available, METH_NOARGS, "Whether this machine has the CRC32C instruction."},
    {"folds", fast_folds, METH_VARARGS,
     "folds([on]): whether whole units are copied by folding (AVX-512, VPCLMULQDQ); on=False turns it off."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fast", "Fused copy and CRC32C check of lent cache files.",
                                    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__fast(void) {
#ifdef HAVE_FOLD
    __builtin_cpu_init();
    can_fold = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("sse4.2");
    fold_keys[0] = (uint64_t)x_pow_n(2048 + 63) << 32;
    fold_keys[1] = (uint64_t)x_pow_n(2048 - 1) << 32;
    fold_keys[2] = (uint64_t)x_pow_n(512 + 63) << 32;
    fold_keys[3] = (uint64_t)x_pow_n(512 - 1) << 32;
#endif
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_bus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &previous_bus) != 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        return NULL;
    }
    return PyModule_Create(&module);
}
