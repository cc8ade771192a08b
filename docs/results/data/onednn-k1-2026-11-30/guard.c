// LD_PRELOAD shim (gcc -O2 -shared -fPIC -o guard.so guard.c -ldl -lpthread): every aligned
// allocation (posix_memalign, aligned_alloc, memalign), and while guard_set(1) holds every malloc,
// ends right before a PROT_NONE page, so a write past its end faults at the writing instruction.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TABLE (1 << 22)
static void *keys[TABLE];
static void *bases[TABLE];
static size_t lens[TABLE];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void (*real_free)(void *);
static void *(*r_malloc)(size_t); static void *(*r_calloc)(size_t, size_t);
static void *(*r_realloc)(void *, size_t); static void (*r_free)(void *);
static size_t (*r_usable)(void *);
static char boot[1 << 16]; static size_t boot_used; static int resolving;
static void resolve(void) {
  if (r_malloc || resolving) return;
  resolving = 1;
  r_calloc = dlsym(RTLD_NEXT, "calloc"); r_malloc = dlsym(RTLD_NEXT, "malloc");
  r_realloc = dlsym(RTLD_NEXT, "realloc"); r_free = dlsym(RTLD_NEXT, "free");
  r_usable = dlsym(RTLD_NEXT, "malloc_usable_size");
  resolving = 0;
}
static void *__libc_malloc(size_t n) {
  resolve();
  if (!r_malloc) { void *p = boot + boot_used; boot_used += (n + 15) / 16 * 16; return p; }
  return r_malloc(n);
}
static void *__libc_calloc(size_t a, size_t b) {
  resolve();
  if (!r_calloc) { void *p = boot + boot_used; boot_used += (a * b + 15) / 16 * 16; memset(p, 0, a * b); return p; }
  return r_calloc(a, b);
}
static void *__libc_realloc(void *p, size_t n) { resolve(); return r_realloc(p, n); }
static void __libc_free(void *p) {
  if ((char *)p >= boot && (char *)p < boot + sizeof boot) return;
  resolve(); r_free(p);
}
static size_t __malloc_usable_size(void *p) { resolve(); return r_usable(p); }
static volatile int guard_all;
static size_t sizes[TABLE];
void guard_set(int on) { guard_all = on; }

static size_t slot(void *p) { return ((uintptr_t)p >> 4) * 2654435761u % TABLE; }

static void *guarded(size_t align, size_t size) {
  size_t page = 4096, rounded = (size + align - 1) / align * align;
  if (rounded == 0) rounded = align;
  size_t data = (rounded + page - 1) / page * page;
  size_t len = data + page;
  char *base = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return 0;
  mprotect(base + data, page, PROT_NONE);
  void *p = base + data - rounded;
  pthread_mutex_lock(&lock);
  size_t i = slot(p);
  while (keys[i]) i = (i + 1) % TABLE;
  keys[i] = p; bases[i] = base; lens[i] = len; sizes[i] = size;
  pthread_mutex_unlock(&lock);
  return p;
}

int posix_memalign(void **out, size_t align, size_t size) {
  void *p = guarded(align < 16 ? 16 : align, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
void *aligned_alloc(size_t align, size_t size) { return guarded(align < 16 ? 16 : align, size); }
void *memalign(void *align, size_t size) { return guarded((size_t)align < 16 ? 16 : (size_t)align, size); }

void free(void *p) {
  if (!p) return;
  pthread_mutex_lock(&lock);
  size_t i = slot(p);
  while (keys[i] && keys[i] != p) i = (i + 1) % TABLE;
  if (keys[i] == p) {
    void *base = bases[i]; size_t len = lens[i];
    // delete with backward-shift so probing stays correct
    size_t j = i;
    keys[i] = 0;
    for (;;) {
      j = (j + 1) % TABLE;
      if (!keys[j]) break;
      size_t k = slot(keys[j]);
      if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
        keys[i] = keys[j]; bases[i] = bases[j]; lens[i] = lens[j]; sizes[i] = sizes[j]; keys[j] = 0; i = j;
      }
    }
    pthread_mutex_unlock(&lock);
    munmap(base, len);
    return;
  }
  pthread_mutex_unlock(&lock);
  __libc_free(p);
}

static long find(void *p) {
  pthread_mutex_lock(&lock);
  size_t i = slot(p);
  while (keys[i] && keys[i] != p) i = (i + 1) % TABLE;
  long r = keys[i] == p ? (long)sizes[i] : -1;
  pthread_mutex_unlock(&lock);
  return r;
}
void *malloc(size_t n) { return guard_all ? guarded(16, n) : __libc_malloc(n); }
void *calloc(size_t a, size_t b) {
  if (!guard_all) return __libc_calloc(a, b);
  void *p = guarded(16, a * b); if (p) memset(p, 0, a * b); return p;
}
size_t malloc_usable_size(void *p) { long s = p ? find(p) : -1; return s >= 0 ? (size_t)s : __malloc_usable_size(p); }
void *realloc(void *p, size_t n) {
  if (!p) return malloc(n);
  long s = find(p);
  if (s < 0) {
    if (!guard_all) return __libc_realloc(p, n);
    size_t old = __malloc_usable_size(p);
    void *q = guarded(16, n); if (!q) return 0;
    memcpy(q, p, old < n ? old : n); __libc_free(p); return q;
  }
  void *q = guarded(16, n); if (!q) return 0;
  memcpy(q, p, (size_t)s < n ? (size_t)s : n); free(p); return q;
}
