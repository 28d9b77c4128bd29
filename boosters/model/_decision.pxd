# A forest's node arrays as the kernels read them, and which child a row goes to at a
# split: the one rule that prediction (model/_predict.pyx) and explanation (TreeSHAP's
# "hot" child, explain/_shap.pyx) must share.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t


cdef struct TreeArrays:
    # one tree's nodes (pointers to its first node) and its category sets
    const int32_t* split_feature    # per node, -1 at leaves
    const double* threshold
    const uint8_t* default_left
    const int32_t* left_child       # node index within the tree
    const int32_t* right_child
    const double* value             # NULL where the kernel needs none
    const double* cover             # NULL where the kernel needs none
    const int32_t* category_set     # per node its set or -1; NULL: the forest has no categorical split
    const int64_t* set_boundaries   # set s's words are cat_bitsets[set_boundaries[s]:set_boundaries[s + 1]]
    const uint32_t* cat_bitsets


cdef struct ForestArrays:
    # every tree's nodes concatenated; tree t owns tree_offsets[t]:tree_offsets[t + 1]
    TreeArrays nodes                # from the first node; set_boundaries: every tree's sets
    const int64_t* tree_offsets
    const int32_t* tree_group       # output column of each tree (NULL where the kernel needs none)
    const int64_t* tree_sets        # tree t's sets start at nodes.set_boundaries[tree_sets[t]]
    Py_ssize_t n_trees


cdef inline TreeArrays tree_of(const ForestArrays* forest, Py_ssize_t t) noexcept nogil:
    """Tree t's view of the forest's arrays: node pointers from its first node, set
    boundaries from its first set."""
    cdef int64_t base = forest.tree_offsets[t]
    cdef TreeArrays tree = forest.nodes
    tree.split_feature += base
    tree.threshold += base
    tree.default_left += base
    tree.left_child += base
    tree.right_child += base
    if tree.value != NULL:
        tree.value += base
    if tree.cover != NULL:
        tree.cover += base
    if tree.category_set != NULL:
        tree.category_set += base
        tree.set_boundaries += forest.tree_sets[t]
    return tree


cdef inline bint goes_left_categorical(double x, const uint32_t* words, int64_t n_words,
                                       bint default_left) noexcept nogil:  # words: IN
    """x as a category code, truncated toward zero as LightGBM and XGBoost take a float
    category (2.9 is code 2, -0.5 code 0): in the set (bit code of the words) goes left;
    NaN, codes below 0 (x <= -1) or past the words: the default direction."""
    cdef int64_t code
    if not (x > -1.0 and x < 32.0 * n_words):  # NaN fails both
        return default_left
    code = <int64_t> x
    return (words[code >> 5] >> (code & 31)) & 1


cdef inline bint goes_left_numeric(double x, double threshold, bint default_left) noexcept nogil:
    """x <= threshold goes left; NaN (missing) follows the default direction."""
    if x != x:
        return default_left
    return x <= threshold


cdef inline bint goes_left(const TreeArrays* tree, int32_t node, double x) noexcept nogil:
    """Whether value x of node's split feature goes left (node: index within the tree)."""
    cdef int32_t s
    cdef int64_t lo
    if tree.category_set != NULL and tree.category_set[node] >= 0:
        s = tree.category_set[node]
        lo = tree.set_boundaries[s]
        return goes_left_categorical(x, tree.cat_bitsets + lo, tree.set_boundaries[s + 1] - lo,
                                     tree.default_left[node])
    return goes_left_numeric(x, tree.threshold[node], tree.default_left[node])
