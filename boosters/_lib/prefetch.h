/* Software prefetch for the gathered histogram kernels (RFC-0016 Phase 1a). */
#ifndef BOOSTERS_PREFETCH_H
#define BOOSTERS_PREFETCH_H

#if defined(__GNUC__) || defined(__clang__)
/* read access, keep in all cache levels */
#define boosters_prefetch(ptr) __builtin_prefetch((const void *)(ptr), 0, 3)
#else
#define boosters_prefetch(ptr) ((void)(ptr))
#endif

#endif
