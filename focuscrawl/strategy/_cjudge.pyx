# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The online link judge's array steps at C speed: the compiled twins of
:mod:`focuscrawl.strategy.judgekernels` (same values, bit for bit; tests/test_strategy_judgekernels.py
checks both on the same arrays):

* :func:`row_sums` — ``np.add.reduce(w[ids[rows]], axis=1)``: each row's weights gathered and
  summed in NumPy's order (0.0 + its pairwise sum: eight running sums over blocks of eight, then
  the rest one by one), without the two gathered temporaries;
* :func:`adagrad_update` — the update of one AdaGrad step on the distinct ids of a batch: the
  gradient of each id (``np.bincount`` of the examples' gradients, in the same order), the L2
  term, the square sums and the weights, each read once and written once;
* :func:`adagrad_row` — the same for one example, its distinct ids found here (no
  ``np.unique``); :func:`numeric_update` — the dense weights' update;
* :func:`numbers` — ``judgekernels.numbers``: the static columns and the yields of rows of the
  judge's table (the yields in float32, as NumPy computes them);
* :class:`ContextIds` — ``linkfeatures.context_word_ids_python``: the ids of a link context's
  first distinct words, found on the string itself and looked up by their characters in a table
  of their own (no string made for a word seen before, no lower-cased copy of an ASCII text).

No Python arithmetic in the array steps, no NumPy call: plain IEEE double operations in the
order the NumPy code performs them (setup.py compiles it without contracting a multiply and an
add into one). Imports nothing of the package: :mod:`focuscrawl.strategy.compiled` loads it
(ABI checked).
"""

from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.unicode cimport Py_UNICODE_ISALPHA, Py_UNICODE_ISSPACE
from libc.math cimport sqrt
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc

from zlib import crc32 as _crc32

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void* PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, const void* data, Py_ssize_t index) noexcept nogil
    bint PyUnicode_IS_ASCII(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    object PyUnicode_Substring(object s, Py_ssize_t start, Py_ssize_t end)
    Py_ssize_t PyUnicode_FindChar(object s, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end,
                                  int direction) except -2
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)
    int PyUnicode_1BYTE_KIND

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


def adagrad_row(double[::1] w, double[::1] g2, const int[::1] ids, double g, double l2,
                double rate):
    """``adagrad_update`` of one example (its ``ids``, its gradient ``g``): its distinct ids
    sorted, each id's gradient ``g`` summed once per occurrence (from 0.0, as
    ``np.bincount``), then the same update."""
    cdef Py_ssize_t n = ids.shape[0], i, j, k, d = 0
    cdef int v
    cdef int* used
    cdef double* acc
    cdef double gu, wj, s
    for i in range(n):
        if ids[i] < 0 or ids[i] >= w.shape[0] or ids[i] >= g2.shape[0]:
            raise IndexError("id out of range")
    used = <int*>malloc((n if n > 0 else 1) * sizeof(int))
    acc = <double*>calloc(n if n > 0 else 1, sizeof(double))
    if used == NULL or acc == NULL:
        free(used)
        free(acc)
        raise MemoryError()
    try:
        for i in range(n):  # insertion into the sorted distinct ids; the sums in id order
            v = ids[i]
            j = 0
            while j < d and used[j] < v:
                j += 1
            if j == d or used[j] != v:
                for k in range(d, j, -1):
                    used[k] = used[k - 1]
                    acc[k] = acc[k - 1]
                used[j] = v
                acc[j] = 0.0
                d += 1
            acc[j] += g
        for j in range(d):
            if used[j] == 0:
                continue  # the padding id learns nothing
            wj = w[used[j]]
            gu = acc[j] + l2 * wj
            s = g2[used[j]] + gu * gu
            g2[used[j]] = s
            w[used[j]] = wj - rate * gu / sqrt(s)
    finally:
        free(used)
        free(acc)


def numeric_update(double[::1] wn, double[::1] gn2, const double[::1] gx, double l2,
                   double rate):
    """The dense weights' AdaGrad update from ``gx`` (the gradients times the features, summed
    over the batch): ``gn = gx + l2 × wn``, ``gn2 += gn²``, ``wn -= rate × gn / sqrt(gn2)``."""
    cdef Py_ssize_t n = wn.shape[0], i
    cdef double gn, s
    if gn2.shape[0] != n or gx.shape[0] != n:
        raise ValueError("shapes")
    for i in range(n):
        gn = gx[i] + l2 * wn[i]
        s = gn2[i] + gn * gn
        gn2[i] = s
        wn[i] = wn[i] - rate * gn / sqrt(s)


def numbers(const float[:, ::1] static, const int[:, ::1] slots, const float[::1] flat_n,
            const float[::1] flat_rel, Py_ssize_t arms, double prior, double a,
            double[:, ::1] out):
    """``judgekernels.numbers``: the static columns and the yields of each row into ``out``
    (the yields in float32 arithmetic, as NumPy computes them on the float32 counts)."""
    cdef Py_ssize_t m = static.shape[0], i, j, k
    cdef float rr, nn, t
    # (a Python float meets a float32 array: it is made a float32 first)
    cdef float ap = <float>(a * prior)
    cdef float af = <float>a
    cdef float pf = <float>prior
    if (static.shape[1] != 6 or slots.shape[0] != m or slots.shape[1] != 3
            or out.shape[0] != m or out.shape[1] != 11
            or flat_n.shape[0] < 3 * arms or flat_rel.shape[0] < 3 * arms):
        raise ValueError("shapes")
    for i in range(m):
        for j in range(5):
            out[i, j] = static[i, j]
        out[i, 10] = static[i, 5]
        for j in range(3):
            k = slots[i, j]
            if k < 0 or k >= arms:
                raise IndexError("slot out of range")
            rr = flat_rel[j * arms + k]
            nn = flat_n[j * arms + k]
            t = (rr + ap) / (nn + af) - pf
            out[i, 7 + j] = t


# -- link contexts -------------------------------------------------------------------------

cdef struct Entry:
    uint64_t hash
    PyObject* word  # NULL: an empty slot (the table owns a reference to each word)
    uint64_t key  # the word's characters, one a byte, when it is ASCII and at most 8 long
    int length  # the word's length when ``key`` holds it; -1 otherwise (compare ``word``)
    int id  # the word's id; -1: a stop word


cdef inline int _key_of(str word, uint64_t* key):
    """The length of ``word`` with its characters packed into ``key`` (ASCII, at most 8 of
    them), else -1."""
    cdef Py_ssize_t n = len(word), k
    cdef Py_UCS4 c
    cdef uint64_t got = 0
    if n > 8:
        return -1
    for k in range(n):
        c = word[k]
        if c >= 128:
            return -1
        got |= (<uint64_t>c) << (8 * k)
    key[0] = got
    return <int>n


cdef inline uint64_t _mix(uint64_t h, Py_UCS4 c) noexcept nogil:
    return (h ^ <uint64_t>c) * <uint64_t>0x100000001b3


cdef class ContextIds:
    """``context_word_ids_python(context, {}, edges, stop, salt, mask, limit, max_cache)`` of
    each context given to :meth:`ids`: the ids of the first ``limit`` (at least one) distinct words of
    ``context.lower().split()``, each token stripped of ``edges`` and kept when it has two
    characters or more, starts with a letter and is not in ``stop``; a word's id is
    ``((crc32(word) ^ salt) * 2654435761 >> 7) & mask or 1``. The words seen (and the stop
    words) are kept in an open-addressing table keyed by a hash of their characters, verified
    character by character; it is emptied when it holds ``max_cache`` words (the ids do not
    change: they are a function of the word)."""

    cdef Entry* table
    cdef Py_ssize_t size  # slots, a power of two
    cdef Py_ssize_t count  # words held (stop words included)
    cdef Py_ssize_t max_cache, limit
    cdef str edges
    cdef uint64_t edge_bits[2]
    cdef object stop, salt, mask
    cdef PyObject** seen  # the words kept from the current context (``limit`` of them)

    def __cinit__(self, str edges, stop, salt, mask, Py_ssize_t limit, Py_ssize_t max_cache):
        cdef Py_ssize_t k
        cdef unsigned int code
        self.edges = edges
        self.stop = frozenset(stop)
        self.salt = salt
        self.mask = mask
        self.limit = limit
        self.max_cache = max(max_cache, 1)
        self.edge_bits[0] = 0
        self.edge_bits[1] = 0
        for k in range(len(edges)):
            code = <unsigned int>(<Py_UCS4>edges[k])
            if code < 128:
                self.edge_bits[code >> 6] |= (<uint64_t>1) << (code & 63)
        self.seen = <PyObject**>malloc((limit if limit > 0 else 1) * sizeof(PyObject*))
        if self.seen == NULL:
            raise MemoryError()
        self.size = 0
        self.table = NULL
        self._reset()

    def __dealloc__(self):
        self._release()
        free(self.seen)

    cdef void _release(self) noexcept:
        cdef Py_ssize_t i
        if self.table != NULL:
            for i in range(self.size):
                Py_XDECREF(self.table[i].word)
            free(self.table)
            self.table = NULL
        self.count = 0

    cdef int _reset(self) except -1:
        """An empty table holding only the stop words."""
        cdef str word
        self._release()
        self.size = 1024
        while self.size < 4 * len(self.stop):
            self.size *= 2
        self.table = <Entry*>calloc(self.size, sizeof(Entry))
        if self.table == NULL:
            raise MemoryError()
        for word in self.stop:
            if self._find_str(word) == NULL:
                self._insert(self._hash_str(word), word, -1)
        return 0

    cdef inline bint _is_edge(self, Py_UCS4 c) except -1:
        cdef unsigned int code = <unsigned int>c
        if code < 128:
            return (self.edge_bits[code >> 6] >> (code & 63)) & 1
        return PyUnicode_FindChar(self.edges, c, 0, len(self.edges), 1) >= 0

    cdef uint64_t _hash_str(self, str word):
        cdef Py_ssize_t i
        cdef uint64_t h = <uint64_t>0xcbf29ce484222325
        for i in range(len(word)):
            h = _mix(h, <Py_UCS4>word[i])
        return h

    cdef Entry* _find_str(self, str word):
        cdef uint64_t h = self._hash_str(word)
        cdef Py_ssize_t i = <Py_ssize_t>(h & <uint64_t>(self.size - 1))
        while self.table[i].word != NULL:
            if self.table[i].hash == h and <str>self.table[i].word == word:
                return &self.table[i]
            i = (i + 1) & (self.size - 1)
        return NULL

    cdef Entry* _insert(self, uint64_t h, str word, Py_ssize_t id) except NULL:
        cdef Py_ssize_t i
        cdef uint64_t key = 0
        if 2 * (self.count + 1) > self.size:
            self._grow()
        i = <Py_ssize_t>(h & <uint64_t>(self.size - 1))
        while self.table[i].word != NULL:
            i = (i + 1) & (self.size - 1)
        Py_INCREF(word)
        self.table[i].hash = h
        self.table[i].word = <PyObject*>word
        self.table[i].id = <int>id
        self.table[i].length = _key_of(word, &key)
        self.table[i].key = key
        self.count += 1
        return &self.table[i]

    cdef int _grow(self) except -1:
        cdef Entry* old = self.table
        cdef Py_ssize_t old_size = self.size, i, j
        cdef Entry* table = <Entry*>calloc(2 * old_size, sizeof(Entry))
        if table == NULL:
            raise MemoryError()
        self.table = table
        self.size = 2 * old_size
        for i in range(old_size):
            if old[i].word != NULL:
                j = <Py_ssize_t>(old[i].hash & <uint64_t>(self.size - 1))
                while table[j].word != NULL:
                    j = (j + 1) & (self.size - 1)
                table[j] = old[i]  # (the reference moves with it)
        free(old)
        return 0

    def __len__(self):
        """Words held, the stop words included."""
        return self.count

    def ids(self, str context):
        """The ids of the first ``limit`` distinct words of ``context`` (see the class)."""
        cdef str low
        cdef int kind
        cdef const void* data
        cdef const unsigned char* ascii = NULL
        cdef unsigned char* lowered = NULL
        cdef Py_ssize_t n, i, start, end, k, nseen = 0, length
        cdef Py_UCS4 c
        cdef uint64_t h
        cdef Entry* e
        cdef Py_ssize_t slot
        cdef uint64_t key
        cdef int keyed  # the token's length when its characters fit ``key`` (else -1)
        cdef PyObject* w
        cdef str word
        cdef list out = []
        cdef bint found
        if self.count >= self.max_cache:
            self._reset()
        if PyUnicode_IS_ASCII(context):
            # lower-cased on the fly (an ASCII text's lower() changes A-Z only)
            low = context
            ascii = <const unsigned char*>PyUnicode_DATA(context)
        else:
            low = context.lower()
        kind = PyUnicode_KIND(low)
        data = PyUnicode_DATA(low)
        n = PyUnicode_GET_LENGTH(low)
        i = 0
        try:
            while i < n:
                while i < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
                    i += 1
                start = i
                while i < n and not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
                    i += 1
                end = i
                while start < end and self._is_edge(self._char(ascii, kind, data, start)):
                    start += 1
                while end > start and self._is_edge(self._char(ascii, kind, data, end - 1)):
                    end -= 1
                length = end - start
                if length < 2 or not Py_UNICODE_ISALPHA(self._char(ascii, kind, data, start)):
                    continue
                h = <uint64_t>0xcbf29ce484222325
                key = 0
                keyed = <int>length if length <= 8 else -1
                for k in range(start, end):
                    c = self._char(ascii, kind, data, k)
                    h = _mix(h, c)
                    if keyed >= 0:
                        if c < 128:
                            key |= (<uint64_t>c) << (8 * (k - start))
                        else:
                            keyed = -1
                # the word's entry: its hash and its characters (packed in the entry for a
                # short ASCII word: the word's string is not read)
                slot = <Py_ssize_t>(h & <uint64_t>(self.size - 1))
                e = NULL
                while self.table[slot].word != NULL:
                    if self.table[slot].hash == h:
                        if self.table[slot].length >= 0:
                            found = self.table[slot].length == keyed and self.table[slot].key == key
                        else:
                            found = self._same(
                                self.table[slot].word, ascii, kind, data, start, length
                            )
                        if found:
                            e = &self.table[slot]
                            break
                    slot = (slot + 1) & (self.size - 1)
                if e == NULL:  # a new word: its string, its id
                    if ascii != NULL:
                        if lowered == NULL:
                            lowered = <unsigned char*>malloc(n)
                            if lowered == NULL:
                                raise MemoryError()
                        for k in range(length):
                            lowered[k] = <unsigned char>self._char(ascii, kind, data, start + k)
                        word = PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, lowered, length)
                    else:
                        word = PyUnicode_Substring(low, start, end)
                    if word in self.stop:  # (a stop word is in the table: not reached)
                        e = self._insert(h, word, -1)
                    else:
                        e = self._insert(
                            h, word, ((_crc32(word.encode()) ^ self.salt) * 2654435761 >> 7)
                            & self.mask or 1
                        )
                if e.id < 0:
                    continue  # a stop word
                w = e.word
                found = False
                for k in range(nseen):
                    if self.seen[k] == w:
                        found = True
                        break
                if found:
                    continue
                self.seen[nseen] = w
                nseen += 1
                out.append(e.id)
                if nseen >= self.limit:
                    break
        finally:
            free(lowered)
        return out

    cdef inline Py_UCS4 _char(self, const unsigned char* ascii, int kind, const void* data,
                              Py_ssize_t i) noexcept:
        cdef unsigned char b
        if ascii != NULL:
            b = ascii[i]
            return b + 32 if 65 <= b <= 90 else b
        return PyUnicode_READ(kind, data, i)

    cdef inline bint _same(self, PyObject* stored, const unsigned char* ascii, int kind,
                           const void* data, Py_ssize_t start, Py_ssize_t length) noexcept:
        cdef str word = <str>stored
        cdef int wkind
        cdef const void* wdata
        cdef Py_ssize_t k
        if PyUnicode_GET_LENGTH(word) != length:
            return False
        wkind = PyUnicode_KIND(word)
        wdata = PyUnicode_DATA(word)
        for k in range(length):
            if PyUnicode_READ(wkind, wdata, k) != self._char(ascii, kind, data, start + k):
                return False
        return True
