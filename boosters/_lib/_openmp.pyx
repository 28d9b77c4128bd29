"""Whether the kernels were compiled with OpenMP, and what OpenMP reports at run time."""

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int boosters_openmp_enabled(void) { return 1; }
    static int boosters_omp_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int boosters_openmp_enabled(void) { return 0; }
    static int boosters_omp_max_threads(void) { return 1; }
    #endif
    """
    int boosters_openmp_enabled() nogil
    int boosters_omp_max_threads() nogil


def openmp_enabled():
    """True when the extension modules were compiled with OpenMP."""
    return bool(boosters_openmp_enabled())


def omp_max_threads():
    """omp_get_max_threads() of the OpenMP runtime (1 in a serial build)."""
    return boosters_omp_max_threads()
