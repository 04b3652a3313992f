// Where a shared library is loaded, as the dynamic linker sees it: for finding Observation's runtime
// (`UntracedTracking`), and whether an address is in loaded code (the symbolizer's session may predate a dlopen).
// Not on the hot path.
#define _GNU_SOURCE
#include "CObsTraceRing.h"

#include <link.h>
#include <string.h>
#include <unistd.h>

typedef struct search {
  const char *name;
  char *path;
  size_t capacity;
  uintptr_t *bias;
  uintptr_t *ranges;
  int max_ranges;
  int found;
} search;

static int visit(struct dl_phdr_info *info, size_t size, void *context) {
  (void)size;
  search *wanted = context;
  const char *name = info->dlpi_name;
  if (name == NULL) return 0;
  if (wanted->name[0] == 0) {
    // The main program: the dynamic linker names it "" (its first object); its file is /proc/self/exe.
    if (name[0] != 0) return 0;
    if (wanted->capacity > 0) {
      ssize_t length = readlink("/proc/self/exe", wanted->path, wanted->capacity - 1);
      wanted->path[length > 0 ? length : 0] = 0;
    }
  } else {
    const char *slash = strrchr(name, '/');
    const char *file = slash == NULL ? name : slash + 1;
    if (strcmp(file, wanted->name) != 0) return 0;
    if (wanted->capacity > 0) {
      strncpy(wanted->path, name, wanted->capacity - 1);
      wanted->path[wanted->capacity - 1] = 0;
    }
  }
  *wanted->bias = (uintptr_t)info->dlpi_addr;
  int count = 0;
  for (int index = 0; index < info->dlpi_phnum && count < wanted->max_ranges; index++) {
    const ElfW(Phdr) *segment = &info->dlpi_phdr[index];
    if (segment->p_type != PT_LOAD || (segment->p_flags & PF_X) == 0 || segment->p_memsz == 0) continue;
    uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)segment->p_vaddr;
    wanted->ranges[2 * count] = start;
    wanted->ranges[2 * count + 1] = start + (uintptr_t)segment->p_memsz;
    count++;
  }
  wanted->found = count;
  return 1;
}

int obstrace_find_loaded_object(const char *name, char *path, size_t capacity, uintptr_t *bias, uintptr_t *ranges,
                                int max_ranges) {
  search wanted = {name, path, capacity, bias, ranges, max_ranges, -1};
  dl_iterate_phdr(visit, &wanted);
  return wanted.found;
}

typedef struct {
  uintptr_t address;
  uintptr_t start;
} holder;

static int start_of_holder(struct dl_phdr_info *info, size_t size, void *context) {
  (void)size;
  holder *wanted = context;
  uintptr_t lowest = UINTPTR_MAX;
  int holds_it = 0;
  for (int index = 0; index < info->dlpi_phnum; index++) {
    const ElfW(Phdr) *segment = &info->dlpi_phdr[index];
    if (segment->p_type != PT_LOAD) continue;
    uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)segment->p_vaddr;
    if (start < lowest) lowest = start;
    if (wanted->address >= start && wanted->address - start < (uintptr_t)segment->p_memsz) holds_it = 1;
  }
  if (!holds_it) return 0;
  uintptr_t page = (uintptr_t)getpagesize();
  wanted->start = lowest & ~(page - 1);
  return 1;
}

uintptr_t obstrace_loaded_object_start(uintptr_t address) {
  holder wanted = {address, 0};
  dl_iterate_phdr(start_of_holder, &wanted);
  return wanted.start;
}
