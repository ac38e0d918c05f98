#ifndef AOTC_ARRAY_DEFINED
#define AOTC_ARRAY_DEFINED
typedef struct {
    void *data;
    const int64_t *shape;
    const int64_t *strides;
} aotc_array;
#endif

#ifndef AOTC_RUNTIME_DEFINED
#define AOTC_RUNTIME_DEFINED
typedef int64_t (*aotc_body_fn)(void *ctx, int64_t begin, int64_t end);
typedef struct aotc_runtime {
    int64_t (*poll)(struct aotc_runtime *rt);
    int64_t detail[4];  /* a failed check's two sides, or a raise's values, for its message */
    /* NULL, or runs body(ctx, k, k + 1) for k in 0..chunks-1 on any threads; returns 0,
       a failing chunk's code, or 5 when rt->poll asked to stop (see aotc.abi) */
    int64_t (*parallel_for)(struct aotc_runtime *rt, aotc_body_fn body, void *ctx,
                            int64_t chunks);
    /* NULL (set it: this field is read by kernels drawing random numbers), or the
       calling thread's state of numpy.random (generator 0) or Python's random (1);
       without it, or when it returns NULL, kernels draw from states of their object's
       own. A state with ready == 0 is seeded with 5489 at its first draw. */
    struct aotc_random *(*random)(struct aotc_runtime *rt, int64_t generator);
    /* bit i set: scalar argument i was a Python int, float, bool or complex rather than
       a NumPy scalar, so dividing by it (or by what operators make of Python numbers
       only) by zero fails with ZeroDivisionError as in Python; 0: NumPy's inf/nan/0.
       For an array argument: it is C-contiguous, so its reshapes are views, as NumPy's */
    uint64_t argument_bits;
    /* the threads parallel_for runs chunks on, the caller's included (0 or 1: one), for
       work that splits best in one chunk per thread */
    int64_t threads;
    /* NULL before the call: the lists, sets and dicts the kernel grows while it runs,
       all freed before it returns */
    void *heap;
} aotc_runtime;

/* An MT19937 state (as NumPy's mt19937_state and CPython's), with its cached normal */
typedef struct aotc_random {
    uint32_t key[624];
    int32_t pos;        /* next word of key; 624: regenerate first */
    int32_t has_gauss;  /* gauss holds the second value of the last polar pair */
    double gauss;
    int64_t ready;      /* 0: not seeded yet */
} aotc_random;
#endif

#ifndef AOTC_ENTRY_TYPES_DEFINED
#define AOTC_ENTRY_TYPES_DEFINED
typedef int64_t (*aotc_shapes_fn)(void *const *argv, int64_t *out_dims, int64_t *info);
typedef int64_t (*aotc_kernel_fn)(void *const *argv, void *const *outv, int64_t *out_dims,
                                  void *scratch, aotc_runtime *rt);
#endif
