/* The `tree` index of cpplan.planners.placer.Placer, and its placement loop, in C.
 *
 * cpplan/planners/occupancy.py cuts time into buckets and explains the tree: per pool, a segment
 * tree over the buckets whose nodes keep the merged byte runs of the placed pieces (`cover`: the
 * pieces covering the node's time range whole; `agg`: those with an end inside it), and per
 * bucket the pieces partial in it. Here the whole of a placement runs: the query (a few dozen
 * sorted run lists), their union (merged two by two, joining what overlaps), the choice among
 * the free regions between its runs (first-fit or best-fit, the rule of placer.choose), the
 * commit (the block's runs merged into the tree), for a stretch of an order at a time without
 * the GIL; the caller looks at the clock between stretches. The state arrays (which pool and
 * offset each block and piece took) belong to the Python placer and are written here in place.
 *
 * tests/planners/test_fit.py checks the placements against a reference that tries every
 * candidate region, and against the local search's decoder (the same rules, another way).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;

/* A growable array of int64: byte runs as flat lo, hi pairs, or any scratch. */
typedef struct {
    i64 *v;
    Py_ssize_t n, cap;
} Vec;

/* A byte run, or a forbidden interval of offsets. */
typedef struct {
    i64 lo, hi;
} Run;

/* A piece partial in a bucket: its moments [s, e) and bytes [x, y). */
typedef struct {
    i64 s, e, x, y;
} Part;

typedef struct {
    Part *v;
    Py_ssize_t n, cap;
} Parts;

/* One pool's tree: cover and agg per node (2 * size), the partial pieces per bucket. */
typedef struct {
    Vec *cover, *agg;
    Parts *part;
} Tree;

enum {
    B_OF, B_BSTART, B_PART_S, B_PART_E, B_NEED, B_PS, B_PE, B_PLO, B_PHI, B_PPTR, B_POOL_PTR,
    B_POOL_IDX, B_BALIGN, B_PALIGN, B_SIZE, B_FIXED, B_CAP, B_POOL_OF, B_OFFSET, B_PPOOL,
    B_PALO, B_PAHI, N_BUFFERS
};

typedef struct {
    PyObject_HEAD
    Py_buffer buf[N_BUFFERS];
    int nbuf;
    /* buckets (read only): bucket of each moment, bucket starts, the buckets where each piece
     * is partial (-1 none), the nodes some query reads */
    const i64 *of, *bstart, *part_s, *part_e;
    const uint8_t *need;
    i64 size, count, times;
    /* blocks (read only) */
    const i64 *ps, *pe, *plo, *phi, *pptr, *pool_ptr, *pool_idx, *balign, *palign, *bsize,
        *fixed, *cap;
    i64 n, npieces, npools;
    /* placement state (the placer's arrays, written here) */
    i64 *pool_of, *offset, *ppool, *palo, *pahi;
    Tree *trees; /* npools, each built on first use */
    int stale;   /* the state changed behind the trees' back: rebuild before the next use */
    Vec out, tmp; /* a query's runs (lo, hi pairs), the merges' room */
    Vec starts;   /* where each sorted list of a query's runs starts (in runs) */
    Vec pieces;   /* where each piece's union starts in `out` (a block of several pieces) */
} Occupancy;

/* ---- growable arrays ---- */

static int reserve(Vec *a, Py_ssize_t need) {
    if (need <= a->cap) return 0;
    Py_ssize_t cap = a->cap ? a->cap : 8;
    while (cap < need) cap *= 2;
    i64 *v = PyMem_RawRealloc(a->v, (size_t)cap * sizeof(i64));
    if (!v) return -1;
    a->v = v;
    a->cap = cap;
    return 0;
}

static int append(Vec *a, const i64 *src, Py_ssize_t n) {
    if (!n) return 0;
    if (reserve(a, a->n + n)) return -1;
    memcpy(a->v + a->n, src, (size_t)n * sizeof(i64));
    a->n += n;
    return 0;
}

static int append_part(Parts *a, Part p) {
    if (a->n == a->cap) {
        Py_ssize_t cap = a->cap ? 2 * a->cap : 4;
        Part *v = PyMem_RawRealloc(a->v, (size_t)cap * sizeof(Part));
        if (!v) return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = p;
    return 0;
}

static inline int bit_length(i64 x) { return x ? 64 - __builtin_clzll((unsigned long long)x) : 0; }

/* ---- merged runs ---- */

/* Union [x, y) into the runs `r` (lo0, hi0, lo1, hi1, ... strictly increasing: disjoint runs
 * that do not touch). 1 when [x, y) already lay inside a run (nothing changed), -1 when out of
 * memory, else 0. */
static int add_run(Vec *r, i64 x, i64 y) {
    Py_ssize_t n = r->n, lo = 0, hi = n;
    i64 *f = r->v;
    while (lo < hi) { /* i: the first position holding a value >= x */
        Py_ssize_t mid = (lo + hi) >> 1;
        if (f[mid] < x) lo = mid + 1; else hi = mid;
    }
    Py_ssize_t i = lo;
    if (i & 1) { /* lo_k < x <= hi_k */
        if (y <= f[i]) return 1;
        i--;
        x = f[i];
    } else if (i < n && f[i] == x && y <= f[i + 1]) {
        return 1;
    }
    lo = i;
    hi = n;
    while (lo < hi) { /* j: the first position holding a value > y */
        Py_ssize_t mid = (lo + hi) >> 1;
        if (f[mid] <= y) lo = mid + 1; else hi = mid;
    }
    Py_ssize_t j = lo;
    if (j & 1) { /* lo_k <= y < hi_k */
        y = f[j];
        j++;
    }
    if (i == j) { /* between two runs, touching neither */
        if (reserve(r, n + 2)) return -1;
        f = r->v;
        memmove(f + i + 2, f + i, (size_t)(n - i) * sizeof(i64));
        f[i] = x;
        f[i + 1] = y;
        r->n = n + 2;
        return 0;
    }
    f[i] = x; /* runs i/2 .. j/2 - 1 become one */
    f[i + 1] = y;
    if (j - i > 2) {
        memmove(f + i + 2, f + j, (size_t)(n - j) * sizeof(i64));
        r->n = n - (j - i - 2);
    }
    return 0;
}

/* ---- the tree ---- */

static Tree *tree_of(Occupancy *o, i64 pool) {
    Tree *t = &o->trees[pool];
    if (!t->cover) {
        t->cover = PyMem_RawCalloc((size_t)(2 * o->size), sizeof(Vec));
        t->agg = PyMem_RawCalloc((size_t)(2 * o->size), sizeof(Vec));
        t->part = PyMem_RawCalloc((size_t)(o->count ? o->count : 1), sizeof(Parts));
        if (!t->cover || !t->agg || !t->part) {
            PyMem_RawFree(t->cover);
            PyMem_RawFree(t->agg);
            PyMem_RawFree(t->part);
            t->cover = t->agg = NULL;
            t->part = NULL;
            return NULL;
        }
    }
    return t;
}

static void tree_clear(Occupancy *o, Tree *t) {
    if (!t->cover) return;
    for (i64 v = 0; v < 2 * o->size; v++) {
        PyMem_RawFree(t->cover[v].v);
        PyMem_RawFree(t->agg[v].v);
    }
    for (i64 c = 0; c < (o->count ? o->count : 1); c++) PyMem_RawFree(t->part[c].v);
    PyMem_RawFree(t->cover);
    PyMem_RawFree(t->agg);
    PyMem_RawFree(t->part);
    t->cover = t->agg = NULL;
    t->part = NULL;
}

/* Buckets of [s, e): first and last touched c0, c1 and the range [f0, f1) covered whole. */
static inline void span(const Occupancy *o, i64 s, i64 e, i64 *c0, i64 *c1, i64 *f0, i64 *f1) {
    *c0 = o->of[s];
    *c1 = o->of[e - 1];
    *f0 = o->bstart[*c0] == s ? *c0 : *c0 + 1;
    *f1 = o->bstart[*c1 + 1] == e ? *c1 + 1 : *c1;
}

/* Record bytes [x, y) taken during [s, e) by piece q (OccupancyTree.add of occupancy.py). */
static int tree_add(Occupancy *o, Tree *t, i64 q, i64 s, i64 e, i64 x, i64 y) {
    i64 c0, c1, f0, f1;
    span(o, s, e, &c0, &c1, &f0, &f1);
    i64 lo = f0 + o->size, hi = f1 + o->size;
    while (lo < hi) { /* the canonical nodes of [f0, f1) */
        if (lo & 1) {
            if (add_run(&t->cover[lo], x, y) < 0) return -1;
            lo++;
        }
        if (hi & 1) {
            hi--;
            if (add_run(&t->cover[hi], x, y) < 0) return -1;
        }
        lo >>= 1;
        hi >>= 1;
    }
    /* agg along the paths from both end buckets to the root (shared ancestors once, nodes in
     * need only); an agg holds the aggs below it, so once [x, y) lies inside one of its runs it
     * does all the way up */
    i64 a = c0 + o->size, c = c1 + o->size;
    const uint8_t *need = o->need;
    if (a != c) {
        i64 lca = a >> bit_length(a ^ c);
        for (i64 v = a; v != lca; v >>= 1) {
            if (!need[v]) continue;
            int r = add_run(&t->agg[v], x, y);
            if (r < 0) return -1;
            if (r) break;
        }
    }
    for (i64 v = c; v >= 1; v >>= 1) {
        if (!need[v]) continue;
        int r = add_run(&t->agg[v], x, y);
        if (r < 0) return -1;
        if (r) break;
    }
    Part p = {s, e, x, y};
    if (o->part_s[q] >= 0 && append_part(&t->part[o->part_s[q]], p)) return -1;
    if (o->part_e[q] >= 0 && append_part(&t->part[o->part_e[q]], p)) return -1;
    return 0;
}

/* Append list `src` (sorted runs) to `out`, its start to `starts` when it holds runs. */
static int append_list(Vec *out, Vec *starts, const Vec *src) {
    if (!src->n) return 0;
    i64 at = out->n / 2;
    return append(starts, &at, 1) || append(out, src->v, src->n);
}

/* Append to `out` the runs (lo, hi pairs) of every piece sharing a moment with [s, e): each
 * found, perhaps twice. They come as lists sorted by lo, the start of each (in runs) appended
 * to `starts`. */
static int tree_query(const Occupancy *o, const Tree *t, i64 s, i64 e, Vec *out, Vec *starts) {
    i64 c0, c1, f0, f1, left, right;
    span(o, s, e, &c0, &c1, &f0, &f1);
    const uint8_t *need = o->need;
    if (f0 < f1) {
        i64 lefts[64], rights[64];
        int nl = 0, nr = 0;
        i64 lo = f0 + o->size, hi = f1 + o->size;
        while (lo < hi) {
            if (lo & 1) lefts[nl++] = lo++;
            if (hi & 1) rights[nr++] = --hi;
            lo >>= 1;
            hi >>= 1;
        }
        /* the covers to read lie on the paths from the partial end buckets, or from the
         * outermost canonical nodes where an end bucket is whole */
        left = c0 < f0 ? c0 + o->size : (nl ? lefts[0] : rights[nr - 1]);
        right = c1 >= f1 ? c1 + o->size : (nr ? rights[0] : lefts[nl - 1]);
        for (int k = 0; k < nl + nr; k++) {
            i64 node = k < nl ? lefts[k] : rights[k - nl];
            if (append_list(out, starts, &t->agg[node])) return -1;
            if (node != left && node != right && append_list(out, starts, &t->cover[node]))
                return -1;
        }
    } else {
        left = c0 + o->size;
        right = c1 + o->size;
    }
    /* covers on both paths to the root, shared ancestors once */
    i64 a = left, b = right;
    int da = bit_length(a), db = bit_length(b);
    if (da < db) {
        i64 x = a; a = b; b = x;
        int d = da; da = db; db = d;
    }
    i64 up = a >> (da - db);
    i64 lca = up >> bit_length(up ^ b);
    for (i64 v = a; v != lca; v >>= 1)
        if (need[v] && append_list(out, starts, &t->cover[v])) return -1;
    for (i64 v = b; v >= 1; v >>= 1)
        if (need[v] && append_list(out, starts, &t->cover[v])) return -1;
    /* partial pieces of the end buckets that are not covered whole: one list, sorted here */
    Py_ssize_t first = out->n / 2;
    if (c0 < f0 || f0 >= f1) {
        const Parts *p = &t->part[c0];
        for (Py_ssize_t k = 0; k < p->n; k++)
            if (p->v[k].s < e && p->v[k].e > s) {
                i64 xy[2] = {p->v[k].x, p->v[k].y};
                if (append(out, xy, 2)) return -1;
            }
    }
    if (c1 != c0 && c1 >= f1) {
        const Parts *p = &t->part[c1];
        for (Py_ssize_t k = 0; k < p->n; k++)
            if (p->v[k].s < e && p->v[k].e > s) {
                i64 xy[2] = {p->v[k].x, p->v[k].y};
                if (append(out, xy, 2)) return -1;
            }
    }
    Py_ssize_t last = out->n / 2;
    if (last > first) {
        i64 at = first;
        if (append(starts, &at, 1)) return -1;
        Run *r = (Run *)out->v;
        for (Py_ssize_t k = first + 1; k < last; k++) {
            Run x = r[k];
            Py_ssize_t j = k;
            while (j > first && r[j - 1].lo > x.lo) {
                r[j] = r[j - 1];
                j--;
            }
            r[j] = x;
        }
    }
    return 0;
}

static int rebuild(Occupancy *o) {
    for (i64 p = 0; p < o->npools; p++) tree_clear(o, &o->trees[p]);
    o->stale = 0;
    for (i64 q = 0; q < o->npieces; q++) {
        i64 pool = o->ppool[q];
        if (pool < 0 || o->pahi[q] <= o->palo[q]) continue;
        Tree *t = tree_of(o, pool);
        if (!t || tree_add(o, t, q, o->ps[q], o->pe[q], o->palo[q], o->pahi[q])) {
            o->stale = 1;
            return -1;
        }
    }
    return 0;
}

/* ---- the choice ---- */

/* Merge the runs of src[i, ie) and src[j, je) (each sorted by lo) into dst from w on, as
 * disjoint runs (overlapping or touching ones joined); the new end of dst. */
static Py_ssize_t merge_union(const Run *src, Py_ssize_t i, Py_ssize_t ie, Py_ssize_t j,
                              Py_ssize_t je, Run *dst, Py_ssize_t w) {
    Py_ssize_t w0 = w;
    while (i < ie || j < je) {
        Run r = (j >= je || (i < ie && src[i].lo <= src[j].lo)) ? src[i++] : src[j++];
        if (w > w0 && r.lo <= dst[w - 1].hi) {
            if (r.hi > dst[w - 1].hi) dst[w - 1].hi = r.hi;
        } else {
            dst[w++] = r;
        }
    }
    return w;
}

/* The union of the k lists of runs a[st[m], st[m + 1]) (st[k] = n; each sorted by lo), as
 * disjoint runs sorted by lo in a[0, count): the count. Lists are merged two by two, level by
 * level, each merge joining what overlaps: a query's few hundred runs are a hundred or so once
 * joined, so the levels shrink as they go. tmp has room n; st is overwritten. */
static Py_ssize_t union_lists(Run *a, Py_ssize_t n, i64 *st, Py_ssize_t k, Run *tmp) {
    if (!k) return 0;
    Run *src = a, *dst = tmp;
    do {
        Py_ssize_t w = 0, nk = 0;
        for (Py_ssize_t m = 0; m < k; m += 2) {
            Py_ssize_t i = st[m], ie = st[m + 1], je = m + 1 < k ? st[m + 2] : ie;
            st[nk++] = w; /* (nk <= m: the starts still to read lie beyond) */
            w = merge_union(src, i, ie, ie, je, dst, w);
        }
        st[nk] = w;
        k = nk;
        n = w;
        Run *x = src;
        src = dst;
        dst = x;
    } while (k > 1);
    if (src != a) memcpy(a, src, (size_t)n * sizeof(Run));
    return n;
}

static inline i64 round_up(i64 x, i64 align) { return align > 1 ? (x + align - 1) / align * align : x; }

/* The offset in [0, top], a multiple of align, picked among the free regions left by the
 * intervals [r[k].lo - dlo, r[k].hi - dhi) (sorted by lo, n >= 1): placer.choose's rule. first:
 * the lowest. best: the lowest offset of the shortest region bounded above by an interval
 * (lengths before alignment, after clipping at top; ties to the lowest region), the open region
 * above all only when no bounded one fits. -1 when nothing fits. Region k lies between the
 * highest high of the intervals before k and the low of interval k: where it is not empty,
 * those are the k lowest highs, so the regions are placer.choose_shifted's (which sorts the lows
 * and the highs apart). */
static i64 choose_sorted(const Run *r, Py_ssize_t n, i64 top, i64 align, int first, i64 dlo,
                         i64 dhi) {
    i64 hi0 = r[0].lo - dlo - 1; /* region 0: [0, hi0] */
    if (hi0 > top) hi0 = top;
    if (first && hi0 >= 0) return 0;
    i64 best = hi0 >= 0 ? 0 : -1, best_len = hi0, reach = r[0].hi;
    for (Py_ssize_t k = 1; k < n; k++) {
        i64 lo = reach - dhi;
        if (lo < 0) lo = 0;
        if (lo > top) break; /* and so do all above it */
        if (r[k].hi > reach) reach = r[k].hi;
        i64 hi = r[k].lo - dlo - 1;
        if (hi > top) hi = top;
        i64 st = round_up(lo, align);
        if (st > hi) continue;
        if (first) return st;
        if (best < 0 || hi - lo < best_len) {
            best = st;
            best_len = hi - lo;
        }
    }
    if (best >= 0) return best;
    i64 st = reach - dhi;
    st = round_up(st < 0 ? 0 : st, align);
    return st <= top ? st : -1;
}

static i64 gcd(i64 a, i64 b) {
    while (b) { i64 r = a % b; a = b; b = r; }
    return a;
}

/* Forbidden offset intervals of block i in pool, as runs in o->out, sorted by lo and disjoint:
 * the block at offset `off` collides iff lo - dlo <= off < hi - dhi for one of them. For a
 * block of one piece, the union of the runs it meets (the caller shifts them by dlo and dhi,
 * which keeps a union a union: dlo >= dhi); for several pieces, the union of each piece's,
 * shifted by the piece's place in the block (dlo = dhi = 0; joining overlapping forbidden
 * intervals leaves the free regions as they were). Their count, or -1 when out of memory. */
static Py_ssize_t forbidden(Occupancy *o, i64 i, i64 pool, i64 *dlo, i64 *dhi) {
    *dlo = *dhi = 0;
    Tree *t = &o->trees[pool];
    i64 a = o->pptr[i], b = o->pptr[i + 1];
    o->out.n = o->pieces.n = 0;
    if (!t->cover) return 0; /* nothing placed there yet */
    for (i64 q = a; q < b; q++) {
        i64 lo = o->plo[q], hi = o->phi[q];
        if (hi <= lo) continue; /* a zero-size piece collides with nothing */
        Py_ssize_t base = o->out.n / 2;
        o->starts.n = 0;
        if (tree_query(o, t, o->ps[q], o->pe[q], &o->out, &o->starts)) return -1;
        Py_ssize_t m = o->out.n / 2 - base, k = o->starts.n;
        if (reserve(&o->tmp, 2 * m) || reserve(&o->starts, k + 1)) return -1;
        for (Py_ssize_t j = 0; j < k; j++) o->starts.v[j] -= base;
        o->starts.v[k] = m;
        Run *runs = (Run *)o->out.v + base;
        m = union_lists(runs, m, o->starts.v, k, (Run *)o->tmp.v);
        o->out.n = 2 * (base + m);
        if (b - a == 1) { /* one piece: the shifts are left to the caller */
            *dlo = hi - 1;
            *dhi = lo;
            break;
        }
        for (Py_ssize_t j = 0; j < m; j++) {
            runs[j].lo -= hi - 1;
            runs[j].hi -= lo;
        }
        i64 at = base;
        if (append(&o->pieces, &at, 1)) return -1;
    }
    Py_ssize_t n = o->out.n / 2, k = o->pieces.n;
    if (k > 1) {
        if (reserve(&o->tmp, 2 * n) || reserve(&o->pieces, k + 1)) return -1;
        o->pieces.v[k] = n;
        n = union_lists((Run *)o->out.v, n, o->pieces.v, k, (Run *)o->tmp.v);
        o->out.n = 2 * n;
    }
    return n;
}

static i64 alignment(const Occupancy *o, i64 i, i64 pool) {
    i64 a = o->balign[i], p = o->palign[pool];
    return a / gcd(a, p) * p;
}

/* Offset for block i in pool by first-fit or best-fit, -1 when none; -2 when out of memory. */
static i64 find_offset(Occupancy *o, i64 i, i64 pool, int first) {
    i64 top = o->cap[pool] - o->bsize[i];
    if (top < 0) return -1;
    i64 dlo, dhi;
    Py_ssize_t n = forbidden(o, i, pool, &dlo, &dhi);
    if (n < 0) return -2;
    if (n == 0) return 0;
    return choose_sorted((const Run *)o->out.v, n, top, alignment(o, i, pool), first, dlo, dhi);
}

/* Whether block i can sit at off in pool: 1, 0, or -1 when out of memory. */
static int fixed_fits(Occupancy *o, i64 i, i64 pool, i64 off) {
    if (off + o->bsize[i] > o->cap[pool]) return 0;
    i64 dlo, dhi;
    Py_ssize_t n = forbidden(o, i, pool, &dlo, &dhi);
    if (n < 0) return -1;
    const Run *runs = (const Run *)o->out.v;
    for (Py_ssize_t k = 0; k < n; k++)
        if (runs[k].lo - dlo <= off && off < runs[k].hi - dhi) return 0;
    return 1;
}

static int commit(Occupancy *o, i64 i, i64 pool, i64 off) {
    o->pool_of[i] = pool;
    o->offset[i] = off;
    Tree *t = NULL;
    for (i64 q = o->pptr[i]; q < o->pptr[i + 1]; q++) {
        i64 lo = o->plo[q] + off, hi = o->phi[q] + off;
        o->ppool[q] = pool;
        o->palo[q] = lo;
        o->pahi[q] = hi;
        if (hi <= lo) continue;
        if (!t && !(t = tree_of(o, pool))) return -1;
        if (tree_add(o, t, q, o->ps[q], o->pe[q], lo, hi)) return -1;
    }
    return 0;
}

/* Place block i in its first candidate pool where it fits: 1, 0 when none, -1 out of memory. */
static int place_one(Occupancy *o, i64 i, int first) {
    i64 fixed = o->fixed[i];
    for (i64 k = o->pool_ptr[i]; k < o->pool_ptr[i + 1]; k++) {
        i64 pool = o->pool_idx[k];
        if (fixed >= 0) {
            int fits = fixed_fits(o, i, pool, fixed);
            if (fits < 0) return -1;
            if (!fits) continue;
            return commit(o, i, pool, fixed) ? -1 : 1;
        }
        i64 off = find_offset(o, i, pool, first);
        if (off == -2) return -1;
        if (off >= 0) return commit(o, i, pool, off) ? -1 : 1;
    }
    return 0;
}

/* ---- the Python type ---- */

static int fresh(Occupancy *o) {
    if (o->stale && rebuild(o)) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static int check_block(Occupancy *o, long long i) {
    if (i < 0 || i >= o->n) {
        PyErr_Format(PyExc_IndexError, "block %lld out of range", i);
        return -1;
    }
    return 0;
}

static int check_pool(Occupancy *o, long long p) {
    if (p < 0 || p >= o->npools) {
        PyErr_Format(PyExc_IndexError, "pool %lld out of range", p);
        return -1;
    }
    return 0;
}

static PyObject *Occupancy_place(Occupancy *o, PyObject *args) {
    Py_buffer order;
    Py_ssize_t pos, stop;
    int first;
    if (!PyArg_ParseTuple(args, "y*nnp", &order, &pos, &stop, &first)) return NULL;
    const i64 *ord = order.buf;
    Py_ssize_t len = order.len / 8;
    if (order.len % 8 || pos < 0 || stop > len || pos > stop) {
        PyBuffer_Release(&order);
        PyErr_SetString(PyExc_ValueError, "place: the order is not int64, or the range is out");
        return NULL;
    }
    for (Py_ssize_t k = pos; k < stop; k++)
        if (ord[k] < 0 || ord[k] >= o->n) {
            PyBuffer_Release(&order);
            PyErr_Format(PyExc_IndexError, "block %lld out of range", (long long)ord[k]);
            return NULL;
        }
    if (fresh(o)) {
        PyBuffer_Release(&order);
        return NULL;
    }
    Py_ssize_t k = pos;
    int got = 1;
    Py_BEGIN_ALLOW_THREADS
    for (; k < stop; k++) {
        if (o->pool_of[ord[k]] >= 0) continue;
        got = place_one(o, ord[k], first);
        if (got <= 0) break;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&order);
    if (got < 0) {
        o->stale = 1; /* a commit may have stopped half way */
        return PyErr_NoMemory();
    }
    return PyLong_FromSsize_t(k);
}

static PyObject *Occupancy_place_one(Occupancy *o, PyObject *args) {
    long long i;
    int first;
    if (!PyArg_ParseTuple(args, "Lp", &i, &first) || check_block(o, i) || fresh(o)) return NULL;
    int got = place_one(o, i, first);
    if (got < 0) {
        o->stale = 1;
        return PyErr_NoMemory();
    }
    return PyBool_FromLong(got);
}

static PyObject *Occupancy_find_offset(Occupancy *o, PyObject *args) {
    long long i, pool;
    int first;
    if (!PyArg_ParseTuple(args, "LLp", &i, &pool, &first) || check_block(o, i) ||
        check_pool(o, pool) || fresh(o))
        return NULL;
    i64 off = find_offset(o, i, pool, first);
    if (off == -2) return PyErr_NoMemory();
    return PyLong_FromLongLong(off);
}

static PyObject *Occupancy_fixed_fits(Occupancy *o, PyObject *args) {
    long long i, pool, off;
    if (!PyArg_ParseTuple(args, "LLL", &i, &pool, &off) || check_block(o, i) ||
        check_pool(o, pool) || fresh(o))
        return NULL;
    int fits = fixed_fits(o, i, pool, off);
    if (fits < 0) return PyErr_NoMemory();
    return PyBool_FromLong(fits);
}

static PyObject *Occupancy_put(Occupancy *o, PyObject *args) {
    long long i, pool, off;
    if (!PyArg_ParseTuple(args, "LLL", &i, &pool, &off) || check_block(o, i) ||
        check_pool(o, pool) || fresh(o))
        return NULL;
    if (commit(o, i, pool, off)) {
        o->stale = 1;
        return PyErr_NoMemory();
    }
    Py_RETURN_NONE;
}

static PyObject *Occupancy_occupied(Occupancy *o, PyObject *args) {
    long long pool, s, e;
    if (!PyArg_ParseTuple(args, "LLL", &pool, &s, &e) || check_pool(o, pool) || fresh(o))
        return NULL;
    if (s < 0 || e > o->times || s >= e) {
        PyErr_Format(PyExc_ValueError, "occupied: moments [%lld, %lld) out of range", s, e);
        return NULL;
    }
    o->out.n = 0;
    o->starts.n = 0;
    if (o->trees[pool].cover && tree_query(o, &o->trees[pool], s, e, &o->out, &o->starts))
        return PyErr_NoMemory();
    return PyBytes_FromStringAndSize((const char *)o->out.v, o->out.n * (Py_ssize_t)sizeof(i64));
}

static PyObject *Occupancy_invalidate(Occupancy *o, PyObject *noargs) {
    (void)noargs;
    o->stale = 1;
    Py_RETURN_NONE;
}

static void Occupancy_dealloc(Occupancy *o) {
    if (o->trees) {
        for (i64 p = 0; p < o->npools; p++) tree_clear(o, &o->trees[p]);
        PyMem_RawFree(o->trees);
    }
    PyMem_RawFree(o->out.v);
    PyMem_RawFree(o->starts.v);
    PyMem_RawFree(o->pieces.v);
    PyMem_RawFree(o->tmp.v);
    for (int k = 0; k < o->nbuf; k++) PyBuffer_Release(&o->buf[k]);
    Py_TYPE(o)->tp_free((PyObject *)o);
}

static PyObject *Occupancy_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    (void)kwds;
    Occupancy *o = (Occupancy *)type->tp_alloc(type, 0);
    if (!o) return NULL;
    Py_buffer *b = o->buf;
    long long size;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*Ly*y*y*y*y*y*y*y*y*y*y*y*w*w*w*w*w*",
                          &b[B_OF], &b[B_BSTART], &b[B_PART_S], &b[B_PART_E], &b[B_NEED], &size,
                          &b[B_PS], &b[B_PE], &b[B_PLO], &b[B_PHI], &b[B_PPTR], &b[B_POOL_PTR],
                          &b[B_POOL_IDX], &b[B_BALIGN], &b[B_PALIGN], &b[B_SIZE], &b[B_FIXED],
                          &b[B_CAP], &b[B_POOL_OF], &b[B_OFFSET], &b[B_PPOOL], &b[B_PALO],
                          &b[B_PAHI])) {
        Py_DECREF(o);
        return NULL;
    }
    o->nbuf = N_BUFFERS;
    int bad = 0;
    for (int k = 0; k < N_BUFFERS; k++)
        if (k != B_NEED && b[k].len % 8) bad = 1;
    o->times = b[B_OF].len / 8;
    o->count = b[B_BSTART].len / 8 - 1;
    o->size = size;
    o->npieces = b[B_PS].len / 8;
    o->n = b[B_SIZE].len / 8;
    o->npools = b[B_CAP].len / 8;
    if (bad || o->count < 0 || b[B_NEED].len != 2 * size || size < o->count ||
        b[B_PART_S].len / 8 != o->npieces || b[B_PART_E].len / 8 != o->npieces ||
        b[B_PE].len / 8 != o->npieces || b[B_PLO].len / 8 != o->npieces ||
        b[B_PHI].len / 8 != o->npieces || b[B_PPTR].len / 8 != o->n + 1 ||
        b[B_POOL_PTR].len / 8 != o->n + 1 || b[B_BALIGN].len / 8 != o->n ||
        b[B_PALIGN].len / 8 != o->npools || b[B_FIXED].len / 8 != o->n ||
        b[B_POOL_OF].len / 8 != o->n || b[B_OFFSET].len / 8 != o->n ||
        b[B_PPOOL].len / 8 != o->npieces || b[B_PALO].len / 8 != o->npieces ||
        b[B_PAHI].len / 8 != o->npieces) {
        Py_DECREF(o);
        PyErr_SetString(PyExc_ValueError, "Occupancy: arrays of the wrong type or length");
        return NULL;
    }
    o->of = b[B_OF].buf; o->bstart = b[B_BSTART].buf; o->part_s = b[B_PART_S].buf;
    o->part_e = b[B_PART_E].buf; o->need = b[B_NEED].buf;
    o->ps = b[B_PS].buf; o->pe = b[B_PE].buf; o->plo = b[B_PLO].buf; o->phi = b[B_PHI].buf;
    o->pptr = b[B_PPTR].buf; o->pool_ptr = b[B_POOL_PTR].buf; o->pool_idx = b[B_POOL_IDX].buf;
    o->balign = b[B_BALIGN].buf; o->palign = b[B_PALIGN].buf; o->bsize = b[B_SIZE].buf;
    o->fixed = b[B_FIXED].buf; o->cap = b[B_CAP].buf;
    o->pool_of = b[B_POOL_OF].buf; o->offset = b[B_OFFSET].buf; o->ppool = b[B_PPOOL].buf;
    o->palo = b[B_PALO].buf; o->pahi = b[B_PAHI].buf;
    i64 npool_idx = b[B_POOL_IDX].len / 8;
    for (i64 k = 0; k < npool_idx; k++)
        if (o->pool_idx[k] < 0 || o->pool_idx[k] >= o->npools) bad = 1;
    for (i64 k = 0; k < o->npieces; k++)
        if (o->ps[k] < 0 || o->pe[k] > o->times || o->part_s[k] >= o->count ||
            o->part_e[k] >= o->count)
            bad = 1;
    for (i64 k = 0; k < o->n; k++)
        if (o->balign[k] < 1 || o->pool_ptr[k] > o->pool_ptr[k + 1] ||
            o->pool_ptr[k + 1] > npool_idx || o->pptr[k] > o->pptr[k + 1] ||
            o->pptr[k + 1] > o->npieces)
            bad = 1;
    for (i64 k = 0; k < o->npools; k++)
        if (o->palign[k] < 1) bad = 1;
    if (bad) {
        Py_DECREF(o);
        PyErr_SetString(PyExc_ValueError, "Occupancy: an index or an alignment out of range");
        return NULL;
    }
    o->trees = PyMem_RawCalloc((size_t)(o->npools ? o->npools : 1), sizeof(Tree));
    if (!o->trees) {
        Py_DECREF(o);
        return PyErr_NoMemory();
    }
    o->stale = 1; /* built from the state arrays on first use */
    return (PyObject *)o;
}

static PyMethodDef Occupancy_methods[] = {
    {"place", (PyCFunction)Occupancy_place, METH_VARARGS,
     "place(order, pos, stop, first) -> int: place the unplaced blocks of order[pos:stop] in "
     "turn; the position reached (stop, or the first block that fits in none of its pools)."},
    {"place_one", (PyCFunction)Occupancy_place_one, METH_VARARGS,
     "place_one(i, first) -> bool: place block i in its first candidate pool where it fits."},
    {"find_offset", (PyCFunction)Occupancy_find_offset, METH_VARARGS,
     "find_offset(i, pool, first) -> int: the offset for block i in pool, or -1."},
    {"fixed_fits", (PyCFunction)Occupancy_fixed_fits, METH_VARARGS,
     "fixed_fits(i, pool, off) -> bool: whether block i can sit at off in pool."},
    {"put", (PyCFunction)Occupancy_put, METH_VARARGS,
     "put(i, pool, off): record block i at off in pool, unchecked."},
    {"occupied", (PyCFunction)Occupancy_occupied, METH_VARARGS,
     "occupied(pool, s, e) -> bytes: int64 lo, hi pairs of the runs taken in [s, e)."},
    {"invalidate", (PyCFunction)Occupancy_invalidate, METH_NOARGS,
     "invalidate(): the state arrays changed; rebuild the trees from them before next use."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject OccupancyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cpplan.planners._occupancy.Occupancy",
    .tp_basicsize = sizeof(Occupancy),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Occupancy(of, bstart, part_s, part_e, need, size, piece_start, piece_end, "
              "piece_lo, piece_hi, piece_ptr, pool_ptr, pool_idx, block_align, pool_align, "
              "size, fixed, capacity, pool_of, offset, piece_pool, piece_lo_at, piece_hi_at): "
              "the tree index of a placer (see occupancy.py).",
    .tp_new = Occupancy_new,
    .tp_dealloc = (destructor)Occupancy_dealloc,
    .tp_methods = Occupancy_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_occupancy", "The tree index of cpplan.planners.placer, in C.", -1,
    NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__occupancy(void) {
    if (PyType_Ready(&OccupancyType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&OccupancyType);
    if (PyModule_AddObject(m, "Occupancy", (PyObject *)&OccupancyType) < 0) {
        Py_DECREF(&OccupancyType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
