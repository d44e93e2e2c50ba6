// Between the two files of the emulation runtime (bat_runtime.cpp, bat_fibers.cpp): running the
// threads of one block.
#ifndef BAT_FIBERS_H
#define BAT_FIBERS_H

#include <stddef.h>

#include "bat_cuda.h"
#include "bat_launch.h"

namespace bat_emu {

// What runs now (kernel, launch, block, order), for every error message.
extern char where[512];

// Run every thread of the current block (``current`` holds its indices and dimensions) as a
// fiber calling kernel->call(arguments), until all have returned; fail() on a misused barrier.
void run_block(const Kernel* kernel, void* arguments, size_t threads, bool reverse);

}  // namespace bat_emu

#endif  // BAT_FIBERS_H
