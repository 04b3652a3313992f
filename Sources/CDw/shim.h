#include <elfutils/libdwfl.h>
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <gelf.h>
#include <fcntl.h>

/// Sets close-on-exec on a descriptor libdw opened: a recording process's symbol session keeps its binaries open,
/// and a program it execs must not inherit them (it has only what the untraced program would pass on).
static inline int obstrace_close_on_exec(int descriptor) {
  if (descriptor >= 0) {
    int flags = fcntl(descriptor, F_GETFD);
    if (flags >= 0) fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC);
  }
  return descriptor;
}

/// `dwfl_linux_proc_find_elf`, its descriptor closed on exec.
static inline int obstrace_proc_find_elf(Dwfl_Module *module, void **user_data, const char *module_name,
                                         Dwarf_Addr base, char **file_name, Elf **elf) {
  return obstrace_close_on_exec(dwfl_linux_proc_find_elf(module, user_data, module_name, base, file_name, elf));
}

/// `dwfl_standard_find_debuginfo`, its descriptor closed on exec.
static inline int obstrace_find_debuginfo(Dwfl_Module *module, void **user_data, const char *module_name,
                                          Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                                          GElf_Word debuglink_crc, char **debuginfo_file_name) {
  return obstrace_close_on_exec(dwfl_standard_find_debuginfo(module, user_data, module_name, base, file_name,
                                                             debuglink_file, debuglink_crc, debuginfo_file_name));
}
