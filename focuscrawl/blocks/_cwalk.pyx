# cython: language_level=3, boundscheck=False, cdivision=True
"""The walk of :mod:`focuscrawl.blocks.segment`, compiled: the same rules over libxml2's tree.

``segment.walk_python`` is the reference; this module must give the same frames, segments,
links and words on every page (``tests/test_blocks_cwalk.py`` checks it on the corpora). It
reads the tree lxml parsed through lxml's public C API (``etreepublic.pxd``): element names,
attributes (``attributeValue``), ``text``/``tail`` (``textOf``/``tailOf``) exactly as lxml
reports them, but without one Python-level event, property call and string per element:
whitespace-only text is recognised on the C string, and only the attributes the rules read are
turned into Python strings.
"""

from libc.stdlib cimport calloc, free, realloc
from libc.stdint cimport uint64_t
from libc.string cimport memchr, memcpy, memset, strcmp, strlen, strstr
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from cpython.list cimport PyList_Clear
from cpython.unicode cimport Py_UNICODE_ISALPHA, Py_UNICODE_ISSPACE

cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    Py_ssize_t PyUnicode_CopyCharacters(object to, Py_ssize_t to_start, object src,
                                        Py_ssize_t from_start, Py_ssize_t how_many) except -1
    int PyUnicode_WriteChar(object s, Py_ssize_t index, Py_UCS4 ch) except -1
    Py_UCS4 PyUnicode_MAX_CHAR_VALUE(object)
    int PyUnicode_KIND(object)
    Py_ssize_t PyUnicode_FindChar(object s, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end,
                                  int direction) except -2
    void* PyUnicode_DATA(object)
    Py_UCS4 PyUnicode_READ(int kind, const void* data, Py_ssize_t index) noexcept nogil
    Py_ssize_t PyUnicode_Find(object s, object sub, Py_ssize_t start, Py_ssize_t end,
                              int direction) except -2
    void PyUnicode_WRITE(int kind, void* data, Py_ssize_t index, Py_UCS4 value) noexcept nogil

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport const_xmlChar, xmlAttr, xmlNode

import re
from zlib import crc32 as _crc32

# Only leaf modules of the package (docs/blocks.md, "What may be compiled"): none of them
# imports this module or a module that does, so it loads whoever asks for it first.
from focuscrawl.blocks import caches, frames, rules, sheet
from focuscrawl.blocks import survey as _survey

cetree.import_lxml__etree()

cdef extern from *:
    """
    #ifndef FOCUSCRAWL_CWALK_ABI
    #define FOCUSCRAWL_CWALK_ABI -1  /* built without setup.py: never taken as current */
    #endif
    """
    const int FOCUSCRAWL_CWALK_ABI

# compiled.CWALK_ABI when this module was built (setup.py compiles it in): a module built from
# an older _cwalk.pyx is ignored rather than called with new arguments.
ABI = FOCUSCRAWL_CWALK_ABI

# The class/id caches shared with the Python walk (caches.py; cleared in place, never rebound):
# held here as typed dicts, so a look-up is a C call, not a module attribute and a method call
# per element.
cdef dict _ATTR_CACHE = caches.attr_cache
cdef dict _PAIR_CACHE = caches.pair_cache

cdef enum:
    F_SKIP = 1
    F_BLOCK = 2
    F_BREAK = 4
    F_NOISE = 8
    F_COUNTED = 16
    F_LINK = 32
    F_LABEL = 64
    # not a tag's: set on an open element's entry of _Walker.flags when a link's context span
    # is aggregated at it (_Walker.spans), so its end looks the span up only then
    F_SPAN = 1 << 20


cdef dict _TAG_FLAGS = {}


cdef int _tag_flags(str tag):
    cdef object hit = _TAG_FLAGS.get(tag)
    if hit is not None:
        return <int>hit
    cdef int flags = 0
    if tag in rules.SKIP_TAGS:
        flags |= F_SKIP
    if tag in rules.BLOCK_TAGS:
        flags |= F_BLOCK
    if tag in rules.BREAK_TAGS:
        flags |= F_BREAK
    if tag in rules.NOISE_SECTION_TAGS:
        flags |= F_NOISE
    if tag in rules.COUNTED_TAGS:
        flags |= F_COUNTED
    if tag == "a" or tag == "area" or tag == "frame":
        flags |= F_LINK
    if tag in rules.LABEL_TAGS:
        flags |= F_LABEL
    if len(_TAG_FLAGS) < 10_000 and len(tag) <= 64:  # (libxml2 allows names of 50,000 chars)
        _TAG_FLAGS[tag] = flags
    return flags


# A trie over ASCII words, compact: a word's characters are the columns (``col[ch]``, 0 for a
# character in no word), so a node's row is a few dozen entries and both tables stay in the
# first-level cache (rows of 128 ints made the kind words' table 240 KB, read at every
# character of every class name of a page).
cdef struct _Trie:
    unsigned char col[128]
    int cols
    int* next  # next[node * cols + col[ch]]: the child (0: none); node 0 is the root


cdef int _trie_build(_Trie* t, list words, list marks) except -1:
    """Fill ``t`` with ``words`` (ASCII, not empty); the end node of each word is given the
    mark at the same index (the caller's table, indexed by the node number returned)."""
    cdef int nodes = 1 + sum(len(w) for w in words)
    cdef int n = 1, node, ch, col
    cdef set alphabet = set()
    for word in words:
        if not word or not word.isascii():
            raise ValueError(f"trie word {word!r} is empty or not ASCII")
        alphabet.update(word)
    memset(t.col, 0, sizeof(t.col))
    for col, c in enumerate(sorted(alphabet), 1):
        t.col[ord(c)] = col
    t.cols = len(alphabet) + 1
    t.next = <int*>calloc(nodes * t.cols, sizeof(int))
    if t.next is NULL:
        raise MemoryError()
    for word in words:
        node = 0
        for c in word:
            ch = t.col[ord(c)]
            if t.next[node * t.cols + ch] == 0:
                t.next[node * t.cols + ch] = n
                n += 1
            node = t.next[node * t.cols + ch]
        marks.append(node)
    return nodes


cdef inline int _trie_step(const _Trie* t, int node, unsigned int ch) noexcept nogil:
    """The child of ``node`` by the ASCII character ``ch`` (< 128); 0: none."""
    cdef unsigned char col = t.col[ch]
    if col == 0:
        return 0
    return t.next[node * t.cols + col]


# The class/id words (caches.WORDS_RE's alternation, matched in C): _END[node] the flags
# (1 negative, 2 positive, 4 unlikely, 8 maybe-candidate) + 16 when a word ends at the node.
cdef _Trie _WORDS
cdef int* _END = NULL


cdef int _build_trie() except -1:
    global _END
    cdef list words = sorted(caches.WORD_TABLE)
    cdef list ends = []
    cdef int nodes = _trie_build(&_WORDS, words, ends)
    _END = <int*>calloc(nodes, sizeof(int))
    if _END is NULL:
        raise MemoryError()
    for word, node in zip(words, ends):
        neg, pos, unlikely, maybe = caches.WORD_TABLE[word]
        _END[<int>node] = 16 | (1 if neg else 0) | (2 if pos else 0) | (4 if unlikely else 0) | (
            8 if maybe else 0)
    return 0


_build_trie()


cdef int _word_flags(str lowered):
    """OR of the flags of the words ``_WORDS_RE.findall(lowered)`` finds (longest first, left
    to right, not overlapping); -1 when ``lowered`` is not ASCII (the caller falls back)."""
    cdef bytes data
    cdef const unsigned char* s
    cdef Py_ssize_t n, i, j, end
    cdef int node, nxt, flags = 0, found
    if not lowered.isascii():
        return -1
    data = lowered.encode("ascii")
    s = data
    n = len(data)
    i = 0
    while i < n:
        node = 0
        end = -1
        found = 0
        j = i
        while j < n:
            nxt = _trie_step(&_WORDS, node, s[j])
            if nxt == 0:
                break
            node = nxt
            j += 1
            if _END[node]:
                end = j
                found = _END[node]
        if end >= 0:
            flags |= found
            i = end
        else:
            i += 1
    return flags


# The page kind's class/id words (rules.NAME_KIND_EVIDENCE), every occurrence, overlapping
# ones too (kind.word_mask_python's ``word in text`` for each word): an Aho-Corasick automaton
# over the words' characters, one step a character (a trie walked from every position took
# several). _KGO[state * cols + col] is the next state, _KOUT[state] the bits of the words
# that end there (its own and those of its proper suffixes that are words).
cdef unsigned char _KCOL[128]
cdef int _KCOLS = 0
cdef int* _KGO = NULL
cdef uint64_t* _KOUT = NULL
cdef tuple _KIND_WORDS = tuple(w for w, _, _ in rules.NAME_KIND_EVIDENCE)


cdef int _build_kind_automaton() except -1:
    global _KCOLS, _KGO, _KOUT
    cdef int state, col
    if len(_KIND_WORDS) > 64:
        raise ValueError("more than 64 kind words: the mask is 64 bits")
    for word in _KIND_WORDS:
        if not word or not word.isascii():
            raise ValueError(f"kind word {word!r} is empty or not ASCII")
    alphabet = sorted(set("".join(_KIND_WORDS)))
    memset(_KCOL, 0, sizeof(_KCOL))
    for col, c in enumerate(alphabet, 1):
        _KCOL[ord(c)] = col
    _KCOLS = len(alphabet) + 1  # column 0: a character in no word (back to the root)
    children = [{}]  # the trie
    out = [0]
    for bit, word in enumerate(_KIND_WORDS):  # (bit untyped: a Python int, up to 1 << 63)
        state = 0
        for c in word:
            col = _KCOL[ord(c)]
            if col not in children[state]:
                children[state][col] = len(children)
                children.append({})
                out.append(0)
            state = children[state][col]
        out[state] |= 1 << bit
    go = [[0] * _KCOLS for _ in children]
    fail = [0] * len(children)
    queue = []
    for col, child in children[0].items():
        go[0][col] = child
        queue.append(child)
    for state in queue:  # breadth first: a state's failure is shallower, already complete
        out[state] |= out[fail[state]]
        for col in range(_KCOLS):
            child = children[state].get(col)
            if child is None:
                go[state][col] = go[fail[state]][col]
            else:
                go[state][col] = child
                fail[child] = go[fail[state]][col]
                queue.append(child)
    _KGO = <int*>calloc(len(children) * _KCOLS, sizeof(int))
    _KOUT = <uint64_t*>calloc(len(children), sizeof(uint64_t))
    if _KGO is NULL or _KOUT is NULL:
        raise MemoryError()
    for state in range(len(children)):
        _KOUT[state] = out[state]
        for col in range(_KCOLS):
            _KGO[state * _KCOLS + col] = go[state][col]
    return 0


_build_kind_automaton()


cdef uint64_t _trie_mask(int kind, const void* data, Py_ssize_t n, bint fold) noexcept:
    """The bits of the evidence words found in the text (``fold``: A-Z read as a-z)."""
    cdef Py_ssize_t i
    cdef unsigned int ch
    cdef int state = 0
    cdef uint64_t mask = 0
    cdef const unsigned char* b1
    if kind == 1 and fold:  # most names: one byte a character, read without the switch
        b1 = <const unsigned char*>data
        for i in range(n):
            ch = b1[i]
            if ch >= 128:
                state = 0
                continue
            if 65 <= ch <= 90:
                ch += 32
            state = _KGO[state * _KCOLS + _KCOL[ch]]
            mask |= _KOUT[state]
        return mask
    for i in range(n):
        ch = <unsigned int>PyUnicode_READ(kind, data, i)
        if ch >= 128:
            state = 0  # in no word
            continue
        if fold and 65 <= ch <= 90:
            ch += 32
        state = _KGO[state * _KCOLS + _KCOL[ch]]
        mask |= _KOUT[state]
    return mask


def kind_word_mask(str text):
    """Bit i set when ``rules.NAME_KIND_EVIDENCE[i]``'s word occurs in ``text``."""
    return _trie_mask(PyUnicode_KIND(text), PyUnicode_DATA(text), len(text), False)


def kind_word_mask_of(names):
    """``kind_word_mask(" ".join(names).lower())`` without the joined string: no word of
    ``rules.NAME_KIND_EVIDENCE`` holds a space, so none is found across two names; an ASCII
    name is lower-cased as it is scanned, any other through ``str.lower``."""
    cdef uint64_t mask = 0
    cdef str name, lowered
    for name in names:
        if name.isascii():
            mask |= _trie_mask(PyUnicode_KIND(name), PyUnicode_DATA(name), len(name), True)
        else:
            lowered = name.lower()
            mask |= _trie_mask(PyUnicode_KIND(lowered), PyUnicode_DATA(lowered), len(lowered),
                               False)
    return mask


cdef tuple _feature_info(str value):
    """caches.feature_info with the words matched in C (same result, same cache)."""
    cdef tuple hit = _ATTR_CACHE.get(value)
    if hit is not None:
        return hit
    cdef int flags = _word_flags(value.lower())
    if flags < 0:
        return caches.feature_info(value)
    cdef double weight = (_CLASS_WEIGHT if flags & 2 else 0.0) - (_CLASS_WEIGHT if flags & 1 else 0.0)
    cdef tuple info = (weight, (flags & 4) != 0, (flags & 8) != 0)
    if len(_ATTR_CACHE) < 100_000 and len(value) <= _CACHED_VALUE_CHARS:
        _ATTR_CACHE[value] = info
    return info


cdef tuple _attr_info_missed(str cls, str el_id):
    """caches.attr_info over the compiled word matcher, for a pair the caller did not find in
    ``_PAIR_CACHE``: computed, then cached."""
    cdef double weight = 0.0
    cdef bint unlikely = False, maybe = False
    cdef tuple info
    if cls:
        info = _feature_info(cls)
        weight, unlikely, maybe = info
    if el_id:
        info = _feature_info(el_id)
        weight += <double>info[0]
        unlikely = unlikely or info[1]
        maybe = maybe or info[2]
    info = (weight, unlikely and not maybe, tuple(cls.split()) if cls else ())
    if len(_PAIR_CACHE) < 100_000 and len(cls) + len(el_id) <= _CACHED_VALUE_CHARS:
        _PAIR_CACHE[(cls, el_id)] = info
    return info


cdef double _CLASS_WEIGHT = rules.CLASS_WEIGHT
cdef Py_ssize_t _CACHED_VALUE_CHARS = caches.CACHED_VALUE_CHARS


cdef class Frame:
    """An open (then closed) block element and its subtree totals (see ``frames.Frame``)."""

    cdef public str tag
    cdef public Py_ssize_t pre, post, depth
    cdef public Frame parent
    cdef public list children
    cdef public double weight, score
    cdef public bint hidden, unlikely, noise, leaf, candidate, removed
    cdef public Py_ssize_t chars, link_chars, commas, n_p, n_img, n_li, n_input, n_embed

    def __init__(self, str tag, Py_ssize_t pre, Frame parent, double weight):
        self.tag = tag
        self.pre = pre
        self.post = pre
        self.parent = parent
        self.children = []
        self.weight = weight
        self.leaf = True


cdef class Segment:
    """A run of inline text (a block of the page) owned by one frame."""

    cdef public Frame frame
    cdef public Py_ssize_t w0, w1, chars, link_chars, commas
    cdef public list links
    cdef public Py_ssize_t block  # id of its Block once assembled, -1 when it makes none

    def __init__(self, Frame frame, Py_ssize_t w0):
        self.frame = frame
        self.w0 = w0
        self.w1 = w0
        self.links = []
        self.block = -1


cdef class RawLink:
    cdef public str href
    cdef public object el
    cdef public Py_ssize_t w0, w1
    cdef public list agg
    cdef public Segment segment
    cdef public bint nofollow


cdef inline str _attr_value(xmlNode* c, xmlAttr* attr):
    """``cetree.attributeValue``: the common case (one text child, as libxml2's own fast path
    in xmlGetNsProp) read directly, anything else through lxml."""
    cdef xmlNode* child = attr.children
    cdef const char* content
    if child is NULL:
        return ""
    if child.next is NULL and child.type == tree.XML_TEXT_NODE and child.content is not NULL:
        content = <const char*>child.content
        return content[:strlen(content)].decode("utf-8")
    return cetree.attributeValue(c, attr)


cdef inline const char* _simple_value(xmlAttr* attr) noexcept nogil:
    """The attribute's value as libxml2 holds it when it is one text node (the common case
    ``_attr_value`` reads directly); NULL otherwise (or no value)."""
    cdef xmlNode* child = attr.children
    if child is NULL or child.next is not NULL or child.type != tree.XML_TEXT_NODE:
        return NULL
    return <const char*>child.content


cdef inline xmlNode* _after(xmlNode* c, xmlNode* top) noexcept nogil:
    """The node after ``c`` and its subtree in document order, not leaving the subtree of
    ``top``; NULL past its end."""
    while c is not top and c.next is NULL:
        c = c.parent
    if c is top:
        return NULL
    return c.next


cdef object _no_ns_attribute(xmlNode* c, const char* name):
    """``el.get(name)`` for an attribute in no namespace: its value, or None."""
    cdef xmlAttr* attr = c.properties
    while attr is not NULL:
        if attr.ns is NULL and strcmp(<const char*>attr.name, name) == 0:
            return _attr_value(c, attr)
        attr = attr.next
    return None


cdef inline bint _lxml_element(xmlNode* c) noexcept nogil:
    # what lxml's iterdescendants yields: elements, comments, entity references, PIs
    return (c.type == tree.XML_ELEMENT_NODE or c.type == tree.XML_COMMENT_NODE
            or c.type == tree.XML_ENTITY_REF_NODE or c.type == tree.XML_PI_NODE)


cdef str _alt_text(xmlNode* el):
    """``partition._alt_text`` on libxml2's nodes: the link's title or aria-label, else the alt
    (or title) of the first ``img`` among its first ``rules.MAX_ALT_SEARCH_ELEMENTS``
    descendants in document order, whitespace collapsed."""
    cdef object text = _no_ns_attribute(el, "title") or _no_ns_attribute(el, "aria-label") or ""
    cdef xmlNode* c
    cdef Py_ssize_t seen = 0
    if not text:
        c = el.children
        while c is not NULL and seen < _MAX_ALT_SEARCH:
            if _lxml_element(c):
                seen += 1
                if c.type == tree.XML_ELEMENT_NODE and c.ns is NULL and strcmp(<const char*>c.name, "img") == 0:
                    text = _no_ns_attribute(c, "alt") or _no_ns_attribute(c, "title") or ""
                    break
                if c.type == tree.XML_ELEMENT_NODE and c.children is not NULL:
                    c = c.children
                    continue
            c = _after(c, el)
    return " ".join((<str>text).split())


cdef Py_ssize_t _MAX_ALT_SEARCH = rules.MAX_ALT_SEARCH_ELEMENTS


cdef inline bint _is_text(xmlNode* c) noexcept nogil:
    return c.type == tree.XML_TEXT_NODE or c.type == tree.XML_CDATA_SECTION_NODE


cdef inline xmlNode* _text_or_skip(xmlNode* c) noexcept nogil:
    # lxml's _textNodeOrSkip: a run of text nodes, XInclude markers skipped
    while c is not NULL:
        if _is_text(c):
            return c
        if c.type == tree.XML_XINCLUDE_START or c.type == tree.XML_XINCLUDE_END:
            c = c.next
        else:
            return NULL
    return NULL


cdef int _text_state(xmlNode* c) noexcept nogil:
    """0: no text (None or ""), 1: ASCII whitespace only, 2: anything else."""
    cdef const unsigned char* s
    cdef bint any_char = False
    c = _text_or_skip(c)
    while c is not NULL:
        s = <const unsigned char*>c.content
        if s is not NULL:
            while s[0] != 0:
                if s[0] == 32 or (9 <= s[0] <= 13):
                    any_char = True
                else:
                    return 2
                s += 1
        c = _text_or_skip(c.next)
    return 1 if any_char else 0


cdef inline bint _is_element(xmlNode* c) noexcept nogil:
    # lxml's _isElement: what iterwalk visits
    return (c.type == tree.XML_ELEMENT_NODE or c.type == tree.XML_COMMENT_NODE
            or c.type == tree.XML_ENTITY_REF_NODE or c.type == tree.XML_PI_NODE)


cdef inline xmlNode* _first_element(xmlNode* c) noexcept nogil:
    c = c.children
    while c is not NULL and not _is_element(c):
        c = c.next
    return c


cdef inline xmlNode* _next_element(xmlNode* c) noexcept nogil:
    c = c.next
    while c is not NULL and not _is_element(c):
        c = c.next
    return c


cdef class _Walker:
    cdef list frames, segments, links, words, fstack, lstack, buttons
    cdef cetree._Document doc
    cdef dict spans
    cdef Segment seg
    cdef bint glue
    cdef int in_link
    # the pieces of the last word while texts continue it (segment.walk_python says why)
    cdef list pending
    cdef Py_ssize_t max_links, unrecorded
    cdef Py_ssize_t* starts  # start word of every open element
    cdef int* flags  # tag flags of every open element
    cdef Py_ssize_t n_starts, cap_starts
    # addresses of the main regions and their ancestors (segment.main_path), None without any
    cdef set main_path

    def __cinit__(self):
        self.frames = []
        self.segments = []
        self.links = []
        self.words = []
        self.fstack = []
        self.lstack = []
        self.buttons = []
        self.spans = {}
        self.seg = None
        self.glue = False
        self.in_link = 0
        self.pending = None
        self.max_links = 0
        self.unrecorded = 0
        self.starts = NULL
        self.flags = NULL
        self.n_starts = 0
        self.cap_starts = 0
        self.main_path = None

    def __dealloc__(self):
        free(self.starts)
        free(self.flags)

    cdef int push_start(self, Py_ssize_t value, int flags) except -1:
        cdef Py_ssize_t* grown
        cdef int* grown_flags
        cdef Py_ssize_t cap
        if self.n_starts == self.cap_starts:
            cap = self.cap_starts * 2 + 64
            grown = <Py_ssize_t*>realloc(self.starts, cap * sizeof(Py_ssize_t))
            if grown is NULL:
                raise MemoryError()
            self.starts = grown
            grown_flags = <int*>realloc(self.flags, cap * sizeof(int))
            if grown_flags is NULL:
                raise MemoryError()
            self.flags = grown_flags
            self.cap_starts = cap
        self.starts[self.n_starts] = value
        self.flags[self.n_starts] = flags
        self.n_starts += 1
        return 0

    cdef Segment new_segment(self):
        cdef Segment seg = Segment(<Frame>self.fstack[-1], len(self.words))
        self.segments.append(seg)
        self.seg = seg
        return seg

    cdef int feed_text(self, int state, str text) except -1:
        """A node's text or tail, ``state`` from ``_text_state`` (``text`` read only for 2):
        whitespace ends the glue between words, anything else is added."""
        if state == 1 or (state == 2 and text.isspace()):
            self.glue = False
        elif state == 2:
            self.add_text(text)
        return 0

    cdef int add_text(self, str text) except -1:
        cdef list ws = text.split()
        cdef list words = self.words
        cdef Segment seg
        cdef Frame frame
        cdef Py_ssize_t n, commas
        if not ws:
            self.glue = False
            return 0
        seg = self.seg
        if seg is None:
            seg = self.new_segment()
        if self.glue and not text[0].isspace() and seg.w1 > seg.w0:
            if self.pending is None:
                self.pending = [words[-1]]
            self.pending.append(ws[0])
            del ws[0]
        if self.pending is not None and ws:  # a new word starts: the last one is complete
            words[-1] = "".join(self.pending)
            self.pending = None
        words.extend(ws)
        seg.w1 = len(words)
        n = len(text)
        commas = text.count(",")
        frame = seg.frame
        seg.chars += n
        frame.chars += n
        seg.commas += commas
        frame.commas += commas
        if self.in_link:
            seg.link_chars += n
            frame.link_chars += n
        self.glue = not text[-1].isspace()
        return 0

    cdef int start(self, xmlNode* c, str tag, int flags, cetree._Document doc, object css,
                   bint use_css, object css_tags, object css_classes, object css_ids,
                   Py_ssize_t levels) except -1:
        cdef xmlAttr* attr
        cdef const char* name
        cdef object cls = None, el_id = None, style = None, href = None, src = None, rel = None
        cdef bint hidden = False, unlikely = False, sidebar = False, h, sb
        cdef bint modal = False, chrome_role = False
        cdef str role
        cdef double weight = 0.0
        cdef tuple classes = ()
        cdef object info
        cdef Frame frame, parent
        cdef Py_ssize_t at
        cdef list agg
        cdef RawLink link
        cdef int state, cues
        cdef object key
        cdef list fstack = self.fstack
        attr = c.properties
        while attr is not NULL:
            if attr.ns is NULL or attr.ns.href is NULL:
                name = <const char*>attr.name
                if strcmp(name, "class") == 0:
                    cls = _attr_value(c, attr)
                elif strcmp(name, "href") == 0:
                    href = _attr_value(c, attr)
                elif strcmp(name, "id") == 0:
                    el_id = _attr_value(c, attr)
                elif strcmp(name, "style") == 0:
                    style = _attr_value(c, attr)
                elif strcmp(name, "rel") == 0:
                    rel = _attr_value(c, attr)
                elif strcmp(name, "src") == 0:
                    src = _attr_value(c, attr)
                elif strcmp(name, "hidden") == 0:
                    hidden = True
                elif strcmp(name, "aria-hidden") == 0:
                    if _attr_value(c, attr) == "true":
                        hidden = True
                elif strcmp(name, "role") == 0:
                    role = _attr_value(c, attr).strip().lower()
                    modal = modal or role in _MODAL_ROLES
                    chrome_role = role in _CHROME_ROLES
                elif strcmp(name, "aria-modal") == 0:
                    if _attr_value(c, attr) == "true":
                        modal = True
            attr = attr.next
        if cls or el_id:
            key = (cls or "", el_id or "")
            info = _PAIR_CACHE.get(key)
            if info is None:
                info = _attr_info_missed(cls or "", el_id or "")
            weight = info[0]
            unlikely = info[1]
            classes = info[2]
            if unlikely and self.main_path is not None and <size_t>c in self.main_path:
                unlikely = False  # it holds the page's main region: not boilerplate whole
        unlikely = unlikely or modal or chrome_role
        hidden = hidden or modal
        if style:
            # sheet.declares_hidden / declares_sidebar of the style, in one compiled scan
            cues = _cue_kinds(PyUnicode_KIND(style), PyUnicode_DATA(style), 0, len(<str>style))
            hidden = hidden or (cues & CUE_HIDDEN) != 0
            sidebar = (cues & CUE_SIDEBAR) != 0
        if use_css and (
            tag in css_tags
            or (el_id and el_id in css_ids)
            or (classes and not css_classes.isdisjoint(classes))
        ):
            h, sb = css.cues(tag, classes, el_id)
            hidden = hidden or h
            sidebar = sidebar or sb
        if sidebar:
            weight += _SIDEBAR_STYLE_WEIGHT
        parent = <Frame>fstack[-1] if fstack else None
        if (flags & F_COUNTED) and parent is not None:
            if tag == "p":
                parent.n_p += 1
            elif tag == "img":
                parent.n_img += 1
            elif tag == "li":
                parent.n_li += 1
            elif tag == "input":
                parent.n_input += 1
            else:
                parent.n_embed += 1
        if (flags & F_BLOCK) or hidden or unlikely or not fstack:
            frame = _new_frame(tag, len(self.frames), parent, weight)
            if parent is not None:
                parent.leaf = False
                parent.children.append(frame)
                frame.hidden = hidden or parent.hidden
                frame.unlikely = (unlikely and tag != "body") or parent.unlikely
                frame.noise = (flags & F_NOISE) != 0 or parent.noise
            else:
                frame.hidden = hidden
            frame.depth = self.n_starts
            self.frames.append(frame)
            fstack.append(frame)
            self.seg = None
            self.glue = False
        elif flags & F_BREAK:
            self.glue = False
        if flags & F_LINK:
            if tag == "frame":
                href = src
            if href and len(self.links) >= self.max_links:
                self.unrecorded += 1
                if self.seg is None:  # (as a recorded link would)
                    self.new_segment()
                self.lstack.append(frames.UNRECORDED)
                self.in_link += 1
            elif href:
                at = self.n_starts - 1 - levels
                if at < 0:
                    at = 0
                agg = self.spans.get(at) if self.flags[at] & F_SPAN else None
                if agg is None:
                    agg = [self.starts[at], 0]
                    self.spans[at] = agg
                    self.flags[at] |= F_SPAN
                link = RawLink.__new__(RawLink)
                link.href = href
                link.el = None  # set at its end when it has no words (partition._alt_text)
                link.w0 = len(self.words)
                link.w1 = link.w0
                link.agg = agg
                link.nofollow = rel is not None and "nofollow" in rel
                if self.seg is None:
                    self.new_segment()
                link.segment = self.seg
                self.seg.links.append(link)
                self.links.append(link)
                self.lstack.append(link)
                self.in_link += 1
            else:
                self.lstack.append(None)
        state = _text_state(c.children)
        self.feed_text(state, cetree.textOf(c) if state == 2 else None)
        return 0

    cdef int end(self, xmlNode* c, bint is_tag, int flags, bint tail=True) except -1:
        cdef object span
        cdef object link
        cdef Frame frame, parent
        cdef list fstack = self.fstack
        cdef int state
        self.n_starts -= 1
        if self.flags[self.n_starts] & F_SPAN:
            span = self.spans.pop(self.n_starts)
            (<list>span)[1] = len(self.words)
        if is_tag:
            if (flags & F_LINK) and self.lstack:
                link = self.lstack.pop()
                if link is not None:
                    self.in_link -= 1
                if type(link) is RawLink:
                    (<RawLink>link).w1 = len(self.words)
                    if (<RawLink>link).w1 == (<RawLink>link).w0:
                        (<RawLink>link).el = cetree.elementFactory(self.doc, c)
            if fstack and (<Frame>fstack[-1]).depth == self.n_starts + 1:
                frame = <Frame>fstack.pop()
                frame.post = len(self.frames) - 1
                parent = frame.parent
                if parent is not None and not frame.hidden:
                    parent.chars += frame.chars
                    parent.link_chars += frame.link_chars
                    parent.commas += frame.commas
                    parent.n_p += frame.n_p
                    parent.n_img += frame.n_img
                    parent.n_li += frame.n_li
                    parent.n_input += frame.n_input
                    parent.n_embed += frame.n_embed
                self.seg = None
                self.glue = False
            elif flags & F_BREAK:
                self.glue = False
        if fstack and tail:
            state = _text_state(c.next)
            self.feed_text(state, cetree.tailOf(c) if state == 2 else None)
        return 0


cdef frozenset _MODAL_ROLES = rules.MODAL_ROLES
cdef frozenset _CHROME_ROLES = rules.CHROME_ROLES
cdef double _SIDEBAR_STYLE_WEIGHT = rules.SIDEBAR_STYLE_WEIGHT
cdef Py_ssize_t _MAX_LABELS = rules.MAX_LABELS
cdef Py_ssize_t _MAX_CUE_CLIMB = rules.MAX_CUE_CLIMB
cdef object _NOISE_SECTION_TAGS = rules.NOISE_SECTION_TAGS
cdef Py_ssize_t _MAX_MAIN_REGIONS = rules.MAX_MAIN_REGIONS
cdef Py_ssize_t _MAX_MAIN_CLIMB = rules.MAX_MAIN_CLIMB
cdef frozenset _CHROME_SECTION_TAGS = rules.CHROME_SECTION_TAGS


cdef str _noise_cue(str kind, Frame frame):
    """``cues.noise_cue`` over the compiled frames."""
    cdef Frame f
    cdef Py_ssize_t i
    if kind != "noise":
        return ""
    if frame.noise:
        f = frame
        for i in range(_MAX_CUE_CLIMB):
            if f is None:
                break
            if f.tag in _NOISE_SECTION_TAGS:
                return f.tag
            f = f.parent
        return "section"
    if frame.unlikely or frame.weight < 0:
        return "name"
    if frame.hidden:
        return "hidden"
    return ""


cdef Frame _new_frame(str tag, Py_ssize_t pre, Frame parent, double weight):
    cdef Frame f = Frame.__new__(Frame)
    f.tag = tag
    f.pre = pre
    f.post = pre
    f.parent = parent
    f.children = []
    f.weight = weight
    f.leaf = True
    return f


cdef set _main_path(xmlNode* top, object mains):
    """``segment.main_path`` over libxml2's nodes: the addresses of the main regions and of
    their ancestors up to ``top``."""
    cdef set path = set()
    cdef list climb
    cdef xmlNode* node
    cdef Py_ssize_t climbed
    for m in mains[:_MAX_MAIN_REGIONS]:
        climb = []
        node = (<cetree._Element?>m)._c_node
        climbed = 0
        while node is not NULL and node.type == tree.XML_ELEMENT_NODE and <size_t>node not in path:
            if cetree.namespacedName(node) in _CHROME_SECTION_TAGS:
                climb = []
                break
            climb.append(<size_t>node)
            if node is top or climbed == _MAX_MAIN_CLIMB:
                break
            node = node.parent
            climbed += 1
        path.update(climb)
    return path


def walk(root, css, Py_ssize_t levels, Py_ssize_t max_links=rules.MAX_LINKS_PER_PAGE,
         Py_ssize_t max_elements=rules.MAX_ELEMENTS, mains=()):
    """Segment the tree under ``root``: what ``segment.walk_python`` returns, compiled."""
    cdef cetree._Element el = <cetree._Element?>root
    cdef cetree._Document doc = el._doc
    cdef xmlNode* top = el._c_node
    cdef xmlNode* c = top
    cdef xmlNode* nxt
    cdef _Walker w = _Walker()
    w.doc = doc
    cdef bint use_css = bool(css)
    cdef object css_tags = css.hidden_tags
    cdef object css_classes = css.hidden_classes | css.sidebar_classes
    cdef object css_ids = css.hidden_ids | css.sidebar_ids
    cdef str tag
    cdef int flags
    cdef size_t slot
    cdef const_xmlChar* name_keys[256]
    cdef int name_flags[256]
    cdef list name_tags = [None] * 256
    cdef Py_ssize_t elements = 0
    cdef dict cuts = {}
    memset(name_keys, 0, sizeof(name_keys))
    w.max_links = max_links
    if mains:
        w.main_path = _main_path(top, mains)
    while True:
        # start event of c; comments, PIs and skipped tags are not descended into
        elements += 1
        if elements > max_elements:
            # the end events of the open elements, without tails: as if the page ended here
            while c is not top:
                c = c.parent
                w.end(c, True, w.flags[w.n_starts - 1], False)
            cuts["elements"] = 1
            return _finish(w, cuts)
        if c.type == tree.XML_ELEMENT_NODE:
            # Element names are interned in the parser's dictionary: the name pointer keys a
            # small cache of the tag string and its flags (a miss only costs the look-up).
            slot = (<size_t>c.name >> 4) & 255
            if c.ns is NULL and name_keys[slot] == c.name:
                tag = <str>name_tags[slot]
                flags = name_flags[slot]
            else:
                tag = cetree.namespacedName(c)
                flags = _tag_flags(tag)
                if c.ns is NULL:
                    name_keys[slot] = c.name
                    name_tags[slot] = tag
                    name_flags[slot] = flags
            w.push_start(len(w.words), flags)
            if not (flags & F_SKIP):
                w.start(c, tag, flags, doc, css, use_css, css_tags, css_classes, css_ids, levels)
                nxt = _first_element(c)
                if nxt is not NULL:
                    c = nxt
                    continue
            elif (flags & F_LABEL) and w.fstack and len(w.buttons) < _MAX_LABELS:
                w.buttons.append((cetree.elementFactory(doc, c), w.fstack[-1]))
        else:
            w.push_start(len(w.words), 0)
        # no children to visit: end events up to the next sibling
        while True:
            w.end(c, c.type == tree.XML_ELEMENT_NODE, w.flags[w.n_starts - 1])
            if c is top:
                return _finish(w, cuts)
            nxt = _next_element(c)
            if nxt is not NULL:
                c = nxt
                break
            c = c.parent


cdef object _finish(_Walker w, dict cuts):
    if w.pending is not None:
        w.words[-1] = "".join(w.pending)
        w.pending = None
    if w.unrecorded:
        cuts["links"] = w.unrecorded
    return frames.Walk(w.frames, w.segments, w.links, w.words, [], cuts, w.buttons)


# The words' own macros on borrowed pointers: _join reads every word of a block's text, an
# anchor and a context (≈ 400 joins a page) without a reference count change per word.
cdef extern from "Python.h":
    PyObject* _list_item "PyList_GET_ITEM"(object list, Py_ssize_t i) noexcept nogil
    Py_ssize_t _word_len "PyUnicode_GET_LENGTH"(PyObject* word) noexcept nogil
    Py_UCS4 _word_maxchar "PyUnicode_MAX_CHAR_VALUE"(PyObject* word) noexcept nogil
    int _word_kind "PyUnicode_KIND"(PyObject* word) noexcept nogil
    void* _word_data "PyUnicode_DATA"(PyObject* word) noexcept nogil


cdef inline Py_ssize_t _put_word(int okind, void* odata, Py_ssize_t pos,
                                 PyObject* word) noexcept:
    """Write ``word`` (after a space unless at 0) into a new string's data at ``pos``; the end.
    The string was made wide enough for every word (its maxchar), so a word's kind is at most
    the string's: the same kind is copied whole, a narrower one widened character by
    character."""
    cdef Py_ssize_t n = _word_len(word), j
    cdef int wkind = _word_kind(word)
    cdef const void* wdata = _word_data(word)
    if pos:
        PyUnicode_WRITE(okind, odata, pos, 32)
        pos += 1
    if wkind == okind:
        memcpy(<char*>odata + pos * okind, wdata, <size_t>(n * okind))
    else:
        for j in range(n):
            PyUnicode_WRITE(okind, odata, pos + j, PyUnicode_READ(wkind, wdata, j))
    return pos + n


cdef str _join(list words, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c=0, Py_ssize_t d=0):
    """``" ".join(words[a:b] + words[c:d])`` without the slices (ranges empty when reversed).
    ``words`` holds only ``str`` (the walk's words)."""
    cdef Py_ssize_t i, size = 0, count = 0, pos = 0
    cdef Py_UCS4 maxchar = 32, m
    cdef PyObject* word
    cdef str out
    cdef Py_ssize_t total = len(words)
    a = min(max(a, 0), total)  # clamp as slicing does
    b = min(max(b, a), total)
    c = min(max(c, 0), total)
    d = min(max(d, c), total)
    count = (b - a) + (d - c)
    if count == 0:
        return ""
    for i in range(a, b):
        word = _list_item(words, i)
        size += _word_len(word)
        m = _word_maxchar(word)
        if m > maxchar:
            maxchar = m
    for i in range(c, d):
        word = _list_item(words, i)
        size += _word_len(word)
        m = _word_maxchar(word)
        if m > maxchar:
            maxchar = m
    out = PyUnicode_New(size + count - 1, maxchar)
    cdef int okind = PyUnicode_KIND(out)
    cdef void* odata = PyUnicode_DATA(out)
    for i in range(a, b):
        pos = _put_word(okind, odata, pos, _list_item(words, i))
    for i in range(c, d):
        pos = _put_word(okind, odata, pos, _list_item(words, i))
    return out


cdef str _origin(str base):
    """The origin ("https://host:port") that ``partition._resolver(base)`` prefixes root-relative
    hrefs with; "" when it resolves none that way."""
    cdef Py_ssize_t slash
    cdef str origin
    if not base.startswith(("http://", "https://")):
        return ""
    slash = base.find("/", base.index("//") + 2)
    origin = base if slash < 0 else base[:slash]
    if "?" in origin or "#" in origin:
        return ""
    return origin


cdef object _resolve_common(str href, str origin, dict cache):
    """What ``partition._resolver(page.base_url)`` (its cache ``cache``) answers for the common
    hrefs, without a Python call: absolute http(s) URLs and root-relative paths without dot
    segments, with no whitespace around them. None for any other href (the resolver answers)."""
    cdef Py_ssize_t n = len(href), hash_at
    cdef str url
    if n == 0 or Py_UNICODE_ISSPACE(href[0]) or Py_UNICODE_ISSPACE(href[n - 1]):
        return None
    if href.startswith(("http://", "https://")):
        url = href
    elif origin and href[0] == "/" and (n == 1 or href[1] != "/") and "/." not in href:
        url = origin + href
    else:
        return None
    hash_at = url.find("#")
    if hash_at >= 0:
        url = url[:hash_at]
    cache[href] = url
    return url


# ---- the page's Block and Link objects, filled slot by slot ----------------------------------
# Block and Link (model.py) are dataclasses with __slots__: a fresh object (``cls.__new__``)
# has every slot empty, and ``obj.field = value`` goes through the type's attribute look-up to
# the slot's member descriptor. Here each value is put in its slot directly, at the offset
# the descriptor names (read once per class); a class whose fields are not plain object slots
# is filled by setattr as before.

cdef extern from "Python.h":
    """
    #include "structmember.h"
    static Py_ssize_t focuscrawl_member_offset(PyObject* descr) {
        /* the offset of a plain, writable object slot; -1 for anything else */
        PyMemberDef* m;
        if (Py_TYPE(descr) != &PyMemberDescr_Type) return -1;
        m = ((PyMemberDescrObject*)descr)->d_member;
        if (m->type != T_OBJECT_EX || (m->flags & READONLY)) return -1;
        return m->offset;
    }
    """
    Py_ssize_t focuscrawl_member_offset(object descr)


cdef tuple _BLOCK_FIELDS = ("id", "kind", "text", "weight", "tag", "links", "noise_cue")
cdef tuple _LINK_FIELDS = ("url", "anchor", "context", "block_id", "block_kind", "block_weight",
                           "noise", "nofollow", "template")
cdef dict _OFFSETS = {}  # class -> its fields' slot offsets (a tuple), or None: use setattr


cdef object _slot_offsets(object cls, tuple fields):
    cdef object hit = _OFFSETS.get(cls, False)
    cdef Py_ssize_t offset
    cdef list offsets
    if hit is not False:
        return hit
    offsets = []
    for name in fields:
        offset = -1
        for klass in cls.__mro__:  # the descriptor where attribute look-up finds it
            if name in klass.__dict__:
                offset = focuscrawl_member_offset(klass.__dict__[name])
                break
        if offset <= 0:
            offsets = None
            break
        offsets.append(offset)
    hit = tuple(offsets) if offsets is not None else None
    if len(_OFFSETS) < 16:
        _OFFSETS[cls] = hit
    return hit


cdef inline void _put(object obj, Py_ssize_t offset, object value) noexcept:
    """``obj``'s slot at ``offset`` holds ``value`` (a new reference; the old one released)."""
    cdef PyObject** slot = <PyObject**>((<char*><PyObject*>obj) + offset)
    cdef PyObject* old = slot[0]
    Py_INCREF(value)
    slot[0] = <PyObject*>value
    Py_XDECREF(old)


def assemble(page, walk, list kinds, resolve, Py_ssize_t window, block_cls, link_cls,
             heading_tags, alt_text, double noise_weight, Py_ssize_t max_anchor_words):
    """``partition._assemble`` compiled: blocks and links of ``page`` from a walk and its kinds;
    returns how many anchors were cut to ``max_anchor_words``. ``resolve`` is
    ``partition._resolver(page.base_url)``: the common hrefs are resolved here as it would
    (``_resolve_common``), the others by calling it."""
    cdef list words = walk.words
    cdef list segments = walk.segments
    cdef list blocks = page.blocks
    cdef list headings = page.headings
    cdef list out_links = page.links
    cdef dict cache = resolve.cache
    cdef Segment seg
    cdef RawLink raw
    cdef Py_ssize_t i, n = len(segments), a0, a1, n0, n1, bid, cut = 0
    cdef tuple kw, info
    cdef str kind, text, href, absolute, anchor, context
    cdef object block, link, weight, link_weight
    cdef bint noise
    cdef list block_links
    cdef list block_info = []  # per block made here: (kind, weight, its links)
    cdef Py_ssize_t first = len(blocks)  # (the page's blocks so far, none in practice)
    cdef object block_slots = _slot_offsets(block_cls, _BLOCK_FIELDS)
    cdef object link_slots = _slot_offsets(link_cls, _LINK_FIELDS)
    if len(kinds) != n:
        raise ValueError("one kind per segment")
    for i in range(n):
        seg = <Segment>segments[i]
        if seg.w1 == seg.w0 and not seg.links:
            continue
        kw = <tuple>kinds[i]
        kind = kw[0]
        weight = kw[1]
        text = _join(words, seg.w0, seg.w1)
        block = block_cls.__new__(block_cls)
        bid = len(blocks)
        block_links = []
        if block_slots is not None:
            _put(block, <Py_ssize_t>block_slots[0], bid)
            _put(block, <Py_ssize_t>block_slots[1], kind)
            _put(block, <Py_ssize_t>block_slots[2], text)
            _put(block, <Py_ssize_t>block_slots[3], weight)
            _put(block, <Py_ssize_t>block_slots[4], seg.frame.tag)
            _put(block, <Py_ssize_t>block_slots[5], block_links)
            _put(block, <Py_ssize_t>block_slots[6], _noise_cue(kind, seg.frame))
        else:
            block.id = bid
            block.kind = kind
            block.text = text
            block.weight = weight
            block.tag = seg.frame.tag
            block.links = block_links
            block.noise_cue = _noise_cue(kind, seg.frame)
        seg.block = bid
        blocks.append(block)
        # what a link of the block reads of it, without an attribute look-up per link
        block_info.append((kind, weight, block_links))
        if text and not seg.frame.hidden and seg.frame.tag in heading_tags:
            headings.append(text)
    cdef str origin = _origin(page.base_url)
    for raw in walk.links:
        href = raw.href
        absolute = cache.get(href)
        if absolute is None:
            absolute = _resolve_common(href, origin, cache)
            if absolute is None:
                if href and href[0] == "#":
                    # a place on the page itself: whatever the fragment, the resolver (urljoin,
                    # then the fragment cut) answers what it answers for "#" alone
                    absolute = cache.get("#")
                    if absolute is None:
                        absolute = resolve("#")
                    cache[href] = absolute
                else:
                    absolute = resolve(href)
        if not absolute:
            continue
        a0 = raw.w0
        a1 = raw.w1
        if a1 - a0 > max_anchor_words:
            anchor = _join(words, a0, a0 + max_anchor_words)
            cut += 1
        else:
            if a1 > a0:
                anchor = _join(words, a0, a1)
            elif isinstance(raw.el, cetree._Element):
                anchor = _alt_text((<cetree._Element>raw.el)._c_node)
            else:
                anchor = alt_text(raw.el)
        if window > 0:
            n0 = raw.agg[0]
            n1 = raw.agg[1]
            # words[max(n0, a0 - window) : a0] and words[a1 : min(n1, a1 + window)], joined
            context = _join(words, max(n0, a0 - window), a0, a1, min(n1, a1 + window))
        else:
            context = ""
        bid = raw.segment.block if raw.segment is not None else -1
        if bid >= 0:
            info = <tuple>block_info[bid - first]
            kind = <str>info[0]
            link_weight = info[1]
            noise = kind == "noise"
        else:
            kind = "noise"
            link_weight = noise_weight
            noise = True
        link = link_cls.__new__(link_cls)
        if link_slots is not None:
            _put(link, <Py_ssize_t>link_slots[0], absolute)
            _put(link, <Py_ssize_t>link_slots[1], anchor)
            _put(link, <Py_ssize_t>link_slots[2], context)
            _put(link, <Py_ssize_t>link_slots[3], bid if bid >= 0 else -1)
            _put(link, <Py_ssize_t>link_slots[4], kind)
            _put(link, <Py_ssize_t>link_slots[5], link_weight)
            _put(link, <Py_ssize_t>link_slots[6], noise)
            _put(link, <Py_ssize_t>link_slots[7], raw.nofollow)
            _put(link, <Py_ssize_t>link_slots[8], False)
        else:
            link.url = absolute
            link.anchor = anchor
            link.context = context
            link.nofollow = raw.nofollow
            link.template = False
            link.block_id = bid if bid >= 0 else -1
            link.block_kind = kind
            link.block_weight = link_weight
            link.noise = noise
        if bid >= 0:
            (<list>info[2]).append(link)
        out_links.append(link)
    return cut


cdef inline bint _is_heading(const char* name) noexcept nogil:
    # h2, h3 or h4 (the linked headings of survey.KindSignals)
    return name[0] == 104 and 50 <= name[1] <= 52 and name[2] == 0


cdef bint _has_child(xmlNode* c, bint heading) noexcept nogil:
    """An element child named h2-h4 (``heading``) or ``a``, as XPath's ``h2[a]`` / ``a[h2]``."""
    cdef xmlNode* k = c.children
    while k is not NULL:
        if k.type == tree.XML_ELEMENT_NODE and k.ns is NULL:
            if heading:
                if _is_heading(<const char*>k.name):
                    return True
            elif strcmp(<const char*>k.name, "a") == 0:
                return True
        k = k.next
    return False


cdef str _MAIN_ROLE = rules.MAIN_ROLE


def survey(root):
    """``survey.survey_python`` compiled: one pass over the elements under ``root`` for the
    title, ``<base href>``, style sheets, class names and ids, the page kind's signals and the
    main regions and the <meta> / <link> elements of product facts."""
    cdef cetree._Element el = <cetree._Element?>root
    cdef xmlNode* top = el._c_node
    cdef xmlNode* c = top
    cdef xmlNode* nxt
    cdef xmlAttr* attr
    cdef object title = None, base = None
    cdef bint have_title = False, have_base = False, script, meta, link, itemprop
    cdef list sheets = [], json_ld = [], og_types = [], itemtypes = []
    cdef set values = set()  # distinct class attribute values: most elements share a few
    cdef set ids = set()
    cdef const char* name
    cdef const char* aname
    cdef str text, value
    cdef object kind_type, prop, meta_name, content
    cdef Py_ssize_t n_pre = 0, n_article = 0, n_time = 0, n_form = 0, linked = 0, prices = 0
    cdef Py_ssize_t max_itemtypes = _survey.MAX_ITEMTYPES
    cdef list mains = []
    cdef Py_ssize_t max_mains = rules.MAX_MAIN_REGIONS
    cdef list fact_meta = []
    cdef Py_ssize_t max_fact_meta = _survey.MAX_FACT_META
    cdef tuple fact_properties = _survey.FACT_META_PROPERTIES
    cdef bint is_main
    cdef char f
    cdef const char* raw
    cdef const char* last_class = NULL  # the last class value read as it is, and its "price"
    cdef bint last_price = False
    while c is not NULL:
        if c.type == tree.XML_ELEMENT_NODE:
            script = meta = link = itemprop = is_main = False
            if c.ns is NULL:
                # one branch per first letter: most elements (div, span, li …) compare nothing
                name = <const char*>c.name
                f = name[0]
                if f == 97:  # a, article
                    if name[1] == 0:
                        if _has_child(c, True):
                            linked += 1
                    elif strcmp(name, "article") == 0:
                        n_article += 1
                elif f == 104:  # h2-h4
                    if _is_heading(name) and _has_child(c, False):
                        linked += 1
                elif f == 115:  # style, script
                    if strcmp(name, "style") == 0:
                        text = cetree.textOf(c)
                        if text:
                            sheets.append(text)
                    elif strcmp(name, "script") == 0:
                        script = True
                elif f == 109:  # meta, main (rules.MAIN_TAG)
                    if strcmp(name, "meta") == 0:
                        meta = True
                    elif strcmp(name, "main") == 0:
                        is_main = True
                elif f == 112:  # pre
                    if strcmp(name, "pre") == 0:
                        n_pre += 1
                elif f == 116:  # time, title
                    if strcmp(name, "time") == 0:
                        n_time += 1
                    elif not have_title and c is not top and strcmp(name, "title") == 0:
                        have_title = True
                        title = cetree.textOf(c)
                        if title is None:
                            title = ""
                elif f == 102:  # form
                    if strcmp(name, "form") == 0:
                        n_form += 1
                elif f == 108:  # link
                    if strcmp(name, "link") == 0:
                        link = True
                elif f == 98:  # base
                    if not have_base and c is not top and strcmp(name, "base") == 0:
                        attr = c.properties
                        while attr is not NULL:
                            if attr.ns is NULL and strcmp(<const char*>attr.name, "href") == 0:
                                have_base = True
                                base = _attr_value(c, attr)
                                break
                            attr = attr.next
            kind_type = prop = meta_name = content = None
            attr = c.properties
            while attr is not NULL:
                if attr.ns is NULL:
                    aname = <const char*>attr.name
                    f = aname[0]
                    if f == 99:  # class, content
                        if strcmp(aname, "class") == 0:
                            raw = _simple_value(attr)
                            if raw is NULL:
                                value = _attr_value(c, attr)
                                values.add(value)
                                if "price" in value:
                                    prices += 1
                            else:
                                # siblings often share a class: the last one is not read again
                                if last_class is NULL or strcmp(raw, last_class) != 0:
                                    values.add(raw[:strlen(raw)].decode("utf-8"))
                                    last_class = raw
                                    last_price = strstr(raw, "price") is not NULL
                                if last_price:
                                    prices += 1
                        elif meta and strcmp(aname, "content") == 0:
                            content = _attr_value(c, attr)
                    elif f == 105:  # id, itemtype
                        if aname[1] == 100 and aname[2] == 0:
                            ids.add(_attr_value(c, attr))
                        elif strcmp(aname, "itemtype") == 0:
                            if len(itemtypes) < max_itemtypes:
                                itemtypes.append(_attr_value(c, attr))
                        elif (meta or link) and strcmp(aname, "itemprop") == 0:
                            itemprop = True
                    elif f == 114:  # role
                        if strcmp(aname, "role") == 0:
                            if _attr_value(c, attr).strip().lower() == _MAIN_ROLE:
                                is_main = True
                    elif f == 116:  # type
                        if script and strcmp(aname, "type") == 0:
                            kind_type = _attr_value(c, attr)
                    elif f == 112:  # property
                        if meta and strcmp(aname, "property") == 0:
                            prop = _attr_value(c, attr)
                    elif f == 110:  # name
                        if meta and strcmp(aname, "name") == 0:
                            meta_name = _attr_value(c, attr)
                attr = attr.next
            if script and kind_type is not None and kind_type.lower() == "application/ld+json":
                text = cetree.textOf(c)
                if text:
                    json_ld.append(text)
            elif meta and (prop or meta_name or "").lower() == "og:type":
                og_types.append(content or "")
            if is_main and len(mains) < max_mains:
                mains.append(cetree.elementFactory(el._doc, c))
            if (itemprop or (meta and prop is not None and prop.startswith(fact_properties))) \
                    and len(fact_meta) < max_fact_meta:
                fact_meta.append(cetree.elementFactory(el._doc, c))
            nxt = c.children
            if nxt is not NULL:
                c = nxt
                continue
        c = _after(c, top)
    signals = _survey.KindSignals(n_pre, n_article, n_time, n_form, linked, prices,
                                  tuple(json_ld), tuple(og_types), tuple(itemtypes))
    return _survey.Survey(title, base, sheets, set(" ".join(values).split()), ids, signals,
                          tuple(mains), tuple(fact_meta))


cdef inline unsigned int _fold(unsigned int c, bint fold) noexcept nogil:
    # With fold, the char of ``str.lower()`` as far as ASCII is concerned: only A-Z and the
    # Kelvin sign lower-case to ASCII letters without changing the length (U+0130 changes it:
    # the caller keeps such texts away); anything else stays non-ASCII, and whitespace stays
    # whitespace (tests/test_blocks_cwalk.py checks these facts over all code points).
    if fold:
        if c >= 65 and c <= 90:
            return c + 32
        if c == 0x212A:
            return 107
    return c


cdef inline Py_ssize_t _at(int kind, const void* data, Py_ssize_t i, Py_ssize_t n,
                           const char* word, bint fold) noexcept:
    """``len(word)`` when the text starts with ``word`` (ASCII) at ``i``, else 0."""
    cdef Py_ssize_t k = 0
    while word[k] != 0:
        if i + k >= n or _fold(PyUnicode_READ(kind, data, i + k), fold) != <unsigned int>word[k]:
            return 0
        k += 1
    return k


cdef const char* _CUE_WORDS[4]
_CUE_WORDS[:] = [b"display", b"visibility", b"float", b"position"]
cdef const char* _CUE_VALUES[7]
_CUE_VALUES[:] = [b"none", b"hidden", b"left", b"right", b"fixed", b"absolute", b"sticky"]


# The index + 1 in _CUE_WORDS of the property a character may start ("d", "v", "f", "p"), by
# character code; _CUE_FIRST_FOLDED also for the upper-case letters (the Kelvin sign starts none).
cdef unsigned char _CUE_FIRST[256]
cdef unsigned char _CUE_FIRST_FOLDED[256]
memset(_CUE_FIRST, 0, sizeof(_CUE_FIRST))
for _i, _ch in enumerate("dvfp"):
    _CUE_FIRST[ord(_ch)] = _i + 1
memcpy(_CUE_FIRST_FOLDED, _CUE_FIRST, sizeof(_CUE_FIRST))
for _i, _ch in enumerate("DVFP"):
    _CUE_FIRST_FOLDED[ord(_ch)] = _i + 1


cdef inline Py_ssize_t _cue_candidate(int kind, const void* data, Py_ssize_t i, Py_ssize_t n,
                                      const unsigned char* first) noexcept nogil:
    """The first position at or after ``i`` where a property of ``_CUE_WORDS`` may start; n."""
    cdef const unsigned char* bytes_
    cdef Py_UCS4 ch
    if kind == 1:
        bytes_ = <const unsigned char*>data
        while i < n and not first[bytes_[i]]:
            i += 1
        return i
    while i < n:
        ch = PyUnicode_READ(kind, data, i)
        if ch < 256 and first[ch]:
            return i
        i += 1
    return n


cdef Py_ssize_t _cue_match(int kind, const void* data, Py_ssize_t i, Py_ssize_t n, bint fold,
                           int* word, int* value) noexcept:
    """Just past the hiding / floating declaration (``css._CUE``) that starts at ``i``, with the
    indexes of its property (``_CUE_WORDS``) and value (``_CUE_VALUES``); 0 when none does."""
    cdef Py_UCS4 ch = PyUnicode_READ(kind, data, i)
    cdef Py_ssize_t j, m
    cdef int w, k
    if ch >= 256:
        return 0
    w = (_CUE_FIRST_FOLDED[ch] if fold else _CUE_FIRST[ch]) - 1
    if w < 0:
        return 0
    m = _at(kind, data, i, n, _CUE_WORDS[w], fold)
    if m == 0:
        return 0
    j = i + m
    while j < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j)):
        j += 1
    if j >= n or PyUnicode_READ(kind, data, j) != 58:  # :
        return 0
    j += 1
    while j < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j)):
        j += 1
    for k in range(7):  # no value is a prefix of another: at most one matches
        m = _at(kind, data, j, n, _CUE_VALUES[k], fold)
        if m:
            word[0] = w
            value[0] = k
            return j + m
    return 0


def cue_starts(str text, bint fold=False):
    """``[m.start() for m in css._CUE.finditer(text)]`` (the hiding / floating declarations);
    with ``fold``, those of ``text.lower()``, or None when ``text`` holds U+0130 (the one
    character whose lower case is longer: offsets would shift)."""
    cdef list out = []
    cdef Py_ssize_t n = len(text), i = 0, end
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef int w, v
    if fold and kind != 1:  # (a UCS1 string cannot hold U+0130)
        for i in range(n):
            if PyUnicode_READ(kind, data, i) == 0x130:
                return None
        i = 0
    cdef const unsigned char* first = &_CUE_FIRST_FOLDED[0] if fold else &_CUE_FIRST[0]
    while True:
        i = _cue_candidate(kind, data, i, n, first)
        if i >= n:
            return out
        end = _cue_match(kind, data, i, n, fold, &w, &v)
        if end:
            out.append(i)
            i = end
        else:
            i += 1


# ---- css._cue_rules / sheet.strip_at_rules, compiled --------------------------------------

cdef enum:
    CUE_HIDDEN = 1  # rules.HIDDEN_STYLE_RE: display: none, visibility: hidden
    CUE_SIDEBAR = 2  # rules.SIDEBAR_STYLE_RE: float: left|right, position: fixed|absolute|sticky


cdef int _cue_kinds(int kind, const void* data, Py_ssize_t a, Py_ssize_t b) noexcept:
    """Whether ``text[a:b].lower()`` holds a hiding and / or a floating declaration (the
    ``sheet.declares_hidden`` / ``sheet.declares_sidebar`` searches: at every position, overlapping ones too)."""
    cdef int out = 0, w = 0, v = 0
    cdef Py_ssize_t i = a
    while True:
        i = _cue_candidate(kind, data, i, b, _CUE_FIRST_FOLDED)
        if i >= b:
            return out
        if _cue_match(kind, data, i, b, True, &w, &v):
            if (w == 0 and v == 0) or (w == 1 and v == 1):
                out |= CUE_HIDDEN
            elif (w == 2 and (v == 2 or v == 3)) or (w == 3 and v >= 4):
                out |= CUE_SIDEBAR
            if out == CUE_HIDDEN | CUE_SIDEBAR:
                return out
        i += 1


cdef inline Py_ssize_t _next_brace(int kind, const void* data, Py_ssize_t i,
                                   Py_ssize_t n) noexcept:
    """Where the first "{" or "}" at or after ``i`` is; ``n`` when there is none. One loop per
    width of the string (no ``PyUnicode_READ`` switch per character); 1-byte strings eight
    characters at a time (a style sheet's @media blocks are most of it)."""
    cdef const unsigned char* b1
    cdef const unsigned short* b2
    cdef const unsigned int* b4
    cdef uint64_t word, x, y
    if kind == 1:
        b1 = <const unsigned char*>data
        while i + 8 <= n:
            memcpy(&word, b1 + i, 8)
            x = word ^ 0x7B7B7B7B7B7B7B7BULL  # {
            y = word ^ 0x7D7D7D7D7D7D7D7DULL  # }
            if ((x - 0x0101010101010101ULL) & ~x | (y - 0x0101010101010101ULL) & ~y) \
                    & 0x8080808080808080ULL:
                break
            i += 8
        while i < n:
            if b1[i] == 123 or b1[i] == 125:
                return i
            i += 1
        return n
    if kind == 2:
        b2 = <const unsigned short*>data
        while i < n:
            if b2[i] == 123 or b2[i] == 125:
                return i
            i += 1
        return n
    b4 = <const unsigned int*>data
    while i < n:
        if b4[i] == 123 or b4[i] == 125:
            return i
        i += 1
    return n


cdef Py_ssize_t _one_level_block(int kind, const void* data, Py_ssize_t j,
                                 Py_ssize_t n) noexcept:
    """``sheet._AT_RULE``'s block alternative from the "{" at ``j`` (rules one level deep, each
    run of non-braces taken whole): just past its "}", or -1 when it does not match."""
    cdef Py_ssize_t p = j + 1, q
    while True:
        q = _next_brace(kind, data, p, n)
        if q >= n:
            return -1
        if PyUnicode_READ(kind, data, q) == 125:  # }
            return q + 1
        q = _next_brace(kind, data, q + 1, n)  # inside a nested rule
        if q >= n or PyUnicode_READ(kind, data, q) != 125:
            return -1  # nested deeper, or never closed
        p = q + 1


cdef Py_ssize_t _closing(int kind, const void* data, Py_ssize_t pos, Py_ssize_t n) noexcept:
    """``sheet._block_end``: just past the "}" closing the block opened before ``pos``; -1."""
    cdef Py_ssize_t depth = 1, i
    cdef Py_UCS4 ch
    for i in range(pos, n):
        ch = PyUnicode_READ(kind, data, i)
        if ch == 123:
            depth += 1
        elif ch == 125:
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


cdef inline Py_ssize_t _comment_open(str text, Py_ssize_t i, Py_ssize_t n) except -2:
    """``text.find("/*", i)``: found by its "*" (``PyUnicode_FindChar``, memchr-fast on most
    strings; a sheet holds few "*" and many "/"), then the "/" before it checked."""
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t k = i + 1
    while k < n:
        k = PyUnicode_FindChar(text, 42, k, n, 1)  # *
        if k < 0:
            return -1
        if PyUnicode_READ(kind, data, k - 1) == 47:  # /
            return k - 1
        k += 1
    return -1


cdef inline Py_ssize_t _comment_close(str text, Py_ssize_t i, Py_ssize_t n) except -2:
    """``text.find("*/", i)``, by its "*" as ``_comment_open``."""
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t k = i
    while k + 1 < n:
        k = PyUnicode_FindChar(text, 42, k, n - 1, 1)  # a "*" with a character after it
        if k < 0:
            return -1
        if PyUnicode_READ(kind, data, k + 1) == 47:  # /
            return k
        k += 1
    return -1


def strip_comments(str text):
    """``sheet.strip_comments`` compiled (the same text): the same searches, without a
    Python-level step per comment."""
    cdef Py_ssize_t n = len(text), start, end, last = 0
    cdef list pieces
    start = _comment_open(text, 0, n)
    if start < 0:
        return text
    pieces = []
    while start >= 0:
        end = _comment_close(text, start + 2, n)
        if end < 0:
            break  # no "*/" after this one: none after any later "/*" either
        pieces.append(text[last:start])
        last = end + 2
        start = _comment_open(text, last, n)
    pieces.append(text[last:])
    return "".join(pieces)


def strip_at_rules(str text):
    """``sheet.strip_at_rules`` compiled (the same text)."""
    cdef Py_ssize_t n = len(text), i, j, end, last = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 ch
    cdef list pieces = []
    i = PyUnicode_FindChar(text, 64, 0, n, 1)  # @
    if i < 0:
        return text
    while i >= 0:
        # the prelude: everything up to a "{", "}" or ";" (an "@" in it is passed over)
        j = i + 1
        while j < n:
            ch = PyUnicode_READ(kind, data, j)
            if ch == 123 or ch == 125 or ch == 59:
                break
            j += 1
        if j >= n:
            break  # never ends: left as it is
        if ch == 59:  # ;
            pieces.append(text[last:i])
            last = end = j + 1
        elif ch == 123:  # {
            pieces.append(text[last:i])
            pieces.append("}")
            end = _one_level_block(kind, data, j, n)
            if end < 0:  # nested deeper: count the braces
                end = _closing(kind, data, j + 1, n)
                if end < 0:
                    return "".join(pieces)
            last = end
        else:  # "}": not an at-rule's end, nothing removed
            end = j
        i = PyUnicode_FindChar(text, 64, end, n, 1)
    pieces.append(text[last:])
    return "".join(pieces)


cdef Py_ssize_t _next_cue(str text, int kind, const void* data, Py_ssize_t at, Py_ssize_t n,
                          Py_ssize_t start, Py_ssize_t* colon, Py_ssize_t* end) except -2:
    """``css._CUE`` (folded) as ``finditer`` finds it past a match ending at ``start``: where
    the next declaration starts that begins at or after ``start`` and whose ":" is at or after
    ``at``; -1: none. Found by its ":" (``PyUnicode_FindChar``; a sheet has about one a
    declaration, and "d", "v", "f" or "p" every few characters): a match holds exactly one
    ":", its property ends just before the whitespace in front of it and its value starts
    after the whitespace behind it, so each ":" is the ":" of at most one match, and matches
    come in the order of their ":". Sets ``colon`` to that ":" and ``end`` just past the
    match. Each whitespace run before a ":" is read once: linear in the text."""
    cdef Py_ssize_t c = at, e, j, m, s, lo
    cdef Py_UCS4 last
    cdef int k, w
    while c < n:
        c = PyUnicode_FindChar(text, 58, c, n, 1)  # :
        if c < 0:
            return -1
        # the value: whitespace, then one of _CUE_VALUES (no value is a prefix of another)
        j = c + 1
        while j < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j)):
            j += 1
        m = 0
        for k in range(7):
            m = _at(kind, data, j, n, _CUE_VALUES[k], True)
            if m:
                break
        if m:
            # the property: whitespace back from the ":", then a word ending there
            e = c
            while e > start and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, e - 1)):
                e -= 1
            if e > start:
                last = _fold(PyUnicode_READ(kind, data, e - 1), True)
                lo = -1
                if last == 121:  # y: display, visibility
                    lo = 0
                elif last == 116:  # t: float
                    lo = 2
                elif last == 110:  # n: position
                    lo = 3
                if lo >= 0:
                    for w in range(lo, 2 if lo == 0 else lo + 1):
                        s = e - <Py_ssize_t>strlen(_CUE_WORDS[w])
                        if s >= start and _at(kind, data, s, n, _CUE_WORDS[w], True):
                            colon[0] = c
                            end[0] = j + m
                            return s
        c += 1
    return -1


def sheet_rules(str sheet, Py_ssize_t limit):
    """``css.cue_rules_python(sheet, limit)`` compiled: ``([(selectors, hides)], whole)``; None
    when the sheet, its comments and at-rules removed, holds U+0130 (the Python reading then
    reads it: its lower case is longer)."""
    cdef str text = strip_at_rules(strip_comments(sheet))
    cdef Py_ssize_t n = len(text), i = 0, pos, end, k, a, b, count = 0
    cdef Py_ssize_t scanned = 0, last_brace_open = -1, last_brace_close = -1
    cdef Py_ssize_t next_open = -2, next_close = -2, last_open = -1, open_at, last_close, outer
    cdef Py_ssize_t stop, colon = -1
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef int cues
    cdef list out = []
    cdef str selectors
    if kind != 1 and PyUnicode_FindChar(text, 0x130, 0, n, 1) >= 0:
        return None  # (a UCS1 string cannot hold U+0130)
    while True:
        pos = _next_cue(text, kind, data, colon + 1, n, i, &colon, &end)
        if pos < 0:
            return out, True
        i = end  # the next cue after this one, as finditer goes
        # the last "{" and "}" before pos: searched back to where the last search began
        if scanned < pos:
            k = PyUnicode_FindChar(text, 123, scanned, pos, -1)
            if k >= 0:
                last_brace_open = k
            k = PyUnicode_FindChar(text, 125, scanned, pos, -1)
            if k >= 0:
                last_brace_close = k
            scanned = pos
        open_at = last_brace_open
        last_close = last_brace_close
        if open_at <= last_open or open_at < last_close:
            continue  # same rule as the previous cue, or not inside a rule body
        last_open = open_at
        # a "{" between the last "}" and this rule's "{" opens a block around the rule
        outer = -1
        k = open_at - 1
        while k > last_close:
            if PyUnicode_READ(kind, data, k) == 123:
                outer = k
                break
            k -= 1
        a = (last_close if last_close > outer else outer) + 1
        b = open_at
        while a < b and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, a)):
            a += 1
        while b > a and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, b - 1)):
            b -= 1
        selectors = text[a:b]
        if outer >= 0:
            selectors = "{ " + selectors
        # the declarations end at the next brace after the cue (the first "}" or "{")
        if next_close != -1 and next_close < pos:
            next_close = PyUnicode_FindChar(text, 125, pos, n, 1)
        if next_open != -1 and next_open < pos:
            next_open = PyUnicode_FindChar(text, 123, pos, n, 1)
        stop = n
        if 0 <= next_close < stop:
            stop = next_close
        if 0 <= next_open < stop:
            stop = next_open
        cues = _cue_kinds(kind, data, open_at + 1, stop)
        count += 1
        if cues:
            out.append((selectors, bool(cues & CUE_HIDDEN)))
        if count >= limit:
            return out, False


def feature_info(str value):
    """The compiled ``caches.feature_info`` (for tests: it bypasses no cache)."""
    return _feature_info(value)


# ---- classify.py, compiled: the same steps on the typed frames and segments ------------------

cdef Py_ssize_t _MIN_PARAGRAPH_CHARS = rules.MIN_PARAGRAPH_CHARS
cdef double _PARAGRAPH_MAX_LENGTH_BONUS = rules.PARAGRAPH_MAX_LENGTH_BONUS
cdef tuple _ANCESTOR_SHARES = tuple(float(x) for x in rules.ANCESTOR_SHARES)
cdef dict _TAG_SCORE = {k: float(v) for k, v in rules.TAG_SCORE.items()}
cdef object _PARAGRAPH_TAGS = rules.PARAGRAPH_TAGS
cdef object _CLEANED_TAGS = rules.CLEANED_TAGS
cdef object _P_LIKE = frozenset({"p", "pre", "td"})
cdef object _TOP_TAGS = frozenset({"body", "html", "frameset"})
cdef object _HEADERS = ("h1", "h2", "h3", "h4", "h5", "h6")


cdef inline double _ld(Py_ssize_t link_chars, Py_ssize_t chars):
    cdef double x
    if chars:
        x = <double>link_chars / <double>chars
        return x if x < 1.0 else 1.0
    return 0.0


cdef Py_ssize_t _joined_len(list words, Py_ssize_t w0, Py_ssize_t w1):
    """``len(" ".join(words[w0:w1]))``."""
    cdef Py_ssize_t i, n = 0
    if w1 <= w0:
        return 0
    for i in range(w0, w1):
        n += len(<str>words[i])
    return n + (w1 - w0 - 1)


cdef Frame _score(list frames, list segments, list words, bint ruthless, bint refine):
    cdef Frame f, target, node, best
    cdef Segment seg
    cdef list voted = []
    cdef double vote, share, bonus
    for f in frames:
        f.candidate = False
        f.score = 0.0
    for seg in segments:
        f = seg.frame
        if seg.chars < _MIN_PARAGRAPH_CHARS or f.hidden or (ruthless and f.unlikely):
            continue
        if f.tag not in _PARAGRAPH_TAGS:
            continue
        target = f.parent if f.tag in _P_LIKE or (f.leaf and f.tag == "div") else f
        if target is None:
            continue
        bonus = _joined_len(words, seg.w0, seg.w1) / 100.0
        if not (bonus < _PARAGRAPH_MAX_LENGTH_BONUS):
            bonus = _PARAGRAPH_MAX_LENGTH_BONUS
        vote = 1.0 + seg.commas + 1 + bonus
        node = target
        for share in _ANCESTOR_SHARES:
            if node is None:
                break
            if not node.candidate:
                node.candidate = True
                node.score = <double>_TAG_SCORE.get(node.tag, 0.0) + node.weight
                voted.append(node)
            node.score += vote * share
            node = node.parent
    best = None
    for node in voted:
        node.score *= 1.0 - _ld(node.link_chars, node.chars)
        if best is None or node.score > best.score:
            best = node
    if best is None or not refine:
        return best
    return _refine(best, voted)


def _by_score(Frame f):
    return f.score


cdef set _ancestors(Frame f):
    cdef set out = set()
    cdef Frame p = f.parent
    while p is not None:
        out.add(p.pre)
        p = p.parent
    return out


cdef Frame _refine(Frame best, list voted):
    cdef list top = sorted(voted, key=_by_score, reverse=True)[: rules.TOP_CANDIDATES]
    cdef list alternatives
    cdef Frame f, p
    cdef double last, threshold
    cdef int count
    cdef set a
    if best.score > 0:
        alternatives = [
            _ancestors(f)
            for f in top[1:]
            if f.score / best.score >= rules.ALTERNATIVE_CANDIDATE_SHARE
        ]
        if len(alternatives) >= rules.MIN_ALTERNATIVE_CANDIDATES:
            p = best.parent
            while p is not None and p.tag not in _TOP_TAGS:
                count = 0
                for a in alternatives:
                    if p.pre in a:
                        count += 1
                if count >= rules.MIN_ALTERNATIVE_CANDIDATES:
                    best = p
                    break
                p = p.parent
    p = best.parent
    last = best.score
    threshold = last / 3
    while p is not None and p.tag not in _TOP_TAGS:
        if p.candidate:
            if p.score < threshold:
                break
            if p.score > last:
                best = p
                break
            last = p.score
        p = p.parent
    p = best.parent
    while p is not None and p.tag not in _TOP_TAGS and len(p.children) == 1:
        best, p = p, p.parent
    return best


cdef list _article(list segments, list words, Frame best, dict own):
    cdef Frame parent = best.parent
    cdef Frame sib
    cdef double threshold, ld
    cdef bint keep
    cdef list chosen = []
    if parent is None:
        return [best]
    threshold = max(rules.SIBLING_MIN_SCORE, best.score * rules.SIBLING_SCORE_SHARE)
    for sib in parent.children:
        keep = sib is best or (sib.candidate and sib.score >= threshold)
        if not keep and not sib.hidden and (sib.tag == "p" or (sib.tag == "div" and sib.leaf)):
            ld = _ld(sib.link_chars, sib.chars)
            if sib.chars > rules.SIBLING_PARAGRAPH_CHARS:
                keep = ld < rules.SIBLING_PARAGRAPH_MAX_LINK_DENSITY
            else:
                keep = ld == 0 and sib.chars > 0 and _own_text_has_sentence(segments, words, sib, own)
        if keep:
            chosen.append(sib)
    return chosen


_SENTENCE_END = re.compile(r"\.( |$)")


cdef bint _own_text_has_sentence(list segments, list words, Frame frame, dict own):
    """classify._OwnText.has_sentence: ``own`` maps each frame to its segments, filled on first
    use (a scan of every segment per short sibling is quadratic)."""
    cdef Segment seg
    cdef object mine
    if not own and segments:
        for seg in segments:
            mine = own.get(seg.frame)
            if mine is None:
                own[seg.frame] = [seg]
            else:
                (<list>mine).append(seg)
    for seg in own.get(frame, ()):
        if _SENTENCE_END.search(" ".join(words[seg.w0 : seg.w1])):
            return True
    return False


cdef bint _remove_conditionally(Frame f):
    cdef double weight = f.weight, ld
    cdef Py_ssize_t length
    if weight + (f.score if f.candidate else 0.0) < 0:
        return True
    if f.commas >= rules.CLEAN_KEEP_COMMAS:
        return False
    length = f.chars
    ld = _ld(f.link_chars, f.chars)
    if f.n_p and f.n_img > 1 + f.n_p * 1.3:
        return True
    if f.n_input > f.n_p / 3.0:
        return True
    if length < rules.MIN_PARAGRAPH_CHARS and (f.n_img == 0 or f.n_img > 2):
        return True
    if weight < rules.CLASS_WEIGHT and ld > rules.CLEAN_LOW_WEIGHT_MAX_LINK_DENSITY:
        return True
    if weight >= rules.CLASS_WEIGHT and ld > rules.CLEAN_HIGH_WEIGHT_MAX_LINK_DENSITY:
        return True
    return (f.n_embed == 1 and length < 75) or f.n_embed > 1 or not length


cdef bint _keep_between_long_text(Frame f):
    cdef Frame parent = f.parent
    cdef list sibs
    cdef Py_ssize_t i, around
    if parent is None:
        return False
    sibs = parent.children
    i = _index_by_preorder(sibs, f)
    around = ((<Frame>sibs[i - 1]).chars if i > 0 else 0) + (
        (<Frame>sibs[i + 1]).chars if i + 1 < len(sibs) else 0)
    return around > 1000


cdef Py_ssize_t _index_by_preorder(list sibs, Frame f):
    """``sibs.index(f)`` by bisection: children are in preorder (index() is linear, and is
    asked for every cleaned child)."""
    cdef Py_ssize_t lo = 0, hi = len(sibs), mid
    while lo < hi:
        mid = (lo + hi) // 2
        if (<Frame>sibs[mid]).pre < f.pre:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef int _clean(list frames, list roots, bint ruthless) except -1:
    cdef Frame f, p, root
    cdef Py_ssize_t i
    for f in frames:
        f.removed = True
    for root in roots:
        root.removed = root.hidden
        for i in range(root.pre + 1, min(root.post + 1, len(frames))):
            f = <Frame>frames[i]
            p = f.parent
            if (
                p is None
                or p.removed
                or f.hidden
                or (ruthless and f.unlikely)
                or f.tag == "form" or f.tag == "nav"
            ):
                f.removed = True
            elif f.tag in _HEADERS:
                f.removed = (
                    f.weight < 0 or _ld(f.link_chars, f.chars) > rules.HEADER_MAX_LINK_DENSITY
                )
            elif f.tag in _CLEANED_TAGS:
                f.removed = _remove_conditionally(f) and not _keep_between_long_text(f)
            else:
                f.removed = False
    return 0


cdef list _attempt(list frames, list segments, list words, bint ruthless, bint refine,
                   dict own):
    cdef Frame best = _score(frames, segments, words, ruthless, refine)
    cdef list roots
    if best is None:
        best = <Frame>(frames[1] if len(frames) > 1 else frames[0])
    roots = _article(segments, words, best, own)
    _clean(frames, roots, ruthless)
    return roots


cdef Py_ssize_t _kept_chars(list segments):
    cdef Segment s
    cdef Py_ssize_t n = 0
    for s in segments:
        if not s.frame.removed:
            n += s.chars
    return n


cdef list _choose_text(list frames, list segments, list words):
    cdef Segment s
    cdef Py_ssize_t unlikely = 0, total = 0, kept
    cdef list attempts = [], roots = [], order
    cdef dict own = {}
    cdef tuple passes
    if not frames:
        return []
    for s in segments:
        total += s.chars
        if s.frame.unlikely:
            unlikely += s.chars
    if total == 0:
        total = 1
    if unlikely < rules.RETRY_MAX_UNLIKELY_SHARE * total:
        passes = _BOTH_PASSES
    else:
        passes = _LAST_PASS
    order = [(r, True) for r in passes] + [(r, False) for r in passes]
    for ruthless, refine in order:
        roots = _attempt(frames, segments, words, ruthless, refine, own)
        kept = _kept_chars(segments)
        if kept >= rules.RETRY_MIN_CHARS:
            return roots
        attempts.append((kept, ruthless, refine))
    kept_best = max(attempts, key=_first)
    if (kept_best[1], kept_best[2]) == attempts[-1][1:]:
        return roots
    return _attempt(frames, segments, words, kept_best[1], kept_best[2], own)


_BOTH_PASSES = (True, False)
_LAST_PASS = (False,)


def _first(tuple t):
    return t[0]


cdef bint _in_article_area(Frame f):
    cdef Frame p = f.parent
    cdef int k
    for k in range(4):
        if p is None:
            return False
        if not p.removed:
            return True
        p = p.parent
    return False


def classify(walk):
    """``classify.classify`` compiled: ``(kind, weight)`` for every segment of a compiled walk."""
    cdef list frames = walk.frames, segs = walk.segments, words = walk.words
    cdef list out = []
    cdef Segment seg, ref = None
    cdef Frame f
    cdef set reference = set(), lowered
    cdef double ld, size, weight, sim
    cdef Py_ssize_t i
    _choose_text(frames, segs, words)
    for seg in segs:  # the reference block: the text block with the most non-link text
        if not seg.frame.removed and seg.chars:
            if ref is None or seg.chars - seg.link_chars > ref.chars - ref.link_chars:
                ref = seg
    if ref is not None:
        reference = {w.lower() for w in words[ref.w0 : ref.w1]}
    for seg in segs:
        f = seg.frame
        if seg.chars:
            ld = _ld(seg.link_chars, seg.chars)
        else:
            ld = 1.0 if seg.links else 0.0
        if not f.removed and (seg.chars or seg.links):
            size = (seg.chars - seg.link_chars) / 200.0
            if not (size < 1.0):
                size = 1.0
            weight = _WEIGHT_TEXT_BASE + (1.0 - _WEIGHT_TEXT_BASE) * (1.0 - ld) * size
            weight = weight if weight > _WEIGHT_TEXT_BASE else _WEIGHT_TEXT_BASE
            out.append(("text", _pyround(weight, 3)))
        elif f.hidden:
            out.append(("noise", 0.0))
        elif seg.links and ld >= rules.LINK_BLOCK_MIN_DENSITY and not (f.noise or f.unlikely):
            if _in_article_area(f):
                out.append(("link", rules.WEIGHT_LINK_IN_ARTICLE))
            else:
                sim = 0.0
                if seg.w1 > seg.w0 and reference:
                    lowered = {w.lower() for w in words[seg.w0 : seg.w1]}
                    sim = <double>len(lowered & reference) / <double>len(lowered)
                weight = _WEIGHT_LINK_BASE + _WEIGHT_LINK_SIMILARITY * sim
                out.append(("link", _pyround(weight, 3)))
        elif f.noise or f.unlikely or f.weight < 0:
            out.append(("noise", rules.WEIGHT_NOISE))
        else:
            out.append(("noise", rules.WEIGHT_NOISE_OUTSIDE))
    return out


_pyround = round  # Python's round (correctly rounded to 3 digits), not C's
cdef double _WEIGHT_TEXT_BASE = rules.WEIGHT_TEXT_BASE
cdef double _WEIGHT_LINK_BASE = rules.WEIGHT_LINK_BASE
cdef double _WEIGHT_LINK_SIMILARITY = rules.WEIGHT_LINK_SIMILARITY


def release(walk):
    """Break the walk's reference cycles (frame <-> children, segment <-> links), so that
    reference counting frees it at once (``partition._fill`` does this after assembly)."""
    cdef Frame f
    cdef Segment seg
    for f in walk.frames:  # emptied in place (as the Python walk's are): no new list each
        if f.children:
            PyList_Clear(f.children)
    for seg in walk.segments:
        if seg.links:
            PyList_Clear(seg.links)


# ---- markup.py's scan, compiled: the same tokens, over the string's own code units ----------
# One specialization per width of str (1, 2 or 4 bytes a character): this scan runs on every
# page, so it reads the characters directly rather than through PyUnicode_READ's switch.

ctypedef unsigned char ucs1_t
ctypedef unsigned short ucs2_t
ctypedef unsigned int ucs4_t

ctypedef fused ucs_t:
    ucs1_t
    ucs2_t
    ucs4_t


cdef inline bint _mws(unsigned int ch) noexcept nogil:
    return ch == 32 or ch == 9 or ch == 10 or ch == 12 or ch == 13


cdef inline bint _letter(unsigned int ch) noexcept nogil:
    return (65 <= ch <= 90) or (97 <= ch <= 122)


cdef inline unsigned int _lower(unsigned int ch) noexcept nogil:
    return ch + 32 if 65 <= ch <= 90 else ch


# Character classes inside a tag, by code (ASCII only: others are none of these).
cdef enum:
    C_WS = 1
    C_SLASH = 2
    C_GT = 4
    C_EQ = 8
cdef unsigned char _CLASS[128]
memset(_CLASS, 0, sizeof(_CLASS))
_CLASS[32] = _CLASS[9] = _CLASS[10] = _CLASS[12] = _CLASS[13] = C_WS
_CLASS[47] = C_SLASH
_CLASS[62] = C_GT
_CLASS[61] = C_EQ


cdef inline unsigned int _cls(unsigned int ch) noexcept nogil:
    return _CLASS[ch] if ch < 128 else 0


cdef const char* _RAW_NAMES[9]
_RAW_NAMES[:] = [b"script", b"style", b"xmp", b"iframe", b"noembed", b"noframes", b"title",
                 b"textarea", b"plaintext"]


cdef inline Py_ssize_t _find(const ucs_t* d, Py_ssize_t i, Py_ssize_t n, unsigned int ch) noexcept nogil:
    """Where ``ch`` (ASCII) is first at or after i; -1: nowhere."""
    cdef const void* hit
    cdef uint64_t word, x, pattern
    if i >= n:
        return -1
    if ucs_t is ucs1_t:
        hit = memchr(d + i, <int>ch, <size_t>(n - i))
        return -1 if hit is NULL else <Py_ssize_t>(<const unsigned char*>hit - d)
    else:
        if ucs_t is ucs2_t:
            # four characters at a time: skip the words with no lane equal to ch (most pages
            # are 2-byte strings: one non-Latin-1 character makes the whole page so)
            pattern = <uint64_t>ch * 0x0001000100010001ULL
            while i + 4 <= n:
                memcpy(&word, d + i, 8)
                x = word ^ pattern
                if (x - 0x0001000100010001ULL) & ~x & 0x8000800080008000ULL:
                    break
                i += 4
        while i < n:
            if d[i] == ch:
                return i
            i += 1
        return -1


cdef int _raw_kind(const ucs_t* d, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """Index in _RAW_NAMES of the tag name d[a:b] (ASCII case-insensitive), -1: none."""
    cdef int r
    cdef Py_ssize_t k
    cdef const char* word
    for r in range(9):
        word = _RAW_NAMES[r]
        k = 0
        while word[k] != 0 and a + k < b and _lower(d[a + k]) == <unsigned char>word[k]:
            k += 1
        if word[k] == 0 and a + k == b:
            return r
    return -1


cdef Py_ssize_t _raw_end(const ucs_t* d, Py_ssize_t i, Py_ssize_t n, const char* word) noexcept nogil:
    """Where ``</word`` followed by whitespace, "/" or ">" starts at or after i; -1: nowhere."""
    cdef Py_ssize_t k
    cdef unsigned int ch
    while i + 1 < n:
        i = _find(d, i, n, 60)  # <
        if i < 0:
            return -1
        if i + 1 < n and d[i + 1] == 47:
            k = 0
            while word[k] != 0 and i + 2 + k < n and _lower(d[i + 2 + k]) == <unsigned char>word[k]:
                k += 1
            if word[k] == 0 and i + 2 + k < n:
                ch = d[i + 2 + k]
                if _mws(ch) or ch == 47 or ch == 62:
                    return i
        i += 1
    return -1


cdef Py_ssize_t _past(const ucs_t* d, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """Just past the first ">" at or after i; -1: none."""
    i = _find(d, i, n, 62)
    return i + 1 if i >= 0 else -1


cdef Py_ssize_t _tag(const ucs_t* d, Py_ssize_t i, Py_ssize_t n, Py_ssize_t* name_end,
                     Py_ssize_t* count, Py_ssize_t* first, Py_ssize_t limit) noexcept nogil:
    """Read the tag whose name starts at i: its end (past ">", or n), where its name ends, how
    many attributes it has and where the one past ``limit`` starts (-1: none)."""
    cdef unsigned int c, q
    cdef Py_ssize_t k, attributes = 0, at = -1
    while i < n and not (_cls(d[i]) & (C_WS | C_SLASH | C_GT)):
        i += 1
    name_end[0] = i
    while i < n:
        c = _cls(d[i])
        if c & C_GT:
            i += 1
            break
        if c & (C_WS | C_SLASH):
            i += 1
            continue
        attributes += 1
        if attributes == limit + 1:
            at = i
        i += 1  # the name's first character may be "="
        while i < n and not (_cls(d[i]) & (C_WS | C_SLASH | C_GT | C_EQ)):
            i += 1
        k = i
        while k < n and _cls(d[k]) & C_WS:
            k += 1
        if k < n and d[k] == 61:  # =
            k += 1
            while k < n and _cls(d[k]) & C_WS:
                k += 1
            if k < n:
                q = d[k]
                if q == 34 or q == 39:  # a quoted value: to its quote, or the end
                    k = _find(d, k + 1, n, q)
                    k = n if k < 0 else k + 1
                else:
                    while k < n and not (_cls(d[k]) & (C_WS | C_GT)):
                        k += 1
            i = k
    count[0] = attributes
    first[0] = at
    return i


cdef Py_ssize_t _comment_end(const ucs_t* d, Py_ssize_t k, Py_ssize_t n) noexcept nogil:
    """Just past the first "-->" or "--!>" at or after k; -1: none."""
    while k + 2 < n:
        k = _find(d, k, n, 45)  # -
        if k < 0 or k + 2 >= n:
            return -1
        if d[k + 1] == 45:
            if d[k + 2] == 62:
                return k + 3
            if k + 3 < n and d[k + 2] == 33 and d[k + 3] == 62:
                return k + 4
        k += 1
    return -1


cdef Py_ssize_t _scan(const ucs_t* d, Py_ssize_t n, Py_ssize_t max_attributes,
                      Py_ssize_t max_elements, list spans, Py_ssize_t* dropped) except -2:
    """markup_cuts over ``d``: appends the spans, returns the cut (-1: none)."""
    cdef Py_ssize_t tags = 0, pos = 0, lt, name_end, count, first
    cdef unsigned int c, c2
    cdef int raw
    while True:
        lt = _find(d, pos, n, 60)  # <
        if lt < 0 or lt + 1 >= n:
            return -1
        c = d[lt + 1]
        if _letter(c):
            tags += 1
            if tags > max_elements:
                return lt
            pos = _tag(d, lt + 1, n, &name_end, &count, &first, max_attributes)
            if count > max_attributes:
                spans.append((first, pos - 1 if d[pos - 1] == 62 else pos))
                dropped[0] += count - max_attributes
            raw = _raw_kind(d, lt + 1, name_end)
            if raw == 8:  # plaintext: the rest of the page is its text
                return -1
            if raw >= 0:
                pos = _raw_end(d, pos, n, _RAW_NAMES[raw])
        elif c == 47:  # /
            if lt + 2 >= n:
                return -1
            c2 = d[lt + 2]
            if _letter(c2):
                pos = _tag(d, lt + 2, n, &name_end, &count, &first, n)
            elif c2 == 62:
                pos = lt + 3
            else:
                pos = _past(d, lt + 2, n)
        elif c == 33:  # !
            if lt + 3 < n and d[lt + 2] == 45 and d[lt + 3] == 45:
                if lt + 4 < n and d[lt + 4] == 62:
                    pos = lt + 5
                elif lt + 5 < n and d[lt + 4] == 45 and d[lt + 5] == 62:
                    pos = lt + 6
                else:
                    pos = _comment_end(d, lt + 4, n)
            else:
                pos = _past(d, lt + 2, n)
        elif c == 63:  # ?
            pos = _past(d, lt + 2, n)
        else:
            pos = lt + 1
        if pos < 0:  # a comment, raw text or bogus comment that never ends
            return -1


def markup_cuts(object text, Py_ssize_t max_attributes, Py_ssize_t max_elements):
    """``markup.markup_cuts_python`` compiled: (attribute spans to remove, cut, attributes).

    ``text`` may also be UTF-8 ``bytes``: every decision of the scan is on ASCII code units,
    and a character of UTF-8 is either one ASCII byte or bytes >= 0x80 that are, as the
    character itself is, none of them; so the scan cuts the same places, in byte offsets.
    """
    cdef list spans = []
    cdef Py_ssize_t dropped = 0, end
    if type(text) is bytes:
        end = _scan(<const ucs1_t*>PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text),
                    max_attributes, max_elements, spans, &dropped)
        return spans, end, dropped
    if type(text) is not str:
        raise TypeError(f"markup_cuts reads str or bytes, not {type(text).__name__}")
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text)
    if kind == 1:
        end = _scan(<const ucs1_t*>data, n, max_attributes, max_elements, spans, &dropped)
    elif kind == 2:
        end = _scan(<const ucs2_t*>data, n, max_attributes, max_elements, spans, &dropped)
    else:
        end = _scan(<const ucs4_t*>data, n, max_attributes, max_elements, spans, &dropped)
    return spans, end, dropped


# ---- UTF-8 validity without decoding ----------------------------------------------------------

# Well-formed UTF-8 (the Unicode standard's table 3-7, as Python's strict decoder reads it): per
# lead byte, the sequence's length (0: not a lead byte) and the range of its second byte, which
# excludes overlong forms, the surrogates U+D800-U+DFFF and code points past U+10FFFF; the
# other bytes of a sequence are continuation bytes 0x80-0xBF.
cdef unsigned char _U8_LEN[256]
cdef unsigned char _U8_LO[256]
cdef unsigned char _U8_HI[256]
memset(_U8_LEN, 0, sizeof(_U8_LEN))
for _lead, _length, _lo, _hi in (
    [(b, 2, 0x80, 0xBF) for b in range(0xC2, 0xE0)]
    + [(0xE0, 3, 0xA0, 0xBF)] + [(b, 3, 0x80, 0xBF) for b in range(0xE1, 0xED)]
    + [(0xED, 3, 0x80, 0x9F), (0xEE, 3, 0x80, 0xBF), (0xEF, 3, 0x80, 0xBF)]
    + [(0xF0, 4, 0x90, 0xBF)] + [(b, 4, 0x80, 0xBF) for b in range(0xF1, 0xF4)]
    + [(0xF4, 4, 0x80, 0x8F)]
):
    _U8_LEN[_lead] = _length
    _U8_LO[_lead] = _lo
    _U8_HI[_lead] = _hi


def utf8_valid(bytes body):
    """``body.decode("utf-8")`` would succeed: well-formed UTF-8 as Python's strict decoder
    reads it (no overlong forms, no surrogates, nothing past U+10FFFF, no cut sequence), found
    without making the string (a page's ``str`` is two or four bytes a character as soon as it
    holds one character past Latin-1). ASCII runs are read eight bytes at a time."""
    cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(body)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(body)
    cdef bint ok
    with nogil:
        ok = _utf8_ok(s, n)
    return ok


cdef bint _utf8_ok(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i = 0, k, length
    cdef uint64_t word
    cdef unsigned char c
    while i < n:
        while i + 8 <= n:
            memcpy(&word, s + i, 8)
            if word & 0x8080808080808080ULL:
                break
            i += 8
        if i >= n:
            break
        c = s[i]
        if c < 0x80:
            i += 1
            continue
        length = _U8_LEN[c]
        if length == 0 or i + length > n or not (_U8_LO[c] <= s[i + 1] <= _U8_HI[c]):
            return False
        for k in range(2, length):
            if not (0x80 <= s[i + k] <= 0xBF):
                return False
        i += length
    return True



cdef str _EDGES = None  # the edge characters of the last call, as a bitmap of ASCII ones
cdef uint64_t _EDGE_BITS[2]


cdef inline bint _is_edge(Py_UCS4 c, str edges) except -1:
    cdef unsigned int code = <unsigned int>c
    if code < 128:
        return (_EDGE_BITS[code >> 6] >> (code & 63)) & 1
    return PyUnicode_FindChar(edges, c, 0, len(edges), 1) >= 0


def context_word_ids(str context, dict word_ids, str edges, frozenset stop, object salt,
                     object mask, Py_ssize_t limit, Py_ssize_t max_cache):
    """``linkfeatures.context_word_ids_python``, compiled: the hashed ids of the first ``limit``
    distinct words of a link context (``context.lower().split()``, each token stripped of
    ``edges``, kept when it has two characters or more, starts with a letter and is not in
    ``stop``), a word's id memoised in ``word_ids`` (cleared past ``max_cache``). The tokens
    are found on the lower-cased string itself: only a kept word becomes a string."""
    global _EDGES
    cdef Py_ssize_t i, n, start, end, k
    cdef unsigned int code
    cdef str low = context.lower()
    cdef int kind = PyUnicode_KIND(low)
    cdef const void* data = PyUnicode_DATA(low)
    cdef list out = []
    cdef set seen = set()
    cdef str w
    cdef object got
    if edges is not _EDGES:
        _EDGE_BITS[0] = 0
        _EDGE_BITS[1] = 0
        for k in range(len(edges)):
            code = <unsigned int>(<Py_UCS4>edges[k])
            if code < 128:
                _EDGE_BITS[code >> 6] |= (<uint64_t>1) << (code & 63)
        _EDGES = edges
    n = len(low)
    i = 0
    while i < n:
        while i < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
            i += 1
        start = i
        while i < n and not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
            i += 1
        end = i
        while start < end and _is_edge(PyUnicode_READ(kind, data, start), edges):
            start += 1
        while end > start and _is_edge(PyUnicode_READ(kind, data, end - 1), edges):
            end -= 1
        if end - start < 2 or not Py_UNICODE_ISALPHA(PyUnicode_READ(kind, data, start)):
            continue
        w = low[start:end]
        if w in stop or w in seen:
            continue
        got = word_ids.get(w)
        if got is None:
            if len(word_ids) >= max_cache:
                word_ids.clear()
            got = ((_crc32(w.encode()) ^ salt) * 2654435761 >> 7) & mask or 1
            word_ids[w] = got
        seen.add(w)
        out.append(got)
        if len(seen) >= limit:
            break
    return out
