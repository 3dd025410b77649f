# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The client-built tsvector at C speed: the compiled twin of three pure-Python steps of
:mod:`focuscrawl.index.pgtokens` and :mod:`focuscrawl.index.pgtsvector` (same results, tested
for equality on hostile text: tests/test_index_pgtsvector.py):

* :func:`tokens` — ``pgtokens.tokens`` on lower-cased text: runs of plain words split here;
  a run with a character that may join tokens into another kind (``pgtokens._TRIGGER``) goes
  to the Python token rules (the ``span_tokens`` given: ``pgtokens.span_tokens``);
* :func:`keys_of` — ``pgtsvector._keys`` after the tokens: each token's lexeme bytes from the
  cache, the missing ones from ``resolve`` (the stemmer, in Python);
* :func:`page_keys` — both in one pass, with a compiled cache (:class:`LexemeCache`): no
  string made for a token seen before;
* :func:`encode_page` — ``encode(vectors(title, body))`` for both vectors when no cap of the
  server is reached (else None: the Python path, which keeps the caps).

Imports nothing of the package: :mod:`focuscrawl.index.compiled` loads it (ABI checked).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject
from cpython.unicode cimport Py_UNICODE_ISALNUM, Py_UNICODE_ISSPACE
from cpython.ref cimport Py_DECREF, Py_INCREF
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort
from libc.string cimport memcmp, memcpy

cdef extern from *:
    """
    #ifndef FOCUSCRAWL_CTSV_ABI
    #define FOCUSCRAWL_CTSV_ABI -1  /* built without setup.py: never taken as current */
    #endif
    """
    const int FOCUSCRAWL_CTSV_ABI

# compiled.CTSV_ABI when this module was built (setup.py compiles it in)
ABI = FOCUSCRAWL_CTSV_ABI

DEF MAX_POS = 16383
DEF MAX_LEXEME_POSITIONS = 255
DEF WEIGHT_A = 3 << 14


cdef extern from "Python.h":
    int PyUnicode_KIND(object s)
    void *PyUnicode_DATA(object s)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t i) nogil


cdef inline bint _space(Py_UCS4 c):
    # str.isspace / re's \s: on ASCII \t \n \v \f \r, \x1c-\x1f and the space
    if c < 128:
        return c == 32 or 9 <= c <= 13 or 28 <= c <= 31
    return Py_UNICODE_ISSPACE(c)


cdef inline bint _alnum(Py_UCS4 c):
    # re's [^\W_] (str.isalnum)
    if c < 128:
        return (97 <= c <= 122) or (48 <= c <= 57) or (65 <= c <= 90)
    return Py_UNICODE_ISALNUM(c)


cdef inline bint _joiner(Py_UCS4 c):
    # [.@/:&~+\-]
    return (c == u'.' or c == u'@' or c == u'/' or c == u':' or c == u'&' or c == u'~'
            or c == u'+' or c == u'-')


cdef inline bint _closer(Py_UCS4 c):
    # [,;!()\"'\[\]]
    return (c == u',' or c == u';' or c == u'!' or c == u'(' or c == u')' or c == u'"'
            or c == u"'" or c == u'[' or c == u']')


cdef inline bint _digit(Py_UCS4 c):
    return u'0' <= c <= u'9'


cdef inline bint _lower_ascii(Py_UCS4 c):
    return u'a' <= c <= u'z'


cdef inline Py_ssize_t _run_end(int kind, void *data, Py_ssize_t n, Py_ssize_t i,
                                bint *trigger) noexcept:
    """The end of the run of non-space characters from ``i``; ``trigger``: whether it holds
    a joiner before a non-space, non-closing character, or a digit, ``e`` and a digit or sign
    (the run is then split by the hyphen and number rules)."""
    cdef Py_UCS4 c, d
    trigger[0] = False
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if _space(c):
            break
        if not trigger[0] and i + 1 < n:
            d = PyUnicode_READ(kind, data, i + 1)
            if _joiner(c):
                trigger[0] = not _space(d) and not _closer(d)
            elif _digit(c) and d == u'e' and i + 2 < n:
                d = PyUnicode_READ(kind, data, i + 2)
                trigger[0] = _digit(d) or d == u'+' or d == u'-'
        i += 1
    return i


cdef bint _hyphenated(str low, Py_ssize_t start, Py_ssize_t end, list out) except -1:
    """The tokens of the most common run the token rules read (half of them in prose): ASCII
    words joined by single hyphens (``north-east``, ``state-of-the-art``), with at most one of
    ``("'`` before and one of ``,.;:)"'!?`` after. No rule before the hyphenated word's can
    match such a run (they need a digit, ``@``, ``/``, ``~``, ``&``, ``://`` or a dot with a
    letter or a second dot after it), so it gives the word, then its parts, as
    ``pgtokens.span_tokens``; False (nothing added) for any other run."""
    cdef Py_ssize_t i = start, j = end, a, parts = 0
    cdef Py_UCS4 c
    c = low[i]
    if c == u'(' or c == u'"' or c == u"'":
        i += 1
    c = low[j - 1]
    if (c == u',' or c == u'.' or c == u';' or c == u':' or c == u')' or c == u'"'
            or c == u"'" or c == u'!' or c == u'?'):
        j -= 1
    if i >= j:
        return False
    a = i
    while True:  # a part: letters, then a hyphen and the next part, or the end
        if not _lower_ascii(low[a]):
            return False
        a += 1
        while a < j and _lower_ascii(low[a]):
            a += 1
        parts += 1
        if a == j:
            break
        if low[a] != u'-' or a + 1 >= j:
            return False
        a += 1
    if parts < 2:
        return False
    word = low[i:j]
    out.append(word)
    out.extend(word.split("-"))
    return True


def tokens(str low, object span_tokens, Py_ssize_t max_run):
    """The tokens of ``low`` (lower-cased text) that give a lexeme, in order, as
    ``pgtokens.tokens``; None when a run of non-space characters is longer than ``max_run``
    (``pgtokens.parsable`` refuses it)."""
    cdef Py_ssize_t n = len(low), i = 0, start, end, j, a
    cdef int kind = PyUnicode_KIND(low)
    cdef void *data = PyUnicode_DATA(low)
    cdef Py_UCS4 c
    cdef bint trigger
    cdef list out = []
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if _space(c):
            i += 1
            continue
        start = i
        end = _run_end(kind, data, n, i, &trigger)
        i = end
        if end - start > max_run:
            return None
        if trigger:
            if not _hyphenated(low, start, end, out):
                span_tokens(low, start, end, out)
            continue
        j = start
        while j < end:
            if _alnum(PyUnicode_READ(kind, data, j)):
                a = j
                j += 1
                while j < end and _alnum(PyUnicode_READ(kind, data, j)):
                    j += 1
                out.append(low[a:j])
            else:
                j += 1
    return out


cdef struct Entry:
    uint64_t hash  # 0: an empty slot
    Py_ssize_t length
    Py_UCS4 *chars
    PyObject *key  # a strong reference to the lexeme's bytes


cdef inline uint64_t _hash(int kind, void *data, Py_ssize_t a, Py_ssize_t b) noexcept:
    # FNV-1a over the code points (never 0: that marks an empty slot)
    cdef uint64_t h = 14695981039346656037ULL
    cdef Py_ssize_t i
    for i in range(a, b):
        h = (h ^ <uint64_t>PyUnicode_READ(kind, data, i)) * 1099511628211ULL
    return h if h else 1


cdef class LexemeCache:
    """Tokens' lexeme bytes, looked up straight from the text's characters: no string made
    for a token already seen, one probe of a flat table (a dict of str keys cost three cache
    misses a lookup: a quarter of the crawler's CPU per page). Tokens longer than
    ``max_chars`` are not kept; past ``limit`` entries the table is cleared (as
    ``pgtsvector._key_of``)."""

    cdef Entry *table
    cdef Py_ssize_t size, count
    cdef readonly Py_ssize_t limit, max_chars

    def __cinit__(self, Py_ssize_t limit=200_000, Py_ssize_t max_chars=64):
        self.limit, self.max_chars = limit, max_chars
        self.size, self.count = 0, 0
        self.table = NULL
        self._allocate(1024)

    def __dealloc__(self):
        self._release()

    def __len__(self):
        return self.count

    cdef void _release(self) noexcept:
        cdef Py_ssize_t i
        if self.table is NULL:
            return
        for i in range(self.size):
            if self.table[i].hash:
                free(self.table[i].chars)
                Py_DECREF(<object>self.table[i].key)
        free(self.table)
        self.table = NULL
        self.size = self.count = 0

    cdef int _allocate(self, Py_ssize_t size) except -1:
        self.table = <Entry *>calloc(size, sizeof(Entry))
        if self.table is NULL:
            raise MemoryError()
        self.size = size
        return 0

    def clear(self):
        self._release()
        self._allocate(1024)

    cdef int _grow(self) except -1:
        cdef Entry *old = self.table
        cdef Py_ssize_t old_size = self.size, i, j
        self._allocate(old_size * 2)
        for i in range(old_size):
            if old[i].hash:
                j = <Py_ssize_t>(old[i].hash & <uint64_t>(self.size - 1))
                while self.table[j].hash:
                    j = (j + 1) & (self.size - 1)
                self.table[j] = old[i]
        free(old)
        return 0

    cdef PyObject *find(self, uint64_t h, int kind, void *data, Py_ssize_t a, Py_ssize_t b):
        """The lexeme bytes of the token ``[a, b)`` of the text (a borrowed reference), or NULL."""
        cdef Py_ssize_t j = <Py_ssize_t>(h & <uint64_t>(self.size - 1)), n = b - a, k
        cdef Entry *e
        while True:
            e = &self.table[j]
            if not e.hash:
                return NULL
            if e.hash == h and e.length == n:
                k = 0
                while k < n and e.chars[k] == PyUnicode_READ(kind, data, a + k):
                    k += 1
                if k == n:
                    return e.key
            j = (j + 1) & (self.size - 1)

    cdef int add(self, uint64_t h, str tok, bytes key) except -1:
        cdef Py_ssize_t n = len(tok), j, k
        cdef int kind = PyUnicode_KIND(tok)
        cdef void *data = PyUnicode_DATA(tok)
        cdef Py_UCS4 *chars
        if n > self.max_chars or self.find(h, kind, data, 0, n) is not NULL:
            return 0
        if self.count >= self.limit:
            self.clear()
        if (self.count + 1) * 2 > self.size:
            self._grow()
        chars = <Py_UCS4 *>malloc((n if n else 1) * sizeof(Py_UCS4))
        if chars is NULL:
            raise MemoryError()
        for k in range(n):
            chars[k] = PyUnicode_READ(kind, data, k)
        j = <Py_ssize_t>(h & <uint64_t>(self.size - 1))
        while self.table[j].hash:
            j = (j + 1) & (self.size - 1)
        Py_INCREF(key)
        self.table[j].hash, self.table[j].length = h, n
        self.table[j].chars, self.table[j].key = chars, <PyObject *>key
        self.count += 1
        return 0


cdef int _lookup(LexemeCache cache, str text, int kind, void *data, Py_ssize_t a,
                 Py_ssize_t b, str tok, list out, list missing) except -1:
    """Append the lexeme of the token ``text[a:b]`` (``tok`` when made already), or None with
    the token and its place in ``missing``."""
    cdef uint64_t h = _hash(kind, data, a, b)
    cdef PyObject *got = cache.find(h, kind, data, a, b)
    if got is not NULL:
        out.append(<object>got)
        return 0
    missing.append((len(out), text[a:b] if tok is None else tok, h))
    out.append(None)
    return 0


def page_keys(str low, LexemeCache cache, object lexeme_bytes, object span_tokens,
              Py_ssize_t max_run):
    """``keys_of(tokens(low, …), …)`` in one pass, the lexemes from ``cache`` (the missing ones
    from ``lexeme_bytes``, a dict token → bytes, then kept); None for a run too long."""
    cdef Py_ssize_t n = len(low), i = 0, start, end, j, a, k
    cdef int kind = PyUnicode_KIND(low)
    cdef void *data = PyUnicode_DATA(low)
    cdef int tkind
    cdef void *tdata
    cdef Py_UCS4 c
    cdef bint trigger, empty = False
    cdef list out = [], missing = [], run
    cdef str tok
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if _space(c):
            i += 1
            continue
        start = i
        end = _run_end(kind, data, n, i, &trigger)
        i = end
        if end - start > max_run:
            return None
        if trigger:
            run = []
            if not _hyphenated(low, start, end, run):
                span_tokens(low, start, end, run)
            for tok in run:
                tkind, tdata = PyUnicode_KIND(tok), PyUnicode_DATA(tok)
                _lookup(cache, tok, tkind, tdata, 0, len(tok), tok, out, missing)
            continue
        j = start
        while j < end:
            if _alnum(PyUnicode_READ(kind, data, j)):
                a = j
                j += 1
                while j < end and _alnum(PyUnicode_READ(kind, data, j)):
                    j += 1
                _lookup(cache, low, kind, data, a, j, None, out, missing)
            else:
                j += 1
    if missing:
        found = lexeme_bytes(list(dict.fromkeys([m[1] for m in missing])))
        for k, tok, h in missing:
            key = found[tok]
            out[k] = key
            cache.add(h, tok, key)
    for key in out:
        if PyBytes_GET_SIZE(key) == 0:
            empty = True
            break
    if empty:  # a token the server skips (too long)
        return [key for key in out if PyBytes_GET_SIZE(key)]
    return out


def keys_of(list toks, dict key_of, object resolve):
    """Each token's lexeme bytes (UTF-8 and a NUL) from ``key_of``; the missing tokens (each
    once, in first-seen order) given to ``resolve``, which returns a dict token → bytes (b""
    for a token the server skips: left out of the result), as ``pgtsvector._keys``."""
    cdef Py_ssize_t n = PyList_GET_SIZE(toks), i
    cdef list out = [None] * n
    cdef list missing = None
    cdef dict seen
    cdef object tok, key
    cdef PyObject *got
    cdef bint empty = False
    for i in range(n):
        tok = <object>PyList_GET_ITEM(toks, i)
        got = PyDict_GetItem(key_of, tok)
        if got is NULL:
            if missing is None:
                missing, seen = [], {}
            if PyDict_GetItem(seen, tok) is NULL:
                PyDict_SetItem(seen, tok, True)
                missing.append(tok)
        else:
            key = <object>got
            out[i] = key
            if PyBytes_GET_SIZE(key) == 0:
                empty = True
    if missing is not None:
        found = resolve(missing)
        for i in range(n):
            if out[i] is None:
                key = found[toks[i]]
                out[i] = key
                if PyBytes_GET_SIZE(key) == 0:
                    empty = True
    if empty:
        return [k for k in out if PyBytes_GET_SIZE(k)]
    return out


cdef struct Slot:
    const char *key
    Py_ssize_t size
    Py_ssize_t count
    Py_ssize_t offset
    Py_ssize_t group  # the first slot of the same lexeme, in sorted order


cdef int _cmp_slots(const void *pa, const void *pb) noexcept nogil:
    cdef const Slot *a = (<const Slot **>pa)[0]
    cdef const Slot *b = (<const Slot **>pb)[0]
    cdef Py_ssize_t m = a.size if a.size < b.size else b.size
    cdef int r = memcmp(a.key, b.key, m)
    if r:
        return r
    return (a.size > b.size) - (a.size < b.size)


cdef inline void _put16(unsigned char *p, unsigned int v) noexcept nogil:
    p[0] = (v >> 8) & 0xFF
    p[1] = v & 0xFF


cdef inline size_t _mix(size_t x) noexcept nogil:
    x ^= x >> 17
    x *= <size_t>0xed5ad4bb
    x ^= x >> 11
    return x


cdef bytes _encode(list keys, Py_ssize_t count, unsigned int title_weight,
                   Py_ssize_t title_end, Py_ssize_t *too_many):
    """The binary tsvector of ``keys[:count]`` at positions 1.. (those before ``title_end``
    weighted ``title_weight``); None with ``too_many[0]`` set when a lexeme has
    MAX_LEXEME_POSITIONS positions or more. The same lexeme is mostly the same bytes object
    (a token's, from the cache): slots by object first (a table of pointers), then the sort
    by bytes merges the slots of equal lexemes made from other tokens (``bird``, ``birds``)."""
    cdef Py_ssize_t i, s, g, nslots = 0, nlex = 0, total = 4, k, size = 16, j
    cdef Slot *slots = NULL
    cdef Slot **order = NULL
    cdef Py_ssize_t *table = NULL
    cdef Py_ssize_t *slot_at = NULL
    cdef Py_ssize_t *fill = NULL
    cdef Py_ssize_t *lex_count = NULL
    cdef unsigned short *pos = NULL
    cdef PyObject *obj
    cdef bytes result
    cdef unsigned char *p
    cdef unsigned int value
    too_many[0] = 0
    if count == 0:
        return b"\0\0\0\0"
    while size < 2 * count:
        size *= 2
    try:
        slots = <Slot *>malloc(count * sizeof(Slot))
        slot_at = <Py_ssize_t *>malloc(count * sizeof(Py_ssize_t))
        table = <Py_ssize_t *>malloc(size * sizeof(Py_ssize_t))
        if slots is NULL or slot_at is NULL or table is NULL:
            raise MemoryError()
        for j in range(size):
            table[j] = -1
        for i in range(count):
            obj = PyList_GET_ITEM(keys, i)
            j = <Py_ssize_t>(_mix(<size_t>obj) & <size_t>(size - 1))
            while table[j] >= 0 and slots[table[j]].key != PyBytes_AS_STRING(<object>obj):
                j = (j + 1) & (size - 1)
            s = table[j]
            if s < 0:
                s = table[j] = nslots
                nslots += 1
                slots[s].key = PyBytes_AS_STRING(<object>obj)
                slots[s].size = PyBytes_GET_SIZE(<object>obj)
                slots[s].count = 0
            slots[s].count += 1
            slot_at[i] = s
        order = <Slot **>malloc(nslots * sizeof(Slot *))
        fill = <Py_ssize_t *>malloc(nslots * sizeof(Py_ssize_t))
        lex_count = <Py_ssize_t *>malloc(nslots * sizeof(Py_ssize_t))
        pos = <unsigned short *>malloc(count * sizeof(unsigned short))
        if order is NULL or fill is NULL or lex_count is NULL or pos is NULL:
            raise MemoryError()
        for s in range(nslots):
            order[s] = &slots[s]
        qsort(order, nslots, sizeof(Slot *), _cmp_slots)
        # each lexeme (a run of equal slots in sorted order): its positions' place
        k = 0
        for s in range(nslots):
            if s and _cmp_slots(&order[s - 1], &order[s]) == 0:
                order[s].group = order[s - 1].group
            else:
                order[s].group = nlex
                lex_count[nlex] = 0
                fill[nlex] = 0
                nlex += 1
                total += order[s].size + 2
            lex_count[order[s].group] += order[s].count
        for g in range(nlex):
            if lex_count[g] >= MAX_LEXEME_POSITIONS:
                too_many[0] = 1
                return None
            fill[g] = k
            k += lex_count[g]
        for i in range(count):  # in position order: each lexeme's positions ascending
            g = slots[slot_at[i]].group
            value = <unsigned int>(i + 1)
            if i < title_end:
                value |= title_weight
            pos[fill[g]] = <unsigned short>value
            fill[g] += 1
        total += 2 * count
        result = PyBytes_FromStringAndSize(NULL, total)
        p = <unsigned char *>PyBytes_AS_STRING(result)
        p[0] = (nlex >> 24) & 0xFF
        p[1] = (nlex >> 16) & 0xFF
        p[2] = (nlex >> 8) & 0xFF
        p[3] = nlex & 0xFF
        p += 4
        k = 0
        for s in range(nslots):
            if s and order[s].group == order[s - 1].group:
                continue
            g = order[s].group
            memcpy(p, order[s].key, order[s].size)
            p += order[s].size
            _put16(p, <unsigned int>lex_count[g])
            p += 2
            for j in range(k, k + lex_count[g]):
                _put16(p, pos[j])
                p += 2
            k += lex_count[g]
        return result
    finally:
        free(slots)
        free(slot_at)
        free(table)
        free(order)
        free(fill)
        free(lex_count)
        free(pos)


def encode_page(list title, list body):
    """``(tsv, title_tsv)`` in the binary format from the title's and the body's lexeme bytes,
    as ``encode(vectors(title, body))`` of :mod:`~focuscrawl.index.pgtsvector` on its one-pass
    path; None when a cap of the server is reached (the Python path keeps it)."""
    cdef Py_ssize_t t = len(title), n = len(title) + len(body), too_many = 0
    cdef list both
    if t >= MAX_LEXEME_POSITIONS or n >= MAX_POS:
        return None
    both = title + body
    tsv = _encode(both, n, WEIGHT_A, t, &too_many)
    if too_many:
        return None
    title_tsv = _encode(both, t, 0, 0, &too_many)
    return tsv, title_tsv
