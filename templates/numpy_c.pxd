# The part of NumPy's C API that the generated modules use, declared for Cython.
# (``cimport numpy`` declares all of it: Cython parses and gcc compiles that per module.)

cdef extern from "numpy/arrayobject.h":
    ctypedef Py_ssize_t npy_intp
    enum:
        NPY_BOOL, NPY_INT8, NPY_INT16, NPY_INT32, NPY_INT64, NPY_UINT8, NPY_UINT16,
        NPY_UINT32, NPY_UINT64, NPY_FLOAT32, NPY_FLOAT64, NPY_COMPLEX64, NPY_COMPLEX128

    ctypedef class numpy.dtype [object PyArray_Descr, check_size ignore]:
        pass

    ctypedef class numpy.ndarray [object PyArrayObject, check_size ignore]:
        pass

    int _import_array() except -1
    bint PyArray_CheckExact(object o)
    int PyArray_NDIM(ndarray a)
    int PyArray_TYPE(ndarray a)
    npy_intp PyArray_ITEMSIZE(ndarray a)
    npy_intp PyArray_SIZE(ndarray a)
    npy_intp *PyArray_DIMS(ndarray a)
    npy_intp *PyArray_STRIDES(ndarray a)
    void *PyArray_DATA(ndarray a)
    bint PyArray_ISWRITEABLE(ndarray a)
    bint PyArray_ISALIGNED(ndarray a)
    bint PyArray_ISNOTSWAPPED(ndarray a)
    bint PyArray_IS_C_CONTIGUOUS(ndarray a)
    dtype PyArray_DescrFromType(int typenum)
    object PyArray_EMPTY(int nd, npy_intp *dims, int typenum, int fortran)
    object PyArray_Scalar(void *data, dtype descr, object base)

cdef extern from "numpy/ufuncobject.h":
    ctypedef void (*PyUFuncGenericFunction)(char **args, npy_intp *dims, npy_intp *steps,
                                            void *data) noexcept nogil
    enum:
        PyUFunc_None
    int _import_umath() except -1
    object PyUFunc_FromFuncAndDataAndSignature(
        PyUFuncGenericFunction *func, void **data, char *types, int ntypes, int nin,
        int nout, int identity, const char *name, const char *doc, int unused,
        const char *signature)
