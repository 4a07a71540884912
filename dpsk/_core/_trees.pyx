# Authors: The dpsk developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random decision trees: structure from uniforms, routing of rows to leaves, leaf counts, votes.

The trees are *complete* binary trees of a fixed depth ``h`` stored in heap order: node
``i`` has children ``2i + 1`` (left) and ``2i + 2`` (right); nodes ``0 .. 2**h - 2`` are
internal, nodes ``2**h - 1 .. 2**(h+1) - 2`` are the leaves. A forest of ``n_trees`` trees
is two arrays of shape ``(n_trees, 2**h - 1)``: ``feature`` (intp) and ``threshold``
(float64). A row goes left at node i when ``x[feature[i]] <= threshold[i]``, else right;
a NaN goes right. Leaf index ``k`` (``0 .. 2**h - 1``) is node ``2**h - 1 + k``.

These functions loop; they draw no random numbers (the caller passes uniforms drawn from
its Generator), validate no policy and calibrate nothing. Python decides, Cython loops.

``draw_structure(u_feature, u_threshold, lower, upper, depth) -> (feature, threshold)``
    Turns uniforms in [0, 1) (two float64 arrays of shape ``(n_trees, 2**depth - 1)``)
    into a forest, using only the public ``lower``/``upper`` bounds (float64, shape
    ``(n_features,)``). Along every root-to-leaf path the features are drawn without
    replacement (uniformly among the features not yet used on the path; once all are
    used, a new round starts), and each threshold uniformly inside the *cell* of the node
    for that feature: the bounds narrowed by the splits above it, so that re-using a
    feature refines it. A threshold that would send every value of the public range
    left (``t >= upper[f]``: a constant feature, or an empty cell at the top) is stored
    as ``+inf``. Every other threshold satisfies ``lower[f] <= t < upper[f]``, which
    makes the comparison of a raw value equal to that of the value clipped to the
    bounds: rows outside the bounds are routed exactly as if clipped (below ``lower``
    goes left, above ``upper`` goes right), with no copy of X.

``leaf_counts(X, y_index, n_classes, part, feature, threshold, depth, *, n_threads=None) -> counts``
    ``counts[t, k, c]`` (int64, shape ``(n_trees, 2**depth, n_classes)``): the number
    of rows of class ``c`` that tree ``t`` routes to leaf ``k``. ``part`` (intp, shape
    ``(n_samples,)``, values in ``[0, n_trees)``) sends each row to one tree only; with
    ``part=None`` every row goes through every tree. Each row adds exactly 1 to exactly
    one leaf of each tree it is sent to. ``y_index``: intp, values in ``[0, n_classes)``.

``apply_trees(X, feature, threshold, depth, *, part=None, n_threads=None) -> leaves``
    ``leaves[i, t]`` (intp, shape ``(n_samples, n_trees)``): the leaf index of row i in
    tree t. With ``part`` (as in ``leaf_counts``): ``leaves[i]`` (shape ``(n_samples,)``),
    the leaf index of row i in its own tree ``part[i]`` only (each row routed once), for
    per-leaf statistics other than class counts (``np.bincount`` with weights).

``tree_votes(X, feature, threshold, depth, values, *, n_threads=None) -> scores``
    ``scores[i, c] = Σ_t values[t, leaf_t(x_i), c]`` (float64, shape ``(n_samples,
    n_outputs)``) for ``values`` of shape ``(n_trees, 2**depth, n_outputs)`` (float64):
    routing and summation in one pass, with no ``(n_samples, n_trees)`` temporary.
    Trees are summed in index order for every row, so results do not depend on
    ``n_threads``.

Conventions: X is a C-contiguous float32 or float64 array of shape ``(n_samples,
n_features)`` (checked, never converted, never modified); NaN anywhere in a routed
feature raises ``ValueError("X contains NaN")`` after the loop. ``n_threads`` as in
``dpsk._core._common``: rows are cut into chunks that depend on ``n_samples`` alone, each
chunk is handled by one thread without the GIL, and integer counts are added in chunk
order: **results are identical for every n_threads**. Error messages name arguments
and shapes, never data values.
"""

from cython cimport floating
from libc.math cimport INFINITY, floor, nextafter

import numpy as np

from dpsk._core._common import _check_array, _map_chunks

__all__ = ["apply_trees", "draw_structure", "leaf_counts", "tree_votes"]

ctypedef Py_ssize_t intp_t

#: Deepest tree supported (2**depth leaves must be addressable and allocatable).
MAX_DEPTH = 30

# Rows routed together through one tree before moving to the next (tree arrays and the
# block of rows stay in cache).
cdef enum:
    _ROW_BLOCK_MAX = 64
cdef intp_t _ROW_BLOCK = _ROW_BLOCK_MAX


# ---------------------------------------------------------------------------------------
# Checks (with the GIL, before any loop)
# ---------------------------------------------------------------------------------------

def _check_depth(depth):
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or not 0 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be an int in [0, {MAX_DEPTH}], got {depth!r}")
    return int(depth)


def _check_forest(feature, threshold, depth, n_features):
    depth = _check_depth(depth)
    n_internal = (1 << depth) - 1
    if not (isinstance(feature, np.ndarray) and feature.dtype == np.intp and feature.ndim == 2
            and feature.flags.c_contiguous):
        raise TypeError("feature must be a C-contiguous 2-d intp array")
    if not (isinstance(threshold, np.ndarray) and threshold.dtype == np.float64 and threshold.ndim == 2
            and threshold.flags.c_contiguous):
        raise TypeError("threshold must be a C-contiguous 2-d float64 array")
    if feature.shape[1] != n_internal or threshold.shape != feature.shape:
        raise ValueError(
            f"feature and threshold must have shape (n_trees, {n_internal}) for depth {depth}, "
            f"got {feature.shape} and {threshold.shape}"
        )
    if feature.size and (feature.min() < 0 or feature.max() >= n_features):
        raise ValueError(f"feature holds indices outside [0, {n_features})")
    return depth


def _check_index(index, n, upper, name):
    if not (isinstance(index, np.ndarray) and index.dtype == np.intp and index.ndim == 1
            and index.flags.c_contiguous):
        raise TypeError(f"{name} must be a C-contiguous 1-d intp array")
    if index.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},), got {index.shape}")
    if n and (index.min() < 0 or index.max() >= upper):
        raise ValueError(f"{name} holds values outside [0, {upper})")
    return index


def _raise_nan():
    raise ValueError("X contains NaN")


# ---------------------------------------------------------------------------------------
# Structure
# ---------------------------------------------------------------------------------------

cdef struct _PathState:
    intp_t* perm        # features in path order: perm[0 .. used) drawn in this round
    double* cell_lo     # the node's cell, per feature
    double* cell_hi
    const double* u_feature
    const double* u_threshold
    intp_t* feature
    double* threshold
    const double* upper
    intp_t d
    int depth


cdef void _draw_node(_PathState* s, intp_t node, int level) noexcept nogil:
    """Draw node ``node`` (at ``level``) and, recursively, its subtree; restores the state."""
    if level >= s.depth:
        return
    cdef intp_t d = s.d
    cdef intp_t p = level % d                       # position in the current round
    cdef intp_t j = p + <intp_t> floor(s.u_feature[node] * (d - p))
    if j >= d:
        j = d - 1
    cdef intp_t f = s.perm[j]
    s.perm[j] = s.perm[p]
    s.perm[p] = f
    cdef double lo = s.cell_lo[f], hi = s.cell_hi[f]
    cdef double u = s.u_threshold[node]
    cdef double t = lo * (1.0 - u) + hi * u         # never overflows, unlike lo + u (hi - lo)
    if t >= hi and hi > lo:                         # rounding reached the top of the cell
        t = nextafter(hi, lo)
    if t < lo:
        t = lo
    s.feature[node] = f
    s.threshold[node] = INFINITY if t >= s.upper[f] else t
    # Left child: cell (lo, t]; right child: (t, hi].
    s.cell_hi[f] = t if t < hi else hi
    _draw_node(s, 2 * node + 1, level + 1)
    s.cell_hi[f] = hi
    s.cell_lo[f] = t if t > lo else lo
    _draw_node(s, 2 * node + 2, level + 1)
    s.cell_lo[f] = lo
    s.perm[p] = s.perm[j]
    s.perm[j] = f


def draw_structure(u_feature, u_threshold, lower, upper, depth):
    """Features and thresholds of a forest from uniforms; see the module docstring."""
    depth = _check_depth(depth)
    lower = np.ascontiguousarray(lower, dtype=np.float64)
    upper = np.ascontiguousarray(upper, dtype=np.float64)
    if lower.ndim != 1 or upper.shape != lower.shape or lower.shape[0] == 0:
        raise ValueError("lower and upper must have the same shape (n_features,), n_features >= 1")
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))) or np.any(lower > upper):
        raise ValueError("lower and upper must be finite with lower <= upper")
    n_internal = (1 << depth) - 1
    cdef const double[:, ::1] uf = np.ascontiguousarray(u_feature, dtype=np.float64)
    cdef const double[:, ::1] ut = np.ascontiguousarray(u_threshold, dtype=np.float64)
    if uf.shape[1] != n_internal or ut.shape[0] != uf.shape[0] or ut.shape[1] != n_internal:
        raise ValueError(f"u_feature and u_threshold must have shape (n_trees, {n_internal})")
    if not (np.all((np.asarray(uf) >= 0) & (np.asarray(uf) < 1))
            and np.all((np.asarray(ut) >= 0) & (np.asarray(ut) < 1))):
        raise ValueError("uniforms must lie in [0, 1)")
    cdef intp_t n_trees = uf.shape[0], d = lower.shape[0], t
    feature = np.zeros((n_trees, n_internal), dtype=np.intp)
    threshold = np.zeros((n_trees, n_internal), dtype=np.float64)
    if n_internal == 0 or n_trees == 0:
        return feature, threshold
    cdef intp_t[:, ::1] fv = feature
    cdef double[:, ::1] tv = threshold
    cdef intp_t[::1] perm = np.arange(d, dtype=np.intp)
    cdef double[::1] cell_lo = lower.copy(), cell_hi = upper.copy()
    cdef const double[::1] up = upper
    cdef _PathState s
    s.perm = &perm[0]
    s.cell_lo = &cell_lo[0]
    s.cell_hi = &cell_hi[0]
    s.upper = &up[0]
    s.d = d
    s.depth = depth
    with nogil:
        for t in range(n_trees):
            s.u_feature = &uf[t, 0]
            s.u_threshold = &ut[t, 0]
            s.feature = &fv[t, 0]
            s.threshold = &tv[t, 0]
            _draw_node(&s, 0, 0)
    return feature, threshold


# ---------------------------------------------------------------------------------------
# Routing
# ---------------------------------------------------------------------------------------

cdef inline intp_t _leaf(const floating* x, const intp_t* feature, const double* threshold,
                         int depth, bint* nan) noexcept nogil:
    """Leaf index (0 .. 2**depth - 1) of row x in one tree; flags NaN (which goes right)."""
    cdef intp_t node = 0
    cdef int _level
    cdef double v
    for _level in range(depth):
        v = x[feature[node]]
        nan[0] |= v != v
        node = 2 * node + 1 + (not (v <= threshold[node]))
    return node - ((<intp_t> 1 << depth) - 1)


cdef void _route_block(const floating* x, intp_t d, intp_t n_rows, const intp_t* feature,
                       const double* threshold, int depth, intp_t* node, bint* nan) noexcept nogil:
    """Leaf index of ``n_rows`` consecutive rows (from x) in one tree, into ``node``.

    Level by level over the whole block: the rows' paths are independent, so the CPU
    overlaps their loads, and the branch-free step avoids mispredicted comparisons.
    """
    cdef intp_t i, k
    cdef int _level
    cdef double v
    cdef bint bad = False
    for i in range(n_rows):
        node[i] = 0
    for _level in range(depth):
        for i in range(n_rows):
            k = node[i]
            v = x[i * d + feature[k]]
            bad |= v != v
            node[i] = 2 * k + 1 + (not (v <= threshold[k]))
    k = ((<intp_t> 1) << depth) - 1
    for i in range(n_rows):
        node[i] -= k
    nan[0] |= bad


cdef struct _Forest:
    const intp_t* feature      # (n_trees, n_internal), row-major; NULL when empty
    const double* threshold
    intp_t n_trees
    intp_t n_internal
    int depth


cdef _Forest _forest(const intp_t[:, ::1] feature, const double[:, ::1] threshold, int depth):
    """Pointers into checked forest arrays (the caller keeps the arrays alive)."""
    cdef _Forest f
    f.n_trees = feature.shape[0]
    f.n_internal = feature.shape[1]
    f.depth = depth
    f.feature = &feature[0, 0] if f.n_internal > 0 and f.n_trees > 0 else NULL
    f.threshold = &threshold[0, 0] if f.n_internal > 0 and f.n_trees > 0 else NULL
    return f


cdef inline void _route_tree(const _Forest* f, intp_t t, const floating* x, intp_t d, intp_t n_rows,
                             intp_t* leaves, bint* nan) noexcept nogil:
    """Leaf index in tree t of ``n_rows`` (<= _ROW_BLOCK_MAX) consecutive rows from x."""
    _route_block(x, d, n_rows, f.feature + t * f.n_internal, f.threshold + t * f.n_internal,
                 f.depth, leaves, nan)


# What the routing loop does with the leaf ``k`` that row ``i`` reaches in tree ``t``.
cdef enum _Sink:
    _COUNT = 0        # counts[t, k, y_index[i - start]] += 1
    _APPLY = 1        # leaf_out[i, t] = k
    _APPLY_OWN = 2    # leaf_out[i] = k (the row's own tree only)
    _VOTE = 3         # vote_out[i, :] += values[t, k, :]


cdef struct _Output:
    long long* counts          # _COUNT: (n_trees, n_leaves, n_classes), C-contiguous
    const intp_t* y_index      # _COUNT: class index of rows start .. stop - 1
    intp_t n_classes
    intp_t* leaf_out           # _APPLY: (n_rows, n_trees); _APPLY_OWN: (n_rows,)
    double* vote_out           # _VOTE: (n_rows, n_out)
    const double* values       # _VOTE: (n_trees, n_leaves, n_out)
    intp_t n_out


cdef inline void _emit(const _Forest* f, _Sink sink, _Output* o, intp_t t, intp_t i, intp_t start,
                       intp_t k) noexcept nogil:
    cdef intp_t c
    cdef const double* leaf_value
    if sink == _COUNT:
        o.counts[((t << f.depth) + k) * o.n_classes + o.y_index[i - start]] += 1
    elif sink == _APPLY:
        o.leaf_out[i * f.n_trees + t] = k
    elif sink == _APPLY_OWN:
        o.leaf_out[i] = k
    else:
        leaf_value = o.values + ((t << f.depth) + k) * o.n_out
        for c in range(o.n_out):
            o.vote_out[i * o.n_out + c] += leaf_value[c]


cdef inline bint _route_rows(const _Forest* f, const floating* x0, intp_t d, intp_t start, intp_t stop,
                             const intp_t* part, _Sink sink, _Output* o) noexcept nogil:
    """The one routing loop: rows [start, stop) to their leaves, each leaf handed to ``sink``.

    ``part`` NULL: every row through every tree, a block of rows at a time, trees in index
    order for each row (so sums over trees do not depend on the blocking); else row i
    goes through its own tree ``part[i - start]`` only. Called with a constant ``sink``,
    the C compiler specialises the inlined loop (no branch on ``sink`` inside it).
    Returns whether a routed value was NaN.
    """
    cdef bint nan = False
    cdef intp_t i, t, block, end
    cdef intp_t leaves[_ROW_BLOCK_MAX]
    if part != NULL:
        for i in range(start, stop):
            t = part[i - start]
            _emit(f, sink, o, t, i, start,
                  _leaf(x0 + i * d, f.feature + t * f.n_internal, f.threshold + t * f.n_internal, f.depth, &nan))
        return nan
    block = start
    while block < stop:
        end = block + _ROW_BLOCK if block + _ROW_BLOCK < stop else stop
        for t in range(f.n_trees):
            _route_tree(f, t, x0 + block * d, d, end - block, leaves, &nan)
            for i in range(block, end):
                _emit(f, sink, o, t, i, start, leaves[i - block])
        block = end
    return nan


def _counts_chunk(const floating[:, ::1] X, intp_t start, intp_t stop, const intp_t[::1] y_index,
                  intp_t n_classes, part, const intp_t[:, ::1] feature,
                  const double[:, ::1] threshold, int depth):
    """Leaf counts of rows [start, stop) (``y_index`` and ``part`` are sliced to them)."""
    cdef _Forest f = _forest(feature, threshold, depth)
    counts = np.zeros((f.n_trees, (<intp_t> 1) << depth, n_classes), dtype=np.int64)
    cdef long long[:, :, ::1] c = counts
    cdef const intp_t[::1] pv = part if part is not None else np.zeros(1, dtype=np.intp)
    cdef const intp_t* own = &pv[0] if part is not None and stop > start else NULL
    cdef bint nan = False
    cdef intp_t d = X.shape[1]
    cdef const floating* x0 = &X[0, 0] if X.shape[0] > 0 and d > 0 else NULL
    cdef _Output o
    o.counts = &c[0, 0, 0] if c.size > 0 else NULL
    o.y_index = &y_index[0] if stop > start else NULL
    o.n_classes = n_classes
    with nogil:
        nan = _route_rows(&f, x0, d, start, stop, own, _COUNT, &o)
    return nan, counts


def leaf_counts(X, y_index, n_classes, part, feature, threshold, depth, *, n_threads=None):
    """Per-tree, per-leaf class counts; see the module docstring."""
    X = _check_array(X, "X", 2)
    n = X.shape[0]
    depth = _check_forest(feature, threshold, depth, X.shape[1])
    n_trees = feature.shape[0]
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 1:
        raise ValueError(f"n_classes must be an int >= 1, got {n_classes!r}")
    n_classes = int(n_classes)
    _check_index(y_index, n, n_classes, "y_index")
    if part is not None:
        _check_index(part, n, n_trees, "part")
    if X.shape[1] == 0 and depth > 0 and n:
        raise ValueError("X has no features to route on")

    def work(start, stop):
        return _counts_chunk(X, start, stop, y_index[start:stop], n_classes,
                             None if part is None else part[start:stop], feature, threshold, depth)

    parts = _map_chunks(work, n, n_threads) if n else []
    if any(p[0] for p in parts):
        _raise_nan()
    counts = np.zeros((n_trees, 1 << depth, n_classes), dtype=np.int64)
    for _, c in parts:
        counts += c
    return counts


def _apply_chunk(const floating[:, ::1] X, intp_t start, intp_t stop, const intp_t[:, ::1] feature,
                 const double[:, ::1] threshold, int depth, intp_t[:, ::1] out):
    cdef _Forest f = _forest(feature, threshold, depth)
    cdef intp_t d = X.shape[1]
    cdef bint nan = False
    cdef const floating* x0 = &X[0, 0] if X.shape[0] > 0 and d > 0 else NULL
    cdef _Output o
    o.leaf_out = &out[0, 0] if out.size > 0 else NULL
    with nogil:
        nan = _route_rows(&f, x0, d, start, stop, NULL, _APPLY, &o)
    return nan


def _apply_part_chunk(const floating[:, ::1] X, intp_t start, intp_t stop, const intp_t[::1] part,
                      const intp_t[:, ::1] feature, const double[:, ::1] threshold, int depth,
                      intp_t[::1] out):
    """Leaf index of rows [start, stop) in their own tree ``part[i]``."""
    cdef _Forest f = _forest(feature, threshold, depth)
    cdef intp_t d = X.shape[1]
    cdef bint nan = False
    cdef const floating* x0 = &X[0, 0] if X.shape[0] > 0 and d > 0 else NULL
    cdef _Output o
    if stop <= start:
        return False
    o.leaf_out = &out[0]
    with nogil:
        nan = _route_rows(&f, x0, d, start, stop, &part[start], _APPLY_OWN, &o)
    return nan


def apply_trees(X, feature, threshold, depth, *, part=None, n_threads=None):
    """Leaf index of every row in every tree (or, with ``part``, in its own tree); see the module docstring."""
    X = _check_array(X, "X", 2)
    depth = _check_forest(feature, threshold, depth, X.shape[1])
    n = X.shape[0]
    if X.shape[1] == 0 and depth > 0 and n:
        raise ValueError("X has no features to route on")
    if part is not None:
        _check_index(part, n, feature.shape[0], "part")
        out = np.zeros(n, dtype=np.intp)
        flags = _map_chunks(lambda start, stop: _apply_part_chunk(X, start, stop, part, feature, threshold, depth, out),
                            n, n_threads) if n else []
        if any(flags):
            _raise_nan()
        return out
    out = np.zeros((n, feature.shape[0]), dtype=np.intp)
    flags = _map_chunks(lambda start, stop: _apply_chunk(X, start, stop, feature, threshold, depth, out),
                        n, n_threads) if n else []
    if any(flags):
        _raise_nan()
    return out


def _votes_chunk(const floating[:, ::1] X, intp_t start, intp_t stop, const intp_t[:, ::1] feature,
                 const double[:, ::1] threshold, int depth, const double[:, :, ::1] values,
                 double[:, ::1] out):
    cdef _Forest f = _forest(feature, threshold, depth)
    cdef intp_t d = X.shape[1]
    cdef bint nan = False
    cdef const floating* x0 = &X[0, 0] if X.shape[0] > 0 and d > 0 else NULL
    cdef _Output o
    o.values = &values[0, 0, 0] if values.size > 0 else NULL
    o.n_out = values.shape[2]
    o.vote_out = &out[0, 0] if out.size > 0 else NULL
    with nogil:
        nan = _route_rows(&f, x0, d, start, stop, NULL, _VOTE, &o)
    return nan


def tree_votes(X, feature, threshold, depth, values, *, n_threads=None):
    """Σ over trees of the value of the leaf each row reaches; see the module docstring."""
    X = _check_array(X, "X", 2)
    depth = _check_forest(feature, threshold, depth, X.shape[1])
    n_trees = feature.shape[0]
    if not (isinstance(values, np.ndarray) and values.dtype == np.float64 and values.ndim == 3
            and values.flags.c_contiguous):
        raise TypeError("values must be a C-contiguous 3-d float64 array")
    if values.shape[:2] != (n_trees, 1 << depth):
        raise ValueError(f"values must have shape ({n_trees}, {1 << depth}, n_outputs), got {values.shape}")
    n = X.shape[0]
    out = np.zeros((n, values.shape[2]), dtype=np.float64)
    if X.shape[1] == 0 and depth > 0 and n:
        raise ValueError("X has no features to route on")
    flags = _map_chunks(lambda start, stop: _votes_chunk(X, start, stop, feature, threshold, depth, values, out),
                        n, n_threads) if n else []
    if any(flags):
        _raise_nan()
    return out
