// LD_PRELOAD malloc counter (scripts/allocs-per-step): prints the number of malloc, calloc and
// realloc calls of the process to stderr at exit.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static unsigned long long n_alloc = 0;
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static char boot[65536]; static size_t boot_used = 0;
static void init(void) {
  real_malloc = dlsym(RTLD_NEXT, "malloc");
  real_calloc = dlsym(RTLD_NEXT, "calloc");
  real_realloc = dlsym(RTLD_NEXT, "realloc");
}
void *malloc(size_t n) { if (!real_malloc) init(); n_alloc++; return real_malloc(n); }
void *calloc(size_t a, size_t b) {
  if (!real_calloc) { // dlsym itself may call calloc
    void *p = boot + boot_used; boot_used += (a * b + 15) & ~15ul; memset(p, 0, a * b); return p; }
  n_alloc++; return real_calloc(a, b);
}
void *realloc(void *p, size_t n) { if (!real_realloc) init(); n_alloc++; return real_realloc(p, n); }
void free(void *p) {
  static void (*real_free)(void *);
  if ((char *)p >= boot && (char *)p < boot + sizeof boot) return;
  if (!real_free) real_free = dlsym(RTLD_NEXT, "free");
  real_free(p);
}
__attribute__((destructor)) static void report(void) {
  char buf[64]; int k = snprintf(buf, sizeof buf, "mallocs %llu\n", n_alloc); write(2, buf, k);
}
