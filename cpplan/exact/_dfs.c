/* The compiled loop of cpplan.exact.dfs.fit: MiniMalloc's search, one node at a time.
 *
 * cpplan/exact/dfs.py prepares the arrays (neighbour lists, sections, preorder keys) and drives
 * the rounds; this file holds only the search, which runs without the GIL (beside CP-SAT's
 * threads). It is the recursion of MiniMalloc's SearchSolutions and DynamicallyDecompose
 * (google/minimalloc, src/solver.cc; written anew) as a loop over an explicit stack of frames,
 * so that
 *   - a call can stop after a number of nodes and the next call resume exactly where it
 *     stopped (the driver looks at the clock and the stop flags between calls);
 *   - its arrays can grow between calls (a call asks for room, GROW, before it changes
 *     anything), since nothing in it holds a pointer across calls;
 *   - its depth is not bounded by a thread's stack (a path places every block).
 *
 * Frames are rows of `frames`: a search frame is one node (its candidates, the block placed now
 * and how to undo it), a parts frame a dynamic decomposition (independent sub-problems searched
 * in turn, each with a fresh preorder). Everything a frame changed is undone when it returns,
 * whatever it returns: the offsets of the path that succeeds stay in `sol`.
 *
 * Section floors are kept as MiniMalloc keeps them (the least minimum offset of a section's
 * unplaced blocks, recomputed member by member), but only for the sections where a block that
 * rose sat at the floor (the others cannot have moved): the same floors, fewer sections.
 *
 * The layout of the registers and frame columns is mirrored in dfs.py (KERNEL_*).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { INFEASIBLE = 0, FEASIBLE = 1, LIMIT = 2, PAUSE = 3, GROW = 4, NO_MEMORY = 5 };
/* Registers: the round's nodes left, this call's nodes left, the stack's depth (-1 before the
 * root is built: a round's first call sets it to -1, with RET -1), the value a
 * frame returned to its parent (-1: none yet), the tops of the three stacks. */
enum { NODES, CHUNK, DEPTH, RET, NB_TOP, FL_TOP, MEM_TOP, REGISTERS };
/* Frame columns. Both kinds: KIND, MEMTOP (the mem stack's top before the frame's data).
 * Search: its blocks (MEM, M, in preorder) and sections [SA, SB), the last placement's offset
 * and position (LOFF, LPOS: canonical order), whether the node is open (OPEN), the bound on
 * its candidates' offsets (LIM), the last candidate tried (CV, CP: its minimum offset and
 * position) and the next ones in order, a batch of at most BATCH (row f of `cand`; BN of them,
 * the next BJ: a scan refills it with those after the last tried, so that a frame holds a batch,
 * not every candidate, and a node with thousands of candidates is not scanned for each), the
 * block placed now (C, -1 none) and the stack tops to undo it to (NBU, FLU),
 * whether it had no unplaced neighbour (HATLESS), whether its cuts were taken (CUTDEC). Parts:
 * the part boundaries (PPTS,
 * PNP parts), their blocks by part (PCNT, PBUF), the next part (PI) and the mem stack's top
 * above the parts' data (PEND). */
enum { KIND, MEMTOP, MEM, M, SA, SB, LOFF, LPOS, LIM, CV, OPEN, C, NBU, FLU, HATLESS, CUTDEC,
       CP, PPTS, PNP, PCNT, PBUF, PI, PEND, BN, BJ, FRAME };
enum { SEARCH_FRAME = 0, PARTS_FRAME = 1 };
#define KEY_T 4 /* the preorder key computed from the sections' current totals */
#define BATCH 32 /* the candidates a frame keeps in order (`cand`: BATCH a frame) */

typedef struct {
    /* the problem (read only) */
    const int64_t *size, *align, *fixed, *sec_lo, *sec_hi, *keys, *heur, *nbr_ptr, *fl_ptr,
        *maxmo;
    const int32_t *nbr_idx, *fl_mem;
    int64_t n, S, nheur, H;
    int any_fixed, unit_align;
    /* the state */
    uint8_t *placed;
    int64_t *mo, *eff, *total, *cut, *floor, *sol, *reg, *frames;
    int32_t *nb_idx, *fl_idx;
    void *nb_old, *fl_old;  /* int64, or int32 where every value fits (`wide` = 0) */
    int64_t *mem, *scratch;
    int32_t *cand;
    int64_t nframes, nnb, nfl, nmem, batch;
    int wide;
} State;

static inline int64_t old_get(const State *st, const void *a, int64_t i) {
    return st->wide ? ((const int64_t *)a)[i] : ((const int32_t *)a)[i];
}

static inline void old_set(const State *st, void *a, int64_t i, int64_t v) {
    if (st->wide) ((int64_t *)a)[i] = v; else ((int32_t *)a)[i] = (int32_t)v;
}

#define F(f, col) st->frames[(f) * FRAME + (col)]

/* ---- a stable merge sort of int64 items under a comparator (no qsort_r: not portable) ---- */

typedef int (*Before)(const void *ctx, int64_t a, int64_t b);

static void merge_sort(int64_t *a, int64_t *tmp, int64_t n, Before before, const void *ctx) {
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = before(ctx, a[j], a[i]) ? a[j++] : a[i++];
            while (i < mid) tmp[k++] = a[i++];
            while (j < hi) tmp[k++] = a[j++];
        }
        memcpy(a, tmp, (size_t)n * sizeof(int64_t));
    }
}

typedef struct { const int64_t *values; int64_t width; const int64_t *block; } KeyCtx;

/* Preorder: keys descending, most significant first, ties by block index. */
static int key_before(const void *ctx, int64_t a, int64_t b) {
    const KeyCtx *k = (const KeyCtx *)ctx;
    const int64_t *x = k->values + a * k->width, *y = k->values + b * k->width;
    for (int64_t t = 0; t < k->width; t++)
        if (x[t] != y[t]) return x[t] > y[t];
    return k->block[a] < k->block[b];
}

typedef struct { const int64_t *mo, *mem; int64_t base; } CandCtx;

/* Candidates (positions): by minimum offset, ties by position (the preorder). */
static int cand_before(const void *ctx, int64_t a, int64_t b) {
    const CandCtx *k = (const CandCtx *)ctx;
    int64_t x = k->mo[k->mem[k->base + a]], y = k->mo[k->mem[k->base + b]];
    return x != y ? x < y : a < b;
}

/* Writes blocks `in[0..m)` to `out` in the preorder. Returns 0 when out of memory. */
static int preorder(State *st, const int64_t *in, int64_t m, int64_t *out) {
    int64_t w = st->nheur;
    int64_t *values = malloc((size_t)(m * w + 1) * sizeof(int64_t));
    int64_t *pos = malloc((size_t)(m + 1) * sizeof(int64_t));
    int64_t *tmp = malloc((size_t)(m + 1) * sizeof(int64_t));
    if (!values || !pos || !tmp) {
        free(values); free(pos); free(tmp);
        return 0;
    }
    for (int64_t i = 0; i < m; i++) {
        int64_t b = in[i];
        pos[i] = i;
        for (int64_t t = 0; t < w; t++) {
            int64_t code = st->heur[t], v = 0;
            if (code == KEY_T) {
                for (int64_t s = st->sec_lo[b]; s < st->sec_hi[b]; s++)
                    if (st->total[s] > v) v = st->total[s];
            } else {
                v = st->keys[code * st->n + b];
            }
            values[i * w + t] = v;
        }
    }
    KeyCtx ctx = {values, w, in};
    merge_sort(pos, tmp, m, key_before, &ctx);
    for (int64_t i = 0; i < m; i++) tmp[i] = in[pos[i]];
    memcpy(out, tmp, (size_t)m * sizeof(int64_t));
    free(values); free(pos); free(tmp);
    return 1;
}

/* Takes back the placement of frame f's current block. */
static void undo(State *st, int64_t f) {
    int64_t *reg = st->reg;
    int64_t c = F(f, C);
    for (int64_t i = reg[FL_TOP] - 1; i >= F(f, FLU); i--)
        st->floor[st->fl_idx[i]] = old_get(st, st->fl_old, i);
    reg[FL_TOP] = F(f, FLU);
    for (int64_t i = reg[NB_TOP] - 1; i >= F(f, NBU); i--) {
        int64_t q = st->nb_idx[i];
        st->mo[q] = st->eff[q] = old_get(st, st->nb_old, i);
    }
    reg[NB_TOP] = F(f, NBU);
    int64_t lo = st->sec_lo[c], hi = st->sec_hi[c], sc = st->size[c];
    for (int64_t s = lo; s < hi; s++) st->total[s] += sc;
    if (F(f, CUTDEC)) {
        for (int64_t s = lo; s < hi - 1; s++) st->cut[s] += 1;
        F(f, CUTDEC) = 0;
    }
    st->placed[c] = 0;
    st->eff[c] = st->mo[c];
    F(f, C) = -1;
}

static void open_search(State *st, int64_t g, int64_t memtop, int64_t base, int64_t m,
                        int64_t sa, int64_t sb, int64_t loff, int64_t lpos) {
    F(g, KIND) = SEARCH_FRAME;
    F(g, MEMTOP) = memtop;
    F(g, MEM) = base;
    F(g, M) = m;
    F(g, SA) = sa;
    F(g, SB) = sb;
    F(g, LOFF) = loff;
    F(g, LPOS) = lpos;
    F(g, OPEN) = 0;
    F(g, C) = -1;
    F(g, CUTDEC) = 0;
}

static int64_t part_of(const int64_t *points, int64_t nparts, int64_t s) {
    /* the part whose sections [points[i], points[i + 1]) hold section s */
    int64_t lo = 0, hi = nparts;
    while (hi - lo > 1) {
        int64_t mid = (lo + hi) / 2;
        if (points[mid] <= s) lo = mid; else hi = mid;
    }
    return lo;
}

/* Pushes frame g: the parts of the unplaced blocks of mem[base..base+m), split at the section
 * boundaries mem[pts..pts+nparts] (no unplaced block spans one), each part's blocks in their
 * order in mem, after the boundaries and the parts' starts; the mem stack's top goes above. */
static void open_parts(State *st, int64_t g, int64_t base, int64_t m, int64_t pts,
                       int64_t nparts) {
    int64_t *mem = st->mem;
    int64_t cnt = pts + nparts + 1, buf = cnt + nparts + 1;
    for (int64_t t = cnt; t < buf; t++) mem[t] = 0;
    for (int64_t q = 0; q < m; q++) {
        int64_t b = mem[base + q];
        if (!st->placed[b]) mem[cnt + part_of(mem + pts, nparts, st->sec_lo[b]) + 1]++;
    }
    for (int64_t t = 0; t < nparts; t++) mem[cnt + t + 1] += mem[cnt + t];
    for (int64_t q = 0; q < m; q++) {
        int64_t b = mem[base + q];
        if (st->placed[b]) continue;
        int64_t part = part_of(mem + pts, nparts, st->sec_lo[b]);
        mem[buf + mem[cnt + part]++] = b;
    }
    /* (filling advanced each count to its part's end: shift them back) */
    for (int64_t t = nparts; t > 0; t--) mem[cnt + t] = mem[cnt + t - 1];
    mem[cnt] = 0;
    F(g, KIND) = PARTS_FRAME;
    F(g, MEMTOP) = pts;
    F(g, PPTS) = pts;
    F(g, PNP) = nparts;
    F(g, PCNT) = cnt;
    F(g, PBUF) = buf;
    F(g, PI) = 0;
    F(g, PEND) = buf + mem[cnt + nparts];
    st->reg[MEM_TOP] = F(g, PEND);
}

static int run(State *st) {
    int64_t *reg = st->reg, *mem = st->mem, *mo = st->mo, *eff = st->eff, *total = st->total;
    int64_t *floor_ = st->floor, *cut = st->cut;
    uint8_t *placed = st->placed;
    const int64_t H = st->H, S = st->S, n = st->n;
    for (;;) {
        int64_t d = reg[DEPTH];
        if (d < 0) {
            /* The root (a round begins with depth -1): every block, in the parts no block
             * spans between (boundaries where no block is live in both sections). */
            if (st->nmem < 2 * n + 2 * S + 4 || st->nframes < 1) return GROW;
            for (int64_t b = 0; b < n; b++) mem[b] = b;
            int64_t pts = n, nparts = 1;
            mem[pts] = 0;
            for (int64_t s = 0; s < S - 1; s++)
                if (cut[s] == 0) mem[pts + nparts++] = s + 1;
            mem[pts + nparts] = S;
            open_parts(st, 0, 0, n, pts, nparts);
            reg[DEPTH] = 1;
            reg[RET] = -1;
            continue;
        }
        if (d == 0) return reg[RET] == 1 ? FEASIBLE : INFEASIBLE;
        int64_t f = d - 1;
        int64_t ret = reg[RET];
        if (F(f, KIND) == PARTS_FRAME) {
            if (ret == 0) {  /* a part failed: the placement that made the parts fails */
                reg[MEM_TOP] = F(f, MEMTOP);
                reg[DEPTH] = f;
                continue;
            }
            if (st->nmem - F(f, PEND) < n + 1 || d + 1 > st->nframes) return GROW;
            reg[MEM_TOP] = F(f, PEND);  /* (drops the last part's preorder) */
            int64_t i = F(f, PI), cnt = F(f, PCNT);
            while (i < F(f, PNP) && mem[cnt + i + 1] == mem[cnt + i]) i++;
            if (i == F(f, PNP)) {
                reg[MEM_TOP] = F(f, MEMTOP);
                reg[DEPTH] = f;
                reg[RET] = 1;
                continue;
            }
            F(f, PI) = i + 1;
            int64_t lo_b = F(f, PBUF) + mem[cnt + i], m = mem[cnt + i + 1] - mem[cnt + i];
            int64_t top = reg[MEM_TOP];
            if (!preorder(st, mem + lo_b, m, mem + top)) return NO_MEMORY;
            reg[MEM_TOP] = top + m;
            open_search(st, d, top, top, m, mem[F(f, PPTS) + i], mem[F(f, PPTS) + i + 1], 0, -1);
            reg[DEPTH] = d + 1;
            reg[RET] = -1;
            continue;
        }

        /* A search frame. */
        int64_t base = F(f, MEM), m = F(f, M), sa = F(f, SA), sb = F(f, SB);
        if (!F(f, OPEN)) {
            /* Open the node: the bound on its candidates' offsets. */
            if (reg[CHUNK] <= 0) return PAUSE;
            reg[CHUNK] -= 1;
            reg[NODES] -= 1;
            if (reg[NODES] < 0) return LIMIT;
            /* Dominance: nothing at or above the top of an unplaced block at its minimum
             * offset; sections: the next offset plus any section's unplaced total within H;
             * an unplaced fixed block comes before anything placed above its offset. */
            int64_t lim = H + 1, unplaced = 0;
            for (int64_t s = sa; s < sb; s++)
                if (H - total[s] + 1 < lim) lim = H - total[s] + 1;
            for (int64_t p = 0; p < m; p++) {
                int64_t b = mem[base + p];
                if (placed[b]) continue;
                unplaced++;
                if (mo[b] + st->size[b] < lim) lim = mo[b] + st->size[b];
                if (st->any_fixed && st->fixed[b] >= 0 && st->fixed[b] + 1 < lim)
                    lim = st->fixed[b] + 1;
            }
            if (unplaced == 0) {
                reg[MEM_TOP] = F(f, MEMTOP);
                reg[DEPTH] = f;
                reg[RET] = 1;
                continue;
            }
            F(f, OPEN) = 1;
            F(f, LIM) = lim;
            F(f, CV) = -1;  /* (before every candidate: offsets are >= 0) */
            F(f, CP) = -1;
            F(f, BN) = 0;
            F(f, BJ) = 0;
        } else if (ret >= 0) {
            /* A child returned: take the placement back. */
            undo(st, f);
            if (ret == 1 || F(f, HATLESS)) {
                reg[MEM_TOP] = F(f, MEMTOP);
                reg[DEPTH] = f;
                continue;  /* (RET stays: the parent sees what the child answered) */
            }
        }
        reg[RET] = -1;
        int pushed = 0;
        const int64_t last_off = F(f, LOFF), last_pos = F(f, LPOS), lim = F(f, LIM);
        for (;;) {
            /* The next candidate: by (minimum offset, position), after the last tried, among
             * the unplaced blocks at or above the last placement (canonical order) and below
             * the bound. */
            int32_t *batch = st->cand + f * st->batch;
            if (F(f, BJ) >= F(f, BN)) {
                int64_t cv = F(f, CV), cp = F(f, CP), found = 0;
                for (int64_t q = 0; q < m; q++) {
                    int64_t b = mem[base + q], w = mo[b];
                    if (placed[b] || w < last_off || w >= lim || (w == last_off && q < last_pos))
                        continue;
                    if (w < cv || (w == cv && q <= cp)) continue;  /* (tried) */
                    st->scratch[found++] = q;
                }
                if (found == 0) break;
                CandCtx ctx = {mo, mem, base};
                merge_sort(st->scratch, st->scratch + found, found, cand_before, &ctx);
                if (found > st->batch) found = st->batch;
                for (int64_t i = 0; i < found; i++) batch[i] = (int32_t)st->scratch[i];
                F(f, BN) = found;
                F(f, BJ) = 0;
            }
            int64_t p = batch[F(f, BJ)], c = mem[base + p], v = mo[c];
            if (st->nfl - reg[FL_TOP] < S || st->nmem - reg[MEM_TOP] < m + 2 * S + 4 ||
                d + 1 > st->nframes || st->nnb - reg[NB_TOP] < st->nbr_ptr[c + 1] - st->nbr_ptr[c])
                return GROW;
            F(f, BJ) += 1;
            F(f, CV) = v;
            F(f, CP) = p;
            int64_t off = v;
            /* Place c at off: raise the minimum offsets of the unplaced blocks that share a
             * moment with it to its top (aligned), and take its size out of its sections. */
            F(f, C) = c;
            F(f, NBU) = reg[NB_TOP];
            F(f, FLU) = reg[FL_TOP];
            F(f, CUTDEC) = 0;
            placed[c] = 1;
            eff[c] = H;
            st->sol[c] = off;
            int64_t sc = st->size[c], top = off + sc, lo = st->sec_lo[c], hi = st->sec_hi[c];
            for (int64_t s = lo; s < hi; s++) total[s] -= sc;
            int64_t nb = reg[NB_TOP], nb0 = nb, unplaced = 0;
            int ok = 1;
            for (int64_t k = st->nbr_ptr[c]; k < st->nbr_ptr[c + 1]; k++) {
                int64_t q = st->nbr_idx[k];
                if (placed[q]) continue;
                unplaced++;
                int64_t a = st->align[q];
                int64_t raised = st->unit_align ? top : (top + a - 1) / a * a;
                if (raised > mo[q]) {
                    st->nb_idx[nb] = (int32_t)q;
                    old_set(st, st->nb_old, nb, mo[q]);
                    nb++;
                    mo[q] = raised;
                    eff[q] = raised;
                    /* above H, or a fixed block would have to move up */
                    if (raised > st->maxmo[q] || (st->any_fixed && st->fixed[q] >= 0)) ok = 0;
                }
            }
            reg[NB_TOP] = nb;
            F(f, HATLESS) = unplaced == 0;
            if (ok) {
                /* Floors that may have risen: sections where a block that rose sat at the
                 * floor. The unplaced blocks there must fit between the floor and H. */
                int64_t fl = reg[FL_TOP];
                for (int64_t i = nb0; i <= nb; i++) {
                    int64_t q = i < nb ? st->nb_idx[i] : c;
                    int64_t was = i < nb ? old_get(st, st->nb_old, i) : off;
                    for (int64_t s = st->sec_lo[q]; s < st->sec_hi[q]; s++) {
                        if (floor_[s] != was) continue;
                        st->fl_idx[fl] = (int32_t)s;
                        old_set(st, st->fl_old, fl, was);
                        fl++;
                        floor_[s] = -1;  /* (marked: recomputed below, once) */
                    }
                }
                for (int64_t i = reg[FL_TOP]; i < fl; i++) {
                    int64_t s = st->fl_idx[i], low = H;
                    for (int64_t k = st->fl_ptr[s]; k < st->fl_ptr[s + 1]; k++)
                        if (eff[st->fl_mem[k]] < low) low = eff[st->fl_mem[k]];
                    floor_[s] = low;
                    if (low + total[s] > H) ok = 0;
                }
                reg[FL_TOP] = fl;
            }
            if (ok) {
                /* Dynamic decomposition: boundaries no unplaced block spans any more split
                 * the rest into independent parts. */
                int64_t zeros = 0;
                if (hi - lo > 1) {
                    for (int64_t s = lo; s < hi - 1; s++)
                        if (--cut[s] == 0) zeros++;
                    F(f, CUTDEC) = 1;
                }
                if (zeros == 0) {
                    open_search(st, d, reg[MEM_TOP], base, m, sa, sb, off, p);
                } else {
                    int64_t nparts = zeros + 1, pts = reg[MEM_TOP], i = 1;
                    mem[pts] = sa;
                    for (int64_t s = lo; s < hi - 1; s++)
                        if (cut[s] == 0) mem[pts + i++] = s + 1;
                    mem[pts + nparts] = sb;
                    open_parts(st, d, base, m, pts, nparts);
                }
                reg[DEPTH] = d + 1;
                pushed = 1;
                break;
            }
            undo(st, f);
            if (F(f, HATLESS)) break;  /* its alternatives fail too */
        }
        if (!pushed) {
            reg[MEM_TOP] = F(f, MEMTOP);
            reg[DEPTH] = f;
            reg[RET] = 0;
        }
    }
}

/* ---- the Python binding: every array through the buffer protocol ---- */

#define N_ARRAYS 28

static PyObject *search(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer b[N_ARRAYS];
    long long H;
    int any_fixed, unit_align, wide;
    memset(b, 0, sizeof(b));
    /* size, align, fixed, sec_lo, sec_hi, keys, heur, nbr_ptr, nbr_idx, fl_ptr, fl_mem, H,
     * maxmo, any_fixed, unit_align, placed, mo, eff, total, cut, floor, sol, reg, frames,
     * nb_idx, nb_old, fl_idx, fl_old, mem, cand, scratch, wide */
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*y*Ly*ppw*w*w*w*w*w*w*w*w*w*w*w*w*w*w*w*p",
                          &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7], &b[8], &b[9],
                          &b[10], &H, &b[11], &any_fixed, &unit_align, &b[12], &b[13], &b[14],
                          &b[15], &b[16], &b[17], &b[18], &b[19], &b[20], &b[21], &b[22],
                          &b[23], &b[24], &b[25], &b[26], &b[27], &wide))
        return NULL;
    /* item sizes, in argument order (the old values' by `wide`) */
    const Py_ssize_t v = wide ? 8 : 4;
    const Py_ssize_t item[N_ARRAYS] = {8, 8, 8, 8, 8, 8, 8, 8, 4, 8, 4, 8, 1, 8, 8, 8, 8, 8, 8,
                                       8, 8, 4, v, 4, v, 8, 4, 8};
    State st;
    int bad = 0;
    for (int i = 0; i < N_ARRAYS; i++)
        if (b[i].len % item[i] != 0) bad = 1;
    st.n = b[0].len / 8;
    st.S = b[15].len / 8;
    st.nheur = b[6].len / 8;
    for (int i = 0; i < 5; i++)
        if (b[i].len / 8 != st.n) bad = 1;
    if (bad || b[12].len != st.n || b[13].len / 8 != st.n || b[14].len / 8 != st.n ||
        b[7].len / 8 != st.n + 1 || b[9].len / 8 != st.S + 1 || b[11].len / 8 != st.n ||
        b[18].len / 8 != st.n || b[17].len / 8 != st.S || b[16].len / 8 < st.S ||
        b[19].len / 8 != (Py_ssize_t)REGISTERS || b[20].len % (8 * FRAME) != 0 ||
        b[5].len / 8 != 5 * st.n || (!wide && H > INT32_MAX) || b[27].len / 8 < 2 * st.n ||
        b[26].len / 4 < BATCH * (b[20].len / (8 * FRAME))) {
        for (int i = 0; i < N_ARRAYS; i++) PyBuffer_Release(&b[i]);
        PyErr_SetString(PyExc_ValueError, "dfs kernel: arrays of the wrong type or length");
        return NULL;
    }
    st.size = b[0].buf; st.align = b[1].buf; st.fixed = b[2].buf; st.sec_lo = b[3].buf;
    st.sec_hi = b[4].buf; st.keys = b[5].buf; st.heur = b[6].buf; st.nbr_ptr = b[7].buf;
    st.nbr_idx = b[8].buf; st.fl_ptr = b[9].buf; st.fl_mem = b[10].buf; st.maxmo = b[11].buf;
    st.H = H; st.any_fixed = any_fixed; st.unit_align = unit_align; st.wide = wide;
    st.placed = b[12].buf; st.mo = b[13].buf; st.eff = b[14].buf; st.total = b[15].buf;
    st.cut = b[16].buf; st.floor = b[17].buf; st.sol = b[18].buf; st.reg = b[19].buf;
    st.frames = b[20].buf; st.nb_idx = b[21].buf; st.nb_old = b[22].buf; st.fl_idx = b[23].buf;
    st.fl_old = b[24].buf; st.mem = b[25].buf; st.cand = b[26].buf; st.scratch = b[27].buf;
    st.nframes = b[20].len / (8 * FRAME);
    st.nnb = b[21].len / 4 < b[22].len / v ? b[21].len / 4 : b[22].len / v;
    st.nfl = b[23].len / 4 < b[24].len / v ? b[23].len / 4 : b[24].len / v;
    st.nmem = b[25].len / 8;
    st.batch = BATCH;
    int code;
    Py_BEGIN_ALLOW_THREADS
    code = run(&st);
    Py_END_ALLOW_THREADS
    for (int i = 0; i < N_ARRAYS; i++) PyBuffer_Release(&b[i]);
    if (code == NO_MEMORY) return PyErr_NoMemory();
    return PyLong_FromLong(code);
}

static PyMethodDef methods[] = {
    {"search", search, METH_VARARGS,
     "search(...) -> int: run the search from the frames on the stack (see dfs.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_dfs", "The compiled loop of cpplan.exact.dfs.fit.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__dfs(void) { return PyModule_Create(&module); }
