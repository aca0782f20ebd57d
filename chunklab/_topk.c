/*
 * chunklab._topk: top-k of a sparse product, one query row at a time.
 *
 * scores(i, j) = sum over the nonzeros (t, c) of query row i of c * W[t, j], where W is a
 * terms x chunks CSR matrix. For each query the sum is accumulated in a dense row (same order
 * of additions as scipy's csr_matmat, so the scores are bitwise equal), and the k best
 * chunks are kept in a heap ordered by score descending, then chunk index ascending. Chunks
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
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* a ranks before b: higher score, or equal score and lower index */
static inline int better(double sa, int32_t ia, double sb, int32_t ib) {
    return sa > sb || (sa == sb && ia < ib);
}

/* heap[0] is the worst of the kept entries */
static void sift_down(double *hs, int32_t *hi, Py_ssize_t n, Py_ssize_t pos) {
    for (;;) {
        Py_ssize_t l = 2 * pos + 1, r = l + 1, worst = pos;
        if (l < n && better(hs[worst], hi[worst], hs[l], hi[l])) worst = l;
        if (r < n && better(hs[worst], hi[worst], hs[r], hi[r])) worst = r;
        if (worst == pos) return;
        double ts = hs[pos]; hs[pos] = hs[worst]; hs[worst] = ts;
        int32_t ti = hi[pos]; hi[pos] = hi[worst]; hi[worst] = ti;
        pos = worst;
    }
}

static void sift_up(double *hs, int32_t *hi, Py_ssize_t pos) {
    while (pos > 0) {
        Py_ssize_t parent = (pos - 1) / 2;
        if (!better(hs[parent], hi[parent], hs[pos], hi[pos])) return;
        double ts = hs[pos]; hs[pos] = hs[parent]; hs[parent] = ts;
        int32_t ti = hi[pos]; hi[pos] = hi[parent]; hi[parent] = ti;
        pos = parent;
    }
}

static int check_len(Py_buffer *b, Py_ssize_t n, Py_ssize_t itemsize, const char *name) {
    if (b->len != n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd bytes, got %zd", name, n * itemsize, b->len);
        return -1;
    }
    return 0;
}

static PyObject *topk_product(PyObject *self, PyObject *args) {
    Py_ssize_t nq, n_terms, n_cols, k;
    Py_buffer qp = {0}, qj = {0}, qx = {0}, wp = {0}, wj = {0}, wx = {0}, oi = {0}, os = {0};
    PyObject *result = NULL;
    double *acc = NULL, *hs = NULL;
    int32_t *touched = NULL, *hi = NULL;
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
    const int64_t *q_indptr = qp.buf, *w_indptr = wp.buf;
    const int64_t *q_indices = qj.buf;
    const double *q_data = qx.buf, *w_data = wx.buf;
    const int32_t *w_indices = wj.buf;
    int64_t *out_ids = oi.buf;
    double *out_scores = os.buf;
    Py_ssize_t nnz_q = qj.len / 8, nnz_w = wj.len / 4;
    if (check_len(&qx, nnz_q, 8, "q_data") || check_len(&wx, nnz_w, 8, "w_data")) goto done;
    if (q_indptr[0] != 0 || q_indptr[nq] != nnz_q || w_indptr[0] != 0 || w_indptr[n_terms] != nnz_w) {
        PyErr_SetString(PyExc_ValueError, "indptr does not match the number of nonzeros");
        goto done;
    }
    for (Py_ssize_t p = 0; p < nnz_q; p++) {
        if (q_indices[p] < 0 || q_indices[p] >= n_terms) {
            PyErr_SetString(PyExc_ValueError, "query term index out of range");
            goto done;
        }
    }
    for (Py_ssize_t p = 0; p < nnz_w; p++) {
        if (w_indices[p] < 0 || w_indices[p] >= n_cols) {
            PyErr_SetString(PyExc_ValueError, "chunk index out of range");
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < nq; i++) {
        if (q_indptr[i] > q_indptr[i + 1]) {
            PyErr_SetString(PyExc_ValueError, "q_indptr must not decrease");
            goto done;
        }
    }
    for (Py_ssize_t t = 0; t < n_terms; t++) {
        if (w_indptr[t] > w_indptr[t + 1]) {
            PyErr_SetString(PyExc_ValueError, "w_indptr must not decrease");
            goto done;
        }
    }
    acc = calloc(n_cols ? n_cols : 1, sizeof(double));  /* all zero between queries */
    touched = malloc(sizeof(int32_t) * (n_cols ? n_cols : 1));
    seen = calloc(n_cols ? n_cols : 1, 1);
    hs = malloc(sizeof(double) * k);
    hi = malloc(sizeof(int32_t) * k);
    if (!acc || !touched || !seen || !hs || !hi) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < nq; i++) {
        Py_ssize_t nh = 0;
        int64_t adds = 0;
        for (int64_t p = q_indptr[i]; p < q_indptr[i + 1]; p++) {
            const int64_t t = q_indices[p];
            adds += w_indptr[t + 1] - w_indptr[t];
        }
        /* Few additions for many chunks: remember which chunks were touched. Otherwise scanning
           every chunk afterwards is cheaper than tracking them (no branch per addition). */
        const int full = adds * 2 >= n_cols;
        Py_ssize_t nt = 0;
        for (int64_t p = q_indptr[i]; p < q_indptr[i + 1]; p++) {
            const int64_t t = q_indices[p];
            const double c = q_data[p];
            const int64_t r1 = w_indptr[t + 1];
            if (full) {
                for (int64_t r = w_indptr[t]; r < r1; r++) acc[w_indices[r]] += c * w_data[r];
            } else {
                for (int64_t r = w_indptr[t]; r < r1; r++) {
                    const int32_t j = w_indices[r];
                    if (!seen[j]) { seen[j] = 1; touched[nt++] = j; }
                    acc[j] += c * w_data[r];
                }
            }
        }
        Py_ssize_t lim = full ? n_cols : nt;
        for (Py_ssize_t u = 0; u < lim; u++) {
            const int32_t j = full ? (int32_t)u : touched[u];
            const double s = acc[j];
            if (!full) seen[j] = 0;
            if (s == 0.0) continue;
            acc[j] = 0.0;
            if (isnan(s)) continue;
            if (nh < k) {
                hs[nh] = s; hi[nh] = j;
                sift_up(hs, hi, nh);
                nh++;
            } else if (better(s, j, hs[0], hi[0])) {
                hs[0] = s; hi[0] = j;
                sift_down(hs, hi, nh, 0);
            }
        }
        int64_t *ids = out_ids + i * k;
        double *sc = out_scores + i * k;
        for (Py_ssize_t r = nh; r < k; r++) { ids[r] = -1; sc[r] = NAN; }
        for (Py_ssize_t r = nh - 1; r >= 0; r--) {
            ids[r] = hi[0]; sc[r] = hs[0];
            Py_ssize_t last = r;  /* heap size before the pop is r + 1 */
            hs[0] = hs[last]; hi[0] = hi[last];
            sift_down(hs, hi, last, 0);
        }
    }
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    free(acc); free(touched); free(seen); free(hs); free(hi);
    PyBuffer_Release(&qp); PyBuffer_Release(&qj); PyBuffer_Release(&qx);
    PyBuffer_Release(&wp); PyBuffer_Release(&wj); PyBuffer_Release(&wx);
    PyBuffer_Release(&oi); PyBuffer_Release(&os);
    return result;
}

static PyMethodDef methods[] = {
    {"topk_product", topk_product, METH_VARARGS,
     "topk_product(nq, n_terms, n_cols, k, q_indptr, q_indices, q_data, w_indptr, w_indices, w_data, "
     "out_ids, out_scores): top-k of each row of Q @ W (see the module comment)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_topk", NULL, -1, methods};

PyMODINIT_FUNC PyInit__topk(void) { return PyModule_Create(&module); }
