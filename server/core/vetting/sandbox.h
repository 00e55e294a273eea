// The vetting child's seccomp filter (server/core/vetting/vetting.h): once it holds, a process can
// compute, manage its own memory, read and write the descriptors it already has, sleep,
// and end; opening files, sockets, new processes or threads, and signals to any other
// process fail with EPERM (a library's fallback then runs; nothing is killed for trying).
//
// A thread that existed before the filter went on may still be starting when it does
// (a sanitizer's background thread from a global constructor, on a loaded machine
// scheduled only later): what glibc does as a thread starts and ends (restartable
// sequences, its robust futex list) is allowed, so such a thread runs as any other.
// abort() signals the process itself, so it ends by SIGABRT with what it printed.
#pragma once

#include "runtime/core/status.h"

namespace et::server {

// Puts the filter on every thread of the calling process (SECCOMP_FILTER_FLAG_TSYNC),
// for good. An error when the kernel refuses it (no seccomp); on an architecture the
// filter does not know, nothing is installed and Status() is returned (limits only).
Status install_vetting_filter();

}  // namespace et::server
