# The C interface between the shared runtime and every module's wrapper
# (aotc_runtime.h, rendered from templates/runtime.h.in), declared for Cython: both
# cimport it as ``_aotc_abi``.
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint64_t
from cpython.ref cimport PyObject

cdef extern from "aotc_runtime.h" nogil:
    ctypedef struct aotc_array:
        void *data
        const int64_t *shape
        const int64_t *strides
    ctypedef int64_t (*aotc_body_fn)(void *ctx, int64_t begin, int64_t end) noexcept nogil
    ctypedef struct aotc_random:
        pass
    ctypedef struct aotc_runtime:
        int64_t (*poll)(aotc_runtime *)
        int64_t detail[4]
        int64_t (*parallel_for)(aotc_runtime *, aotc_body_fn, void *, int64_t)
        aotc_random *(*random)(aotc_runtime *, int64_t)
        uint64_t argument_bits
        int64_t threads
        void *heap
    ctypedef int64_t (*aotc_shapes_fn)(void **argv, int64_t *out_dims,
                                       int64_t *info) noexcept nogil
    ctypedef int64_t (*aotc_kernel_fn)(void **argv, void **outv, int64_t *out_dims,
                                       void *scratch, aotc_runtime *rt) noexcept nogil
    ctypedef struct aotc_param:
        int8_t scalar, kind, code, written, defer
        int16_t typenum, ndim
        int32_t fixed, nfixed
    ctypedef struct aotc_fixed:
        int32_t axis
        int64_t size
    ctypedef struct aotc_order:
        int32_t written, read, same, transposed
    ctypedef struct aotc_output:
        int16_t typenum, ndim, returned, dynamic
    ctypedef struct aotc_overload:
        int32_t function, nargs, nouts, ndims, params, outputs, orders, norders
        int32_t loops, result, optional, twin
    ctypedef struct aotc_function:
        int32_t first, count, nparams, fewest, sequences
    ctypedef struct aotc_module:
        const aotc_param *params
        const aotc_fixed *fixed
        const aotc_order *orders
        const aotc_output *outputs
        const aotc_overload *overloads
        const aotc_function *functions
        const int8_t *sequences
        const aotc_shapes_fn *shapes
        const aotc_kernel_fn *kernels
        PyObject *checks
        PyObject *errors
        PyObject *trees
        PyObject *names
        PyObject *candidates
    ctypedef struct aotc_frame:
        PyObject **converted
        void **argv
        aotc_array *arrays
        int64_t *slots
        void **outv
        int64_t *scalars
        int64_t *dims
    ctypedef struct aotc_call_runtime:
        aotc_runtime base
        int64_t next_ns
