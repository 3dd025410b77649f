# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The online link judge's array steps at C speed: the compiled twins of
:mod:`focuscrawl.strategy.judgekernels` (same values, bit for bit; tests/test_strategy_judgekernels.py
checks both on the same arrays):

* :func:`row_sums` — ``np.add.reduce(w[ids[rows]], axis=1)``: each row's weights gathered and
  summed in NumPy's order (0.0 + its pairwise sum: eight running sums over blocks of eight, then
  the rest one by one), without the two gathered temporaries;
* :func:`adagrad_update` — the update of one AdaGrad step on the distinct ids of a batch: the
  gradient of each id (``np.bincount`` of the examples' gradients, in the same order), the L2
  term, the square sums and the weights, each read once and written once.

No Python arithmetic, no NumPy call: plain IEEE double operations in the order the NumPy code
performs them (setup.py compiles it without contracting a multiply and an add into one).
Imports nothing of the package: :mod:`focuscrawl.strategy.compiled` loads it (ABI checked).
"""

from libc.math cimport sqrt
from libc.stdlib cimport calloc, free

cdef extern from *:
    """
    #ifndef FOCUSCRAWL_CJUDGE_ABI
    #define FOCUSCRAWL_CJUDGE_ABI -1  /* built without setup.py: never taken as current */
    #endif
    """
    const int FOCUSCRAWL_CJUDGE_ABI

# compiled.CJUDGE_ABI when this module was built (setup.py compiles it in)
ABI = FOCUSCRAWL_CJUDGE_ABI

# the ids' type (int32 tables) and the index type (np.intp: long on LP64, long long on LLP64)
ctypedef fused ids_t:
    int
    long
    long long

ctypedef fused idx_t:
    int
    long
    long long


cdef inline double _pairwise(const double* a, Py_ssize_t n) noexcept nogil:
    """NumPy's pairwise sum of ``a[:n]`` (``DOUBLE_pairwise_sum``, PW_BLOCKSIZE 128)."""
    cdef double res, r0, r1, r2, r3, r4, r5, r6, r7
    cdef Py_ssize_t i, n2
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    if n <= 128:
        r0 = a[0]
        r1 = a[1]
        r2 = a[2]
        r3 = a[3]
        r4 = a[4]
        r5 = a[5]
        r6 = a[6]
        r7 = a[7]
        i = 8
        while i < n - (n % 8):
            r0 += a[i]
            r1 += a[i + 1]
            r2 += a[i + 2]
            r3 += a[i + 3]
            r4 += a[i + 4]
            r5 += a[i + 5]
            r6 += a[i + 6]
            r7 += a[i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise(a, n2) + _pairwise(a + n2, n - n2)


def row_sums(const double[::1] w, const ids_t[:, ::1] ids, const idx_t[::1] rows,
             double[::1] out):
    """``out[i] = np.add.reduce(w[ids[rows[i]]])`` for every ``i`` (``rows`` distinct or not;
    each row's ids in ``[0, len(w))``)."""
    cdef Py_ssize_t m = rows.shape[0], width = ids.shape[1], i, j
    cdef idx_t row
    cdef double* buf
    if out.shape[0] < m:
        raise ValueError("out is shorter than rows")
    for i in range(m):
        if rows[i] < 0 or rows[i] >= ids.shape[0]:
            raise IndexError("row out of range")
    buf = <double*>calloc(width if width > 0 else 1, sizeof(double))
    if buf == NULL:
        raise MemoryError()
    try:
        for i in range(m):
            row = rows[i]
            for j in range(width):
                if ids[row, j] < 0 or ids[row, j] >= w.shape[0]:
                    raise IndexError("id out of range")
                buf[j] = w[ids[row, j]]
            out[i] = 0.0 + _pairwise(buf, width)
    finally:
        free(buf)


def adagrad_update(double[::1] w, double[::1] g2, const idx_t[::1] used,
                   const idx_t[::1] inverse, const double[::1] g, Py_ssize_t width,
                   double l2, double rate):
    """One AdaGrad step's update of the weights ``w`` and square sums ``g2`` of the distinct
    ids ``used`` (sorted; id 0, the padding, learns nothing): each id's gradient is the sum of
    ``g[p // width]`` over the positions ``p`` where ``inverse[p]`` is its index (in position
    order, as ``np.bincount``), plus ``l2 × w``; then ``g2 += grad²`` and
    ``w -= rate × grad / sqrt(g2)``."""
    cdef Py_ssize_t n = used.shape[0], total = inverse.shape[0], p, j, start
    cdef double gu, wj, s
    cdef double* acc
    if width <= 0 or total != g.shape[0] * width:
        raise ValueError("inverse is not width × len(g) long")
    for j in range(n):
        if used[j] < 0 or used[j] >= w.shape[0] or used[j] >= g2.shape[0]:
            raise IndexError("id out of range")
    acc = <double*>calloc(n if n > 0 else 1, sizeof(double))
    if acc == NULL:
        raise MemoryError()
    try:
        for p in range(total):
            j = inverse[p]
            if j < 0 or j >= n:
                raise IndexError("inverse out of range")
            acc[j] += g[p // width]
        start = 1 if n > 0 and used[0] == 0 else 0
        for j in range(start, n):
            wj = w[used[j]]
            gu = acc[j] + l2 * wj
            s = g2[used[j]] + gu * gu
            g2[used[j]] = s
            w[used[j]] = wj - rate * gu / sqrt(s)
    finally:
        free(acc)
