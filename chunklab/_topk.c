/*
 * chunklab._topk: top-k of a sparse product, one query row at a time.
 *
 * scores(i, j) = sum over the nonzeros (t, c) of query row i of c * W[t, j], where W is a
 * terms x chunks CSR matrix. For each query the sum is accumulated in a dense row (same order
 * of additions as scipy's csr_matmat, so the scores are bitwise equal), and the k best
 * chunks are kept in a sorted array, by score descending, then chunk index ascending. Chunks
 * whose score is exactly 0 (no shared term) are not ranked, like top_k(zero_invalid=True).
 * The row is read back either by scanning all chunks or, when a query touches few of many
 * chunks, through a list of the touched ones; each entry is reset to 0 as it is read.
 *
 * The pure-numpy path in chunklab.retrieval does the same (and is used when this module was
 * not built); tests check that both give identical rankings.
 *
 * Arrays arrive through the buffer protocol (no numpy headers needed to build):
 *   q_indptr int64[nq+1], q_indices int64[nnz_q], q_data float64[nnz_q],
 *   w_indptr int64[n_terms+1], w_indices int32[nnz_w], w_data float64[nnz_w],
 *   out_ids int64[nq*k] (written), out_scores float64[nq*k] (written).
 *
 * It also builds what the ranker reads, so that indexing a chunking is a few linear passes:
 *   csc_counts / csc_fill: the chunk x term count matrix in canonical CSC form straight from the
 *     corpus's token columns and each chunk's token range (plus a few extra tokens per chunk),
 *     duplicates summed as they are met (no sort: chunks are visited in order);
 *   bm25_weights: W = idf(t) * tf (k1 + 1) / (tf + K_d), the same operations in the same order
 *     as numpy's expression in chunklab.retrieval.bm25 (so the weights are bitwise equal);
 *   factorize: int64 keys to dense codes in order of first appearance (a hash table).
 * Every one has a numpy twin in chunklab.retrieval; tests check both give identical arrays.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

/* A compressed-sparse pointer `name` over n slices: starts at 0, ends at nnz, never decreases (an
   error set, -1, otherwise). */
static int check_indptr(const int64_t *indptr, Py_ssize_t n, Py_ssize_t nnz, const char *name) {
    if (indptr[0] != 0 || indptr[n] != nnz) {
        PyErr_SetString(PyExc_ValueError, "indptr does not match the number of nonzeros");
        return -1;
    }
    for (Py_ssize_t t = 0; t < n; t++) {
        if (indptr[t] > indptr[t + 1]) {
            PyErr_Format(PyExc_ValueError, "%s must not decrease", name);
            return -1;
        }
    }
    return 0;
}

/* a ranks before b: higher score, or equal score and lower index */
static inline int better(double sa, int32_t ia, double sb, int32_t ib) {
    return sa > sb || (sa == sb && ia < ib);
}

static int check_len(Py_buffer *b, Py_ssize_t n, Py_ssize_t itemsize, const char *name) {
    if (b->len != n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd bytes, got %zd", name, n * itemsize, b->len);
        return -1;
    }
    return 0;
}

/* The k best entries so far, best first, in (bs, bj)[0 .. *nh): offer (s, j). A query keeps few
   of many chunks, so most offers end at the first comparison, and the kept ones cost a binary
   search and a short move (cheaper than a heap's sifting, and already in order at the end). */
static inline void topk_offer(double *bs, int32_t *bj, Py_ssize_t *nh, Py_ssize_t k, double s, int32_t j) {
    const Py_ssize_t n = *nh;
    if (n == k && !better(s, j, bs[n - 1], bj[n - 1])) return;
    Py_ssize_t lo = 0, hi = n;  /* the first entry that (s, j) beats */
    while (lo < hi) {
        const Py_ssize_t mid = (lo + hi) >> 1;
        if (better(s, j, bs[mid], bj[mid])) hi = mid; else lo = mid + 1;
    }
    const Py_ssize_t last = n < k ? n : k - 1;  /* entries lo .. last-1 move down one place */
    memmove(bs + lo + 1, bs + lo, sizeof(double) * (last - lo));
    memmove(bj + lo + 1, bj + lo, sizeof(int32_t) * (last - lo));
    bs[lo] = s; bj[lo] = j;
    if (n < k) *nh = n + 1;
}

typedef struct {
    Py_ssize_t n_cols, k;
    const int64_t *q_indptr, *q_indices, *w_indptr;
    const double *q_data, *w_data;
    const int32_t *w_indices;
    int64_t *out_ids;
    double *out_scores;
} product;

/* acc[idx[r]] += c * w[r] for r in [r0, r1): a term's postings never repeat a chunk, so the
   additions are independent and may overlap in flight (restrict: acc does not alias idx or w). */
static inline void add_postings(double *restrict acc, const int32_t *restrict idx, const double *restrict w,
                                int64_t r0, int64_t r1, double c) {
    int64_t r = r0;
    for (; r + 4 <= r1; r += 4) {
        const int32_t j0 = idx[r], j1 = idx[r + 1], j2 = idx[r + 2], j3 = idx[r + 3];
        const double v0 = c * w[r], v1 = c * w[r + 1], v2 = c * w[r + 2], v3 = c * w[r + 3];
        acc[j0] += v0; acc[j1] += v1; acc[j2] += v2; acc[j3] += v3;
    }
    for (; r < r1; r++) acc[idx[r]] += c * w[r];
}

/* Query i: its scores summed in acc (n_cols, all zero on entry and on exit), its top k written. */
static void rank_one(const product *P, Py_ssize_t i, double *acc, int32_t *touched, unsigned char *seen,
                     double *bs, int32_t *bj) {
    const Py_ssize_t n_cols = P->n_cols, k = P->k;
    const int64_t *w_indptr = P->w_indptr;
    const int32_t *w_indices = P->w_indices;
    const double *w_data = P->w_data;
    Py_ssize_t nh = 0;
    int64_t adds = 0;
    for (int64_t p = P->q_indptr[i]; p < P->q_indptr[i + 1]; p++) {
        const int64_t t = P->q_indices[p];
        adds += w_indptr[t + 1] - w_indptr[t];
    }
    /* Few additions for many chunks: remember which chunks were touched. Otherwise scanning
       every chunk afterwards is cheaper than tracking them (no branch per addition). */
    const int full = adds * 2 >= n_cols;
    Py_ssize_t nt = 0;
    for (int64_t p = P->q_indptr[i]; p < P->q_indptr[i + 1]; p++) {
        const int64_t t = P->q_indices[p];
        const double c = P->q_data[p];
        const int64_t r1 = w_indptr[t + 1];
        if (full) {
            add_postings(acc, w_indices, w_data, w_indptr[t], r1, c);
        } else {
            for (int64_t r = w_indptr[t]; r < r1; r++) {
                const int32_t j = w_indices[r];
                if (!seen[j]) { seen[j] = 1; touched[nt++] = j; }
                acc[j] += c * w_data[r];
            }
        }
    }
    if (full) {
        /* Chunks in increasing order: once k are kept, a chunk enters only with a higher score
           than the last kept (an equal score loses to the lower index already kept). */
        double last = -INFINITY;
        for (Py_ssize_t j = 0; j < n_cols; j++) {
            const double s = acc[j];
            if ((s > last || nh < k) && s != 0.0 && !isnan(s)) {
                topk_offer(bs, bj, &nh, k, s, (int32_t)j);
                if (nh == k) last = bs[k - 1];
            }
        }
        memset(acc, 0, sizeof(double) * n_cols);
    } else {
        for (Py_ssize_t u = 0; u < nt; u++) {
            const int32_t j = touched[u];
            const double s = acc[j];
            seen[j] = 0;
            acc[j] = 0.0;
            if (s != 0.0 && !isnan(s)) topk_offer(bs, bj, &nh, k, s, j);
        }
    }
    int64_t *ids = P->out_ids + i * k;
    double *sc = P->out_scores + i * k;
    for (Py_ssize_t r = 0; r < nh; r++) { ids[r] = bj[r]; sc[r] = bs[r]; }
    for (Py_ssize_t r = nh; r < k; r++) { ids[r] = -1; sc[r] = NAN; }
}

static PyObject *topk_product(PyObject *self, PyObject *args) {
    Py_ssize_t nq, n_terms, n_cols, k;
    Py_buffer qp = {0}, qj = {0}, qx = {0}, wp = {0}, wj = {0}, wx = {0}, oi = {0}, os = {0};
    PyObject *result = NULL;
    double *acc = NULL, *bs = NULL;
    int32_t *touched = NULL, *bj = NULL;
    unsigned char *seen = NULL;
    if (!PyArg_ParseTuple(args, "nnnny*y*y*y*y*y*w*w*", &nq, &n_terms, &n_cols, &k,
                          &qp, &qj, &qx, &wp, &wj, &wx, &oi, &os))
        return NULL;
    if (nq < 0 || n_terms < 0 || n_cols < 0 || n_cols > INT32_MAX || k < 1) {
        PyErr_SetString(PyExc_ValueError, "bad sizes");
        goto done;
    }
    if (check_len(&qp, nq + 1, 8, "q_indptr") || check_len(&wp, n_terms + 1, 8, "w_indptr") ||
        check_len(&oi, nq * k, 8, "out_ids") || check_len(&os, nq * k, 8, "out_scores"))
        goto done;
    product P = {n_cols, k, qp.buf, qj.buf, wp.buf, qx.buf, wx.buf, wj.buf, oi.buf, os.buf};
    Py_ssize_t nnz_q = qj.len / 8, nnz_w = wj.len / 4;
    if (check_len(&qx, nnz_q, 8, "q_data") || check_len(&wx, nnz_w, 8, "w_data")) goto done;
    if (check_indptr(P.q_indptr, nq, nnz_q, "q_indptr") || check_indptr(P.w_indptr, n_terms, nnz_w, "w_indptr"))
        goto done;
    for (Py_ssize_t p = 0; p < nnz_q; p++) {
        if (P.q_indices[p] < 0 || P.q_indices[p] >= n_terms) {
            PyErr_SetString(PyExc_ValueError, "query term index out of range");
            goto done;
        }
    }
    for (Py_ssize_t p = 0; p < nnz_w; p++) {
        if (P.w_indices[p] < 0 || P.w_indices[p] >= n_cols) {
            PyErr_SetString(PyExc_ValueError, "chunk index out of range");
            goto done;
        }
    }
    acc = calloc(n_cols ? n_cols : 1, sizeof(double));  /* all zero between queries */
    touched = malloc(sizeof(int32_t) * (n_cols ? n_cols : 1));
    seen = calloc(n_cols ? n_cols : 1, 1);
    bs = malloc(sizeof(double) * k);
    bj = malloc(sizeof(int32_t) * k);
    if (!acc || !touched || !seen || !bs || !bj) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < nq; i++) rank_one(&P, i, acc, touched, seen, bs, bj);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    free(acc); free(touched); free(seen); free(bs); free(bj);
    PyBuffer_Release(&qp); PyBuffer_Release(&qj); PyBuffer_Release(&qx);
    PyBuffer_Release(&wp); PyBuffer_Release(&wj); PyBuffer_Release(&wx);
    PyBuffer_Release(&oi); PyBuffer_Release(&os);
    return result;
}

/* ------------------------------------------------------------------------------------------ */
/* Building the index                                                                         */
/* ------------------------------------------------------------------------------------------ */

/* The checks shared by csc_counts and csc_fill (token columns are checked as they are read);
   returns 0 or -1 with an exception set. */
static int check_rows(Py_ssize_t n_rows, Py_ssize_t n_terms, Py_ssize_t n_tok, const int64_t *lo,
                      const int64_t *hi, Py_ssize_t n_ex, const int64_t *ex_row, const int64_t *ex_col) {
    if (n_rows < 0 || n_rows > INT32_MAX || n_terms < 0 || n_terms > INT32_MAX || n_tok > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "bad sizes");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n_rows; i++) {
        if (lo[i] < 0 || hi[i] < lo[i] || hi[i] > n_tok) {
            PyErr_SetString(PyExc_ValueError, "token range out of bounds");
            return -1;
        }
    }
    for (Py_ssize_t e = 0; e < n_ex; e++) {
        if (ex_row[e] < 0 || ex_row[e] >= n_rows || (e && ex_row[e] < ex_row[e - 1]) ||
            ex_col[e] < 0 || ex_col[e] >= n_terms) {
            PyErr_SetString(PyExc_ValueError, "extra tokens must be sorted by row and in range");
            return -1;
        }
    }
    return 0;
}

/* Per term: the last chunk that held it, and a count (csc_counts) or the next free slot of its
   column (csc_fill). One 8-byte entry, so a token costs one cache line of term state. */
typedef struct { int32_t last; int32_t n; } term_state;

/* One pass over every chunk's tokens (its corpus range, then its extra tokens); a (chunk, term)
   pair met for the first time runs `first`, a repeat runs `again` (both see c and st = &ts[c]).
   A token column out of range sets bad and ends the pass. */
#define VISIT_ROWS(first, again)                                                              \
    do {                                                                                       \
        Py_ssize_t e = 0;                                                                      \
        for (Py_ssize_t i = 0; i < n_rows && !bad; i++) {                                      \
            int64_t len = hi[i] - lo[i];                                                       \
            for (int64_t p = lo[i]; p < hi[i]; p++) {                                          \
                const int32_t c = tok_col[p];                                                  \
                if ((uint32_t)c >= (uint32_t)n_terms) { bad = 1; break; }                      \
                term_state *st = ts + c;                                                       \
                if (st->last != (int32_t)i) { st->last = (int32_t)i; first; } else { again; }  \
            }                                                                                  \
            for (; e < n_ex && ex_row[e] == i; e++) {                                          \
                const int32_t c = (int32_t)ex_col[e];                                          \
                term_state *st = ts + c;                                                       \
                len++;                                                                         \
                if (st->last != (int32_t)i) { st->last = (int32_t)i; first; } else { again; }  \
            }                                                                                  \
            row_len[i] = len;                                                                  \
        }                                                                                      \
    } while (0)

#define ROW_ARGS "nny*y*y*y*y*w*"

static PyObject *csc_counts(PyObject *self, PyObject *args) {
    /* csc_counts(n_rows, n_terms, tok_col int32, lo int64, hi int64, ex_row int64, ex_col int64,
                  out_row_len int64[n_rows], out_df int64[n_terms]) -> nnz */
    Py_ssize_t n_rows, n_terms;
    Py_buffer tc = {0}, bl = {0}, bh = {0}, er = {0}, ec = {0}, ol = {0}, od = {0};
    PyObject *result = NULL;
    term_state *ts = NULL;
    if (!PyArg_ParseTuple(args, ROW_ARGS "w*", &n_rows, &n_terms, &tc, &bl, &bh, &er, &ec, &ol, &od))
        return NULL;
    Py_ssize_t n_tok = tc.len / 4, n_ex = er.len / 8;
    if (check_len(&bl, n_rows, 8, "lo") || check_len(&bh, n_rows, 8, "hi") || check_len(&ec, n_ex, 8, "ex_col") ||
        check_len(&ol, n_rows, 8, "out_row_len") || check_len(&od, n_terms, 8, "out_df"))
        goto done;
    const int32_t *tok_col = tc.buf;
    const int64_t *lo = bl.buf, *hi = bh.buf, *ex_row = er.buf, *ex_col = ec.buf;
    int64_t *row_len = ol.buf, *df = od.buf;
    if (check_rows(n_rows, n_terms, n_tok, lo, hi, n_ex, ex_row, ex_col)) goto done;
    ts = malloc(sizeof(term_state) * (n_terms ? n_terms : 1));
    if (!ts) { PyErr_NoMemory(); goto done; }
    int64_t nnz = 0;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t t = 0; t < n_terms; t++) { ts[t].last = -1; ts[t].n = 0; }
    VISIT_ROWS((st->n++, nnz++), (void)0);
    for (Py_ssize_t t = 0; t < n_terms; t++) df[t] = ts[t].n;
    Py_END_ALLOW_THREADS
    if (bad) { PyErr_SetString(PyExc_ValueError, "token column out of range"); goto done; }
    result = PyLong_FromLongLong(nnz);
done:
    free(ts);
    PyBuffer_Release(&tc); PyBuffer_Release(&bl); PyBuffer_Release(&bh); PyBuffer_Release(&er);
    PyBuffer_Release(&ec); PyBuffer_Release(&ol); PyBuffer_Release(&od);
    return result;
}

static PyObject *csc_fill(PyObject *self, PyObject *args) {
    /* csc_fill(n_rows, n_terms, tok_col, lo, hi, ex_row, ex_col, row_len int64[n_rows] (written),
                indptr int64[n_terms+1], out_indices int32[nnz], out_data float64[nnz]) */
    Py_ssize_t n_rows, n_terms;
    Py_buffer tc = {0}, bl = {0}, bh = {0}, er = {0}, ec = {0}, ol = {0}, ip = {0}, oi = {0}, ox = {0};
    PyObject *result = NULL;
    term_state *ts = NULL;
    if (!PyArg_ParseTuple(args, ROW_ARGS "y*w*w*", &n_rows, &n_terms, &tc, &bl, &bh, &er, &ec, &ol, &ip, &oi, &ox))
        return NULL;
    Py_ssize_t n_tok = tc.len / 4, n_ex = er.len / 8, nnz = oi.len / 4;
    if (check_len(&bl, n_rows, 8, "lo") || check_len(&bh, n_rows, 8, "hi") || check_len(&ec, n_ex, 8, "ex_col") ||
        check_len(&ol, n_rows, 8, "row_len") || check_len(&ip, n_terms + 1, 8, "indptr") ||
        check_len(&ox, nnz, 8, "out_data"))
        goto done;
    const int32_t *tok_col = tc.buf;
    const int64_t *lo = bl.buf, *hi = bh.buf, *ex_row = er.buf, *ex_col = ec.buf, *indptr = ip.buf;
    int64_t *row_len = ol.buf;
    int32_t *indices = oi.buf;
    double *data = ox.buf;
    if (check_rows(n_rows, n_terms, n_tok, lo, hi, n_ex, ex_row, ex_col)) goto done;
    if (nnz > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "indptr does not match the number of nonzeros");
        goto done;
    }
    if (check_indptr(indptr, n_terms, nnz, "indptr")) goto done;
    ts = malloc(sizeof(term_state) * (n_terms ? n_terms : 1));
    if (!ts) { PyErr_NoMemory(); goto done; }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t t = 0; t < n_terms; t++) { ts[t].last = -1; ts[t].n = (int32_t)indptr[t]; }
    /* st->n - 1 is the slot of the current chunk's entry once it is written; a column filled
       past its end means indptr was not made by csc_counts on the same rows */
#define FILL_FIRST                                                                              \
    if (st->n >= indptr[c + 1]) { bad = 2; break; }                                            \
    indices[st->n] = (int32_t)i; data[st->n] = 1.0; st->n++;
#define FILL_AGAIN data[st->n - 1] += 1.0;
    VISIT_ROWS(FILL_FIRST, FILL_AGAIN);
#undef FILL_FIRST
#undef FILL_AGAIN
    for (Py_ssize_t t = 0; t < n_terms && !bad; t++) if (ts[t].n != indptr[t + 1]) bad = 2;
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, bad == 1 ? "token column out of range"
                        : "indptr does not match these rows (use csc_counts on the same rows)");
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    free(ts);
    PyBuffer_Release(&tc); PyBuffer_Release(&bl); PyBuffer_Release(&bh); PyBuffer_Release(&er);
    PyBuffer_Release(&ec); PyBuffer_Release(&ol); PyBuffer_Release(&ip); PyBuffer_Release(&oi);
    PyBuffer_Release(&ox);
    return result;
}

static PyObject *bm25_weights(PyObject *self, PyObject *args) {
    /* bm25_weights(n_rows, n_terms, indptr int64[n_terms+1], indices int32[nnz], tf float64[nnz],
                    idf float64[n_terms], kd float64[n_rows], k1, out float64[nnz]);
       out may be tf itself (each entry is read before it is written). */
    Py_ssize_t n_rows, n_terms;
    double k1;
    Py_buffer ip = {0}, ij = {0}, tf = {0}, bi = {0}, bk = {0}, ow = {0};
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "nny*y*y*y*y*dw*", &n_rows, &n_terms, &ip, &ij, &tf, &bi, &bk, &k1, &ow))
        return NULL;
    Py_ssize_t nnz = ij.len / 4;
    if (n_rows < 0 || n_terms < 0 || check_len(&ip, n_terms + 1, 8, "indptr") ||
        check_len(&tf, nnz, 8, "tf") || check_len(&bi, n_terms, 8, "idf") || check_len(&bk, n_rows, 8, "kd") ||
        check_len(&ow, nnz, 8, "out"))
        goto done;
    const int64_t *indptr = ip.buf;
    const int32_t *indices = ij.buf;
    const double *x = tf.buf, *idf = bi.buf, *kd = bk.buf;
    double *w = ow.buf;
    if (check_indptr(indptr, n_terms, nnz, "indptr")) goto done;
    for (Py_ssize_t p = 0; p < nnz; p++) {
        if (indices[p] < 0 || indices[p] >= n_rows) {
            PyErr_SetString(PyExc_ValueError, "row index out of range");
            goto done;
        }
    }
    const double k1p = k1 + 1.0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t t = 0; t < n_terms; t++) {
        const double it = idf[t];
        for (int64_t p = indptr[t]; p < indptr[t + 1]; p++) {
            const double v = x[p];
            w[p] = it * ((v * k1p) / (v + kd[indices[p]]));
        }
    }
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&ip); PyBuffer_Release(&ij); PyBuffer_Release(&tf); PyBuffer_Release(&bi);
    PyBuffer_Release(&bk); PyBuffer_Release(&ow);
    return result;
}

static inline uint64_t mix64(uint64_t x) {  /* splitmix64's finaliser */
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static PyObject *factorize(PyObject *self, PyObject *args) {
    /* factorize(keys int64[n], out_codes int32[n]) -> bytes: the distinct keys (int64) in order of
       first appearance, with keys[i] == distinct[out_codes[i]]. */
    Py_buffer bk = {0}, oc = {0};
    PyObject *result = NULL;
    int64_t *slot_key = NULL, *uniq = NULL;
    int32_t *slot_code = NULL;
    if (!PyArg_ParseTuple(args, "y*w*", &bk, &oc)) return NULL;
    Py_ssize_t n = bk.len / 8;
    if (check_len(&oc, n, 4, "out_codes")) goto done;
    if (n > INT32_MAX) { PyErr_SetString(PyExc_ValueError, "too many keys"); goto done; }
    const int64_t *keys = bk.buf;
    int32_t *codes = oc.buf;
    size_t cap = 1024, mask = cap - 1;  /* the table is kept at most half full: uniq holds cap / 2 */
    slot_key = malloc(sizeof(int64_t) * cap);
    slot_code = malloc(sizeof(int32_t) * cap);
    uniq = malloc(sizeof(int64_t) * cap / 2);
    if (!slot_key || !slot_code || !uniq) { PyErr_NoMemory(); goto done; }
    memset(slot_code, 0xff, sizeof(int32_t) * cap);
    int32_t nu = 0;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        const int64_t key = keys[i];
        size_t h = mix64((uint64_t)key) & mask;
        while (slot_code[h] >= 0 && slot_key[h] != key) h = (h + 1) & mask;
        if (slot_code[h] >= 0) { codes[i] = slot_code[h]; continue; }
        slot_key[h] = key; slot_code[h] = nu; uniq[nu] = key; codes[i] = nu; nu++;
        if ((size_t)nu * 2 >= cap) {
            size_t ncap = cap * 2, nmask = ncap - 1;
            int64_t *nk = malloc(sizeof(int64_t) * ncap);
            int32_t *nc = malloc(sizeof(int32_t) * ncap);
            int64_t *nu_ = realloc(uniq, sizeof(int64_t) * ncap / 2);
            if (nu_) uniq = nu_;
            if (!nk || !nc || !nu_) { free(nk); free(nc); failed = 1; break; }
            memset(nc, 0xff, sizeof(int32_t) * ncap);
            for (size_t s = 0; s < cap; s++) {
                if (slot_code[s] < 0) continue;
                size_t g = mix64((uint64_t)slot_key[s]) & nmask;
                while (nc[g] >= 0) g = (g + 1) & nmask;
                nk[g] = slot_key[s]; nc[g] = slot_code[s];
            }
            free(slot_key); free(slot_code);
            slot_key = nk; slot_code = nc; cap = ncap; mask = nmask;
        }
    }
    Py_END_ALLOW_THREADS
    if (failed) { PyErr_NoMemory(); goto done; }
    result = PyBytes_FromStringAndSize((const char *)uniq, (Py_ssize_t)nu * 8);
done:
    free(slot_key); free(slot_code); free(uniq);
    PyBuffer_Release(&bk); PyBuffer_Release(&oc);
    return result;
}

static PyMethodDef methods[] = {
    {"topk_product", topk_product, METH_VARARGS,
     "topk_product(nq, n_terms, n_cols, k, q_indptr, q_indices, q_data, w_indptr, w_indices, w_data, "
     "out_ids, out_scores): top-k of each row of Q @ W (see the module comment)."},
    {"csc_counts", csc_counts, METH_VARARGS,
     "csc_counts(n_rows, n_terms, tok_col, lo, hi, ex_row, ex_col, out_row_len, out_df) -> nnz: "
     "distinct chunks per term and tokens per chunk."},
    {"csc_fill", csc_fill, METH_VARARGS,
     "csc_fill(n_rows, n_terms, tok_col, lo, hi, ex_row, ex_col, row_len, indptr, out_indices, out_data): "
     "the canonical CSC count matrix whose column sizes csc_counts gave."},
    {"bm25_weights", bm25_weights, METH_VARARGS,
     "bm25_weights(n_rows, n_terms, indptr, indices, tf, idf, kd, k1, out): BM25 weights of a CSC count matrix."},
    {"factorize", factorize, METH_VARARGS,
     "factorize(keys, out_codes) -> bytes: int64 keys to codes; the distinct keys in order of first appearance."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_topk", NULL, -1, methods};

PyMODINIT_FUNC PyInit__topk(void) { return PyModule_Create(&module); }
