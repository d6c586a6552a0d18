package budgets

/*
#include <stdint.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <stdio.h>

// The tree-sitter C API, as far as the flat walk needs it. The definitions
// live in github.com/smacker/go-tree-sitter's C objects, linked into every
// binary that imports budgets; the declarations are weak so that cgo's
// per-package probe link, which sees only this package, succeeds too.
typedef struct TSLanguage TSLanguage;
typedef struct TSParser TSParser;
typedef struct TSTree TSTree;
typedef uint16_t TSSymbol;
typedef uint16_t TSFieldId;
typedef struct TSNode { uint32_t context[4]; const void *id; const TSTree *tree; } TSNode;
typedef struct TSTreeCursor { const void *tree; const void *id; uint32_t context[3]; } TSTreeCursor;

#define MIAM_WEAK __attribute__((weak))
extern TSParser *ts_parser_new(void) MIAM_WEAK;
extern void ts_parser_delete(TSParser *) MIAM_WEAK;
extern bool ts_parser_set_language(TSParser *, const TSLanguage *) MIAM_WEAK;
extern void ts_parser_set_timeout_micros(TSParser *, uint64_t) MIAM_WEAK;
extern void ts_parser_reset(TSParser *) MIAM_WEAK;
extern TSTree *ts_parser_parse_string(TSParser *, const TSTree *, const char *, uint32_t) MIAM_WEAK;
extern void ts_tree_delete(TSTree *) MIAM_WEAK;
extern TSNode ts_tree_root_node(const TSTree *) MIAM_WEAK;
extern TSTreeCursor ts_tree_cursor_new(TSNode) MIAM_WEAK;
extern void ts_tree_cursor_delete(TSTreeCursor *) MIAM_WEAK;
extern TSNode ts_tree_cursor_current_node(const TSTreeCursor *) MIAM_WEAK;
extern TSFieldId ts_tree_cursor_current_field_id(const TSTreeCursor *) MIAM_WEAK;
extern bool ts_tree_cursor_goto_first_child(TSTreeCursor *) MIAM_WEAK;
extern bool ts_tree_cursor_goto_next_sibling(TSTreeCursor *) MIAM_WEAK;
extern bool ts_tree_cursor_goto_parent(TSTreeCursor *) MIAM_WEAK;
extern TSSymbol ts_node_symbol(TSNode) MIAM_WEAK;
extern uint32_t ts_node_start_byte(TSNode) MIAM_WEAK;
extern uint32_t ts_node_end_byte(TSNode) MIAM_WEAK;
extern bool ts_node_is_named(TSNode) MIAM_WEAK;
extern TSFieldId ts_language_field_id_for_name(const TSLanguage *, const char *, uint32_t) MIAM_WEAK;
extern void ts_set_allocator(void *(*)(size_t), void *(*)(size_t, size_t), void *(*)(void *, size_t), void (*)(void *)) MIAM_WEAK;
extern void *(*ts_current_malloc)(size_t) MIAM_WEAK;

// A parse makes thousands of small allocations and frees most of them
// before it ends. miam_flatten runs it in an arena of its own thread: size
// classes (16-byte steps to 1 KiB, then powers of two to 1 MiB) served from
// large chunks, freed blocks reused, all of it released at once when the
// flat list is made. libc's allocator did worse: glibc's a little, musl's
// much (it hands freed memory back to the kernel, so the parse faults the
// same pages in again). Outside miam_flatten (another thread, the Go
// binding's own parses) the allocator is libc's. Arena blocks never
// outlive the call: the tree and the parser are deleted in it.
#define MIAM_SMALL 64  // classes 1..64: 16 to 1024 bytes
#define MIAM_CLASSES (MIAM_SMALL + 10) // then 2 KiB .. 1 MiB
typedef struct miam_chunk { struct miam_chunk *next; size_t size; } miam_chunk;
typedef struct {
	char *cur, *end;
	miam_chunk *chunks;
	void *free[MIAM_CLASSES + 1];
} miam_arena;
static __thread miam_arena *miam_cur;

static size_t miam_class(size_t n) {
	if (n <= 16 * MIAM_SMALL) return n == 0 ? 1 : (n + 15) >> 4;
	if (n > ((size_t)1024 << (MIAM_CLASSES - MIAM_SMALL))) return MIAM_CLASSES + 1;
	size_t cls = MIAM_SMALL + 1;
	for (size_t size = 2048; size < n; size <<= 1) cls++;
	return cls; // > MIAM_CLASSES: too large for the arena
}

static size_t miam_class_size(size_t cls) {
	return cls <= MIAM_SMALL ? cls << 4 : (size_t)1024 << (cls - MIAM_SMALL);
}

// A block's 16-byte header holds its class.
static int miam_owned(miam_arena *a, void *p) {
	for (miam_chunk *c = a->chunks; c != NULL; c = c->next) {
		if ((char *)p > (char *)c && (char *)p < (char *)c + c->size) return 1;
	}
	return 0;
}

// miam_must aborts when an allocation of n bytes failed, as tree-sitter's
// own allocator does: tree-sitter never checks for NULL.
static void *miam_must(void *p, size_t n) {
	if (p == NULL && n > 0) {
		fprintf(stderr, "tree-sitter failed to allocate %zu bytes\n", n);
		abort();
	}
	return p;
}

static void *miam_libc(size_t n) { return miam_must(malloc(n), n); }

static void *miam_alloc(size_t n) {
	miam_arena *a = miam_cur;
	if (a == NULL) return miam_libc(n);
	size_t cls = miam_class(n);
	if (cls > MIAM_CLASSES) return miam_libc(n);
	void *f = a->free[cls];
	if (f != NULL) {
		a->free[cls] = *(void **)f;
		return f;
	}
	size_t need = 16 + miam_class_size(cls);
	if ((size_t)(a->end - a->cur) < need) {
		size_t size = a->chunks == NULL ? (256 << 10) : 2 * a->chunks->size;
		if (size > (16 << 20)) size = 16 << 20;
		if (size < need + 16) size = need + 16;
		miam_chunk *c = malloc(size);
		if (c == NULL) return miam_libc(n);
		c->next = a->chunks;
		c->size = size;
		a->chunks = c;
		a->cur = (char *)c + 16;
		a->end = (char *)c + size;
	}
	char *b = a->cur;
	a->cur += need;
	*(size_t *)b = cls;
	return b + 16;
}

static void miam_release(void *p) {
	miam_arena *a = miam_cur;
	if (p == NULL) return;
	if (a == NULL || !miam_owned(a, p)) {
		free(p);
		return;
	}
	size_t cls = *(size_t *)((char *)p - 16);
	*(void **)p = a->free[cls];
	a->free[cls] = p;
}

static void *miam_calloc(size_t n, size_t m) {
	if (m != 0 && n > SIZE_MAX / m) miam_must(NULL, SIZE_MAX); // overflow
	void *p = miam_alloc(n * m);
	memset(p, 0, n * m);
	return p;
}

static void *miam_realloc(void *p, size_t n) {
	miam_arena *a = miam_cur;
	if (p == NULL) return miam_alloc(n);
	if (a == NULL || !miam_owned(a, p)) return miam_must(realloc(p, n), n);
	size_t have = miam_class_size(*(size_t *)((char *)p - 16));
	if (n <= have) return p;
	void *q = miam_alloc(n);
	memcpy(q, p, have);
	miam_release(p);
	return q;
}

// miam_arena_installed reports whether tree-sitter allocates through the
// arena's functions (its ts_set_allocator was linked and called).
static int miam_arena_installed(void) {
	return &ts_current_malloc != NULL && ts_current_malloc == miam_alloc;
}

static void miam_arena_begin(miam_arena *a) {
	memset(a, 0, sizeof *a);
	// Once for the process; threads racing here all store the same
	// functions, which route to libc on a thread without an arena.
	if (ts_set_allocator && !miam_arena_installed()) {
		ts_set_allocator(miam_alloc, miam_calloc, miam_realloc, miam_release);
	}
	miam_cur = a;
}

static void miam_arena_end(miam_arena *a) {
	miam_cur = NULL;
	for (miam_chunk *c = a->chunks, *next; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
}

extern const TSLanguage *tree_sitter_python(void) MIAM_WEAK;
extern const TSLanguage *tree_sitter_go(void) MIAM_WEAK;
extern const TSLanguage *tree_sitter_javascript(void) MIAM_WEAK;
extern const TSLanguage *tree_sitter_typescript(void) MIAM_WEAK;
extern const TSLanguage *tree_sitter_tsx(void) MIAM_WEAK;
extern const TSLanguage *tree_sitter_rust(void) MIAM_WEAK;
extern const TSLanguage *tree_sitter_java(void) MIAM_WEAK;
extern const TSLanguage *tree_sitter_c(void) MIAM_WEAK;
extern const TSLanguage *tree_sitter_cpp(void) MIAM_WEAK;
extern const TSLanguage *tree_sitter_c_sharp(void) MIAM_WEAK;
extern const TSLanguage *tree_sitter_ruby(void) MIAM_WEAK;
extern const TSLanguage *tree_sitter_bash(void) MIAM_WEAK;

// Numbering shared with langID on the Go side.
static const TSLanguage *miam_language(int id) {
	switch (id) {
	case 1: return tree_sitter_python ? tree_sitter_python() : NULL;
	case 2: return tree_sitter_go ? tree_sitter_go() : NULL;
	case 3: return tree_sitter_javascript ? tree_sitter_javascript() : NULL;
	case 4: return tree_sitter_typescript ? tree_sitter_typescript() : NULL;
	case 5: return tree_sitter_tsx ? tree_sitter_tsx() : NULL;
	case 6: return tree_sitter_rust ? tree_sitter_rust() : NULL;
	case 7: return tree_sitter_java ? tree_sitter_java() : NULL;
	case 8: return tree_sitter_c ? tree_sitter_c() : NULL;
	case 9: return tree_sitter_cpp ? tree_sitter_cpp() : NULL;
	case 10: return tree_sitter_c_sharp ? tree_sitter_c_sharp() : NULL;
	case 11: return tree_sitter_ruby ? tree_sitter_ruby() : NULL;
	case 12: return tree_sitter_bash ? tree_sitter_bash() : NULL;
	}
	return NULL;
}

// One visible node, in pre-order; next is the index just past its subtree.
typedef struct {
	uint32_t start, end, next, depth;
	TSSymbol sym;
	TSFieldId field;
	uint8_t named;
} miam_node;

// miam_flatten parses src with a fresh parser and lists the tree's nodes in
// pre-order into *out (malloc'd; the caller frees it). It returns the node
// count, 0 when tree-sitter gave up, or -1 when out of memory.
static int64_t miam_flatten_in(int lang, const char *src, uint32_t len, uint64_t timeout, miam_node **out) {
	*out = NULL;
	// Weak symbols are NULL when the tree-sitter objects are not linked:
	// then every line counts as code (the caller's fallback), no crash.
	if (!ts_parser_new || !ts_tree_cursor_new || !ts_parser_parse_string) return 0;
	const TSLanguage *l = miam_language(lang);
	TSParser *p = ts_parser_new();
	if (l == NULL || p == NULL || !ts_parser_set_language(p, l)) {
		if (p != NULL) ts_parser_delete(p);
		return 0;
	}
	ts_parser_set_timeout_micros(p, timeout);
	TSTree *tree = ts_parser_parse_string(p, NULL, src, len);
	ts_parser_delete(p);
	if (tree == NULL) return 0;

	size_t cap = 1024, n = 0, scap = 64, sn = 0;
	miam_node *a = malloc(cap * sizeof *a);
	uint32_t *stack = malloc(scap * sizeof *stack); // open ancestors
	if (a == NULL || stack == NULL) goto oom;
	TSTreeCursor c = ts_tree_cursor_new(ts_tree_root_node(tree));
	for (;;) {
		if (n == cap) {
			miam_node *b = realloc(a, 2 * cap * sizeof *a);
			if (b == NULL) { ts_tree_cursor_delete(&c); goto oom; }
			a = b; cap *= 2;
		}
		TSNode node = ts_tree_cursor_current_node(&c);
		size_t i = n++;
		a[i].start = ts_node_start_byte(node);
		a[i].end = ts_node_end_byte(node);
		a[i].sym = ts_node_symbol(node);
		a[i].field = ts_tree_cursor_current_field_id(&c);
		a[i].named = ts_node_is_named(node);
		a[i].depth = (uint32_t)sn;
		if (ts_tree_cursor_goto_first_child(&c)) {
			if (sn == scap) {
				uint32_t *s = realloc(stack, 2 * scap * sizeof *stack);
				if (s == NULL) { ts_tree_cursor_delete(&c); goto oom; }
				stack = s; scap *= 2;
			}
			stack[sn++] = (uint32_t)i;
			continue;
		}
		a[i].next = (uint32_t)n;
		while (!ts_tree_cursor_goto_next_sibling(&c)) {
			if (sn == 0 || !ts_tree_cursor_goto_parent(&c)) {
				ts_tree_cursor_delete(&c);
				free(stack);
				ts_tree_delete(tree);
				*out = a;
				return (int64_t)n;
			}
			a[stack[--sn]].next = (uint32_t)n;
		}
	}
oom:
	free(a);
	free(stack);
	ts_tree_delete(tree);
	return -1;
}

static int64_t miam_flatten(int lang, const char *src, uint32_t len, uint64_t timeout, miam_node **out) {
	miam_arena a;
	miam_arena_begin(&a);
	int64_t n = miam_flatten_in(lang, src, len, timeout, out);
	miam_arena_end(&a);
	return n;
}

static TSFieldId miam_field(int lang, const char *name) {
	const TSLanguage *l = miam_language(lang);
	return l == NULL ? 0 : ts_language_field_id_for_name(l, name, (uint32_t)strlen(name));
}
*/
import "C"

import (
	"unsafe"
)

// flatNode is one visible node of a syntax tree, in pre-order: its subtree
// is the nodes from its index up to next. The line counter walks this list
// rather than the tree through the Go binding, which costs several cgo calls
// and an allocation per node: on the hook's hot path, that walk cost more
// than the parse itself.
type flatNode = C.miam_node

// langID numbers lang for miam_language; 0 is no grammar.
func langID(lang Lang) C.int {
	switch lang {
	case LangPython:
		return 1
	case LangGo:
		return 2
	case LangJavaScript:
		return 3
	case LangTypeScript:
		return 4
	case LangTSX:
		return 5
	case LangRust:
		return 6
	case LangJava:
		return 7
	case LangC:
		return 8
	case LangCPP:
		return 9
	case LangCSharp:
		return 10
	case LangRuby:
		return 11
	case LangBash:
		return 12
	}
	return 0
}

// flatTree is a parsed file as a flat node list in C memory; free releases
// it.
type flatTree struct {
	nodes []flatNode
	ptr   *C.miam_node
}

func (t *flatTree) free() {
	C.free(unsafe.Pointer(t.ptr))
	t.nodes, t.ptr = nil, nil
}

// flatten parses src in one cgo call. It returns nil when lang has no
// grammar, src is empty or too large, or tree-sitter gives up.
func flatten(lang Lang, src []byte) *flatTree {
	id := langID(lang)
	if id == 0 || len(src) == 0 || len(src) > maxParseBytes {
		return nil
	}
	var out *C.miam_node
	// src is only read during the call: no copy to C memory is needed.
	n := C.miam_flatten(id, (*C.char)(unsafe.Pointer(&src[0])), C.uint32_t(len(src)),
		C.uint64_t(parseTimeout.Microseconds()), &out)
	if n <= 0 {
		return nil
	}
	return &flatTree{nodes: unsafe.Slice(out, int(n)), ptr: out}
}

// arenaInstalled reports whether tree-sitter allocates through the parse
// arena (once a flat parse has run).
func arenaInstalled() bool { return C.miam_arena_installed() != 0 }

// fieldID is the grammar's number for a field name, 0 when it has none.
func fieldID(lang Lang, name string) uint16 {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return uint16(C.miam_field(langID(lang), cs))
}
