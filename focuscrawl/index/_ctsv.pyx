# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The client-built tsvector at C speed: the compiled twin of three pure-Python steps of
:mod:`focuscrawl.index.pgtokens` and :mod:`focuscrawl.index.pgtsvector` (same results, tested
for equality on hostile text: tests/test_index_pgtsvector.py):

* :func:`tokens` — ``pgtokens.tokens`` on lower-cased text: runs of plain words split here;
  a run with a character that may join tokens into another kind (``pgtokens._TRIGGER``) goes
  to the Python token rules (the ``span_tokens`` given: ``pgtokens._span_tokens``);
* :func:`keys_of` — ``pgtsvector._keys`` after the tokens: each token's lexeme bytes from the
  cache, the missing ones from ``resolve`` (the stemmer, in Python);
* :func:`encode_page` — ``encode(vectors(title, body))`` for both vectors when no cap of the
  server is reached (else None: the Python path, which keeps the caps).

Imports nothing of the package: :mod:`focuscrawl.index.compiled` loads it (ABI checked).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject
from cpython.unicode cimport Py_UNICODE_ISALNUM, Py_UNICODE_ISSPACE
from libc.stdlib cimport free, malloc, qsort
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
    cdef Py_UCS4 c, d
    cdef bint trigger
    cdef list out = []
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if _space(c):
            i += 1
            continue
        start = i
        trigger = False
        while i < n:
            c = PyUnicode_READ(kind, data, i)
            if _space(c):
                break
            if not trigger and i + 1 < n:
                d = PyUnicode_READ(kind, data, i + 1)
                if _joiner(c):
                    trigger = not _space(d) and not _closer(d)
                elif _digit(c) and d == u'e' and i + 2 < n:
                    d = PyUnicode_READ(kind, data, i + 2)
                    trigger = _digit(d) or d == u'+' or d == u'-'
            i += 1
        end = i
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


cdef bytes _encode(list keys, Py_ssize_t first, Py_ssize_t count, unsigned int title_weight,
                   Py_ssize_t title_end, Py_ssize_t *too_many):
    """The binary tsvector of ``keys[first:first+count]`` at positions 1.. (those before
    ``title_end`` weighted ``title_weight``); ``too_many[0]`` set when a lexeme has
    MAX_LEXEME_POSITIONS positions or more."""
    cdef dict slot_of = {}
    cdef Py_ssize_t i, s, nslots = 0, total = 4, k
    cdef Slot *slots = NULL
    cdef Slot **order = NULL
    cdef Py_ssize_t *slot_at = NULL
    cdef unsigned short *pos = NULL
    cdef Py_ssize_t *fill = NULL
    cdef object key, got_slot
    cdef PyObject *got
    cdef bytes result
    cdef unsigned char *p
    cdef unsigned int value
    too_many[0] = 0
    if count == 0:
        return b"\0\0\0\0"
    try:
        slots = <Slot *>malloc(count * sizeof(Slot))
        slot_at = <Py_ssize_t *>malloc(count * sizeof(Py_ssize_t))
        if slots is NULL or slot_at is NULL:
            raise MemoryError()
        for i in range(count):
            key = <object>PyList_GET_ITEM(keys, first + i)
            got = PyDict_GetItem(slot_of, key)
            if got is NULL:
                s = nslots
                nslots += 1
                PyDict_SetItem(slot_of, key, s)
                slots[s].key = PyBytes_AS_STRING(key)
                slots[s].size = PyBytes_GET_SIZE(key)
                slots[s].count = 0
                total += slots[s].size + 2
            else:
                s = <Py_ssize_t><object>got
            slots[s].count += 1
            if slots[s].count >= MAX_LEXEME_POSITIONS:
                too_many[0] = 1
                return None
            slot_at[i] = s
        order = <Slot **>malloc(nslots * sizeof(Slot *))
        fill = <Py_ssize_t *>malloc(nslots * sizeof(Py_ssize_t))
        pos = <unsigned short *>malloc(count * sizeof(unsigned short))
        if order is NULL or fill is NULL or pos is NULL:
            raise MemoryError()
        k = 0
        for s in range(nslots):
            slots[s].offset = k
            fill[s] = k
            k += slots[s].count
            order[s] = &slots[s]
        for i in range(count):
            s = slot_at[i]
            value = <unsigned int>(i + 1)
            if i < title_end:
                value |= title_weight
            pos[fill[s]] = <unsigned short>value
            fill[s] += 1
        qsort(order, nslots, sizeof(Slot *), _cmp_slots)
        total += 2 * count
        result = PyBytes_FromStringAndSize(NULL, total)
        p = <unsigned char *>PyBytes_AS_STRING(result)
        p[0] = (nslots >> 24) & 0xFF
        p[1] = (nslots >> 16) & 0xFF
        p[2] = (nslots >> 8) & 0xFF
        p[3] = nslots & 0xFF
        p += 4
        for s in range(nslots):
            memcpy(p, order[s].key, order[s].size)
            p += order[s].size
            _put16(p, <unsigned int>order[s].count)
            p += 2
            for k in range(order[s].offset, order[s].offset + order[s].count):
                _put16(p, pos[k])
                p += 2
        return result
    finally:
        free(slots)
        free(slot_at)
        free(order)
        free(fill)
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
    tsv = _encode(both, 0, n, WEIGHT_A, t, &too_many)
    if too_many:
        return None
    title_tsv = _encode(both, 0, t, 0, 0, &too_many)
    return tsv, title_tsv
