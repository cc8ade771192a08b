// LD_PRELOAD shim: every aligned allocation (posix_memalign, aligned_alloc, memalign) ends
// right before a PROT_NONE page, so a write past its end faults at the writing instruction.
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
  keys[i] = p; bases[i] = base; lens[i] = len;
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
  if (!real_free) real_free = dlsym(RTLD_NEXT, "free");
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
        keys[i] = keys[j]; bases[i] = bases[j]; lens[i] = lens[j]; keys[j] = 0; i = j;
      }
    }
    pthread_mutex_unlock(&lock);
    munmap(base, len);
    return;
  }
  pthread_mutex_unlock(&lock);
  real_free(p);
}
