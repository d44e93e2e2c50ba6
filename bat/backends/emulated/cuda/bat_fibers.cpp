// The threads of a block as fibers (part of the runtime of BAT's emulated backend, written for
// this project; bat_runtime.cpp runs the plan and calls run_block for every block).
//
// Every CUDA thread of a block is a fiber of this OS thread with its own stack, running until
// it reaches a barrier or returns; the scheduler then runs the next one (in reverse thread
// order in the reverse block order). A barrier is released when every thread of the block waits
// at the same __syncthreads (file and line); threads waiting at different ones, or a thread
// returning while others wait, is an error naming the kernel, block and threads.
//
// Sanitizers: under AddressSanitizer the fiber switches are announced to it; under
// ThreadSanitizer (the runtime is then compiled without instrumentation and linked with it,
// BAT_EMU_TSAN) every fiber is a TSan fiber switched without synchronisation: within a block
// only the barriers order memory accesses, so a missing barrier is reported as a data race
// even where this schedule happens to give the right result. Blocks are ordered one after
// another (TSan cannot be told that the next block's shared memory is a new object).
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <vector>

#include "bat_fibers.h"

// GCC says -fsanitize=address with __SANITIZE_ADDRESS__, clang with __has_feature(address_sanitizer).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BAT_ASAN_BUILD 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(BAT_ASAN_BUILD)
#include <sanitizer/common_interface_defs.h>
#define BAT_ASAN 1
#define BAT_NO_ASAN __attribute__((no_sanitize_address))
#else
#define BAT_NO_ASAN
#endif
#if defined(BAT_EMU_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace bat_emu {

Indices current;

namespace {

// -- switching stacks -------------------------------------------------------------------------
// On x86-64 a few instructions (bat_emu_switch) save the callee-saved registers and the
// floating-point control words and swap stack pointers; elsewhere ucontext does it. Hand-
// written because glibc's swapcontext makes a system call at every switch, and
// AddressSanitizer's interceptor of it clears the shadow of the whole target stack: together
// 30 times slower on the kernels' barriers. Elsewhere (aarch64) the ucontext switch is used;
// BAT_EMU_UCONTEXT forces it on x86-64 too, so that its cost can be measured here
// (bench/fiber_switch.py; the figure is in the README).
#if defined(__x86_64__) && !defined(BAT_EMU_UCONTEXT)
struct Context {
    void* sp;
};
extern "C" void bat_emu_switch(void** save, void* target);
asm(R"(
    .pushsection .text
    .globl bat_emu_switch
    .type bat_emu_switch, @function
bat_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size bat_emu_switch, .-bat_emu_switch
    .popsection
)");

// A stack that bat_emu_switch "returns" into start(), aligned as if start() had been called.
void make_context(Context* c, char* stack, size_t size, void (*start)()) {
    void** sp = reinterpret_cast<void**>((reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t{15});
    *--sp = nullptr;                         // start() never returns
    *--sp = reinterpret_cast<void*>(start);  // popped by ret
    for (int i = 0; i < 6; ++i) *--sp = nullptr;  // rbp, rbx, r12 .. r15
    uint32_t control[2] = {0, 0};
    asm volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(control[0]), "=m"(control[1]));
    --sp;
    memcpy(sp, control, sizeof control);
    c->sp = sp;
}

inline void switch_context(Context* from, Context* to) { bat_emu_switch(&from->sp, to->sp); }
#else
struct Context {
    ucontext_t uc;
};

void make_context(Context* c, char* stack, size_t size, void (*start)()) {
    getcontext(&c->uc);
    c->uc.uc_stack.ss_sp = stack;
    c->uc.uc_stack.ss_size = size;
    c->uc.uc_link = nullptr;
    makecontext(&c->uc, start, 0);
}

inline void switch_context(Context* from, Context* to) { swapcontext(&from->uc, &to->uc); }
#endif

constexpr size_t kGuard = 4096;
constexpr size_t kStack = 256 * 1024;
enum State { kReady, kWaiting, kDone };

struct Fiber {
    Context ctx;
    char* stack;  // the usable stack, above a guard page
    State state;
    const char* file;
    int line;
    uint3 index;
    unsigned barriers;  // barriers passed in this block
    void* tsan;
};

std::vector<Fiber*> fibers;
Context scheduler;
Fiber* running = nullptr;
const Kernel* active = nullptr;
void* bound = nullptr;
#if BAT_ASAN
const void* main_bottom = nullptr;  // the scheduler's stack, as AddressSanitizer reports it
size_t main_size = 0;
#endif
#if defined(BAT_EMU_TSAN)
void* scheduler_tsan = nullptr;
// Synchronisation objects (only their addresses matter). Barriers alternate between two, so a
// thread leaving one barrier does not see what a faster thread did after it.
char block_start, block_end, barrier_sync[2];
#endif

Fiber* fiber(size_t t) {
    while (fibers.size() <= t) {
        void* mem = mmap(nullptr, kGuard + kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                         -1, 0);
        if (mem == MAP_FAILED) fail("cannot map a fiber stack: %s", strerror(errno));
        mprotect(mem, kGuard, PROT_NONE);  // a stack overflow faults instead of corrupting memory
        Fiber* f = new Fiber();
        f->stack = static_cast<char*>(mem) + kGuard;
#if defined(BAT_EMU_TSAN)
        f->tsan = __tsan_create_fiber(0);
#endif
        fibers.push_back(f);
    }
    return fibers[t];
}

// The scheduler side of a switch into a fiber is enter(); the fiber side is leave() (at a
// barrier) and finish() (after the kernel returned). entry() and finish() hold no variable a
// sanitizer guards, so a finished fiber leaves no poisoned stack behind for the next one.
void leave() {
    Fiber* self = running;
#if BAT_ASAN
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, main_bottom, main_size);
#endif
#if defined(BAT_EMU_TSAN)
    __tsan_switch_to_fiber(scheduler_tsan, __tsan_switch_to_fiber_no_sync);
#endif
    switch_context(&self->ctx, &scheduler);
#if BAT_ASAN
    __sanitizer_finish_switch_fiber(fake, &main_bottom, &main_size);
#endif
}

BAT_NO_ASAN void finish() {
    running->state = kDone;
#if defined(BAT_EMU_TSAN)
    __tsan_release(&block_end);
#endif
#if BAT_ASAN
    __sanitizer_start_switch_fiber(nullptr, main_bottom, main_size);  // this fiber's stack is done
#endif
#if defined(BAT_EMU_TSAN)
    __tsan_switch_to_fiber(scheduler_tsan, __tsan_switch_to_fiber_no_sync);
#endif
    switch_context(&running->ctx, &scheduler);
    fail("a finished fiber was resumed");
}

BAT_NO_ASAN void entry() {
#if BAT_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &main_bottom, &main_size);
#endif
#if defined(BAT_EMU_TSAN)
    __tsan_acquire(&block_start);
#endif
    active->call(bound);
    finish();
}

void enter(Fiber* f) {  // from the scheduler into a fiber, until it waits or returns
    running = f;
    current.thread = f->index;
#if BAT_ASAN
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, f->stack, kStack);
#endif
#if defined(BAT_EMU_TSAN)
    __tsan_switch_to_fiber(f->tsan, __tsan_switch_to_fiber_no_sync);
#endif
    switch_context(&scheduler, &f->ctx);
#if BAT_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
    running = nullptr;
}

const char* thread_name(const Fiber* f, char* buf, size_t size) {
    snprintf(buf, size, "(%u, %u, %u)", f->index.x, f->index.y, f->index.z);
    return buf;
}

}  // namespace

void run_block(const Kernel* kernel, void* arguments, size_t threads, bool reverse) {
    active = kernel;
    bound = arguments;
#if defined(BAT_EMU_TSAN)
    if (!scheduler_tsan) scheduler_tsan = __tsan_get_current_fiber();
    __tsan_release(&block_start);  // the block begins after the host's work and the blocks before
#endif
    const dim3 b = current.block_dim;
    for (size_t t = 0; t < threads; ++t) {
        Fiber* f = fiber(t);
        f->state = kReady;
        f->barriers = 0;
        f->index = uint3{(unsigned)(t % b.x), (unsigned)(t / b.x % b.y), (unsigned)(t / b.x / b.y)};
        make_context(&f->ctx, f->stack, kStack, entry);
    }
    for (;;) {
        for (size_t k = 0; k < threads; ++k) {
            Fiber* f = fibers[reverse ? threads - 1 - k : k];
            if (f->state == kReady) enter(f);
        }
        Fiber *waiting = nullptr, *done = nullptr;
        for (size_t t = 0; t < threads; ++t) {
            Fiber* f = fibers[t];
            if (f->state == kWaiting && !waiting) waiting = f;
            if (f->state == kDone && !done) done = f;
        }
        if (!waiting) break;
        char a[48], c[48];
        if (done)
            fail("%s: thread %s returned while thread %s waits at the barrier at %s:%d (a GPU would hang or "
                 "misbehave)",
                 where, thread_name(done, a, sizeof a), thread_name(waiting, c, sizeof c), waiting->file,
                 waiting->line);
        for (size_t t = 0; t < threads; ++t) {
            Fiber* f = fibers[t];
            if (f->line != waiting->line || strcmp(f->file, waiting->file) != 0)
                fail("%s: barrier divergence: thread %s waits at %s:%d, thread %s at %s:%d", where,
                     thread_name(waiting, a, sizeof a), waiting->file, waiting->line, thread_name(f, c, sizeof c),
                     f->file, f->line);
        }
        for (size_t t = 0; t < threads; ++t) fibers[t]->state = kReady;
    }
#if defined(BAT_EMU_TSAN)
    __tsan_acquire(&block_end);
#endif
}

void barrier(const char* file, int line) {
    Fiber* self = running;
    if (!self) fail("__syncthreads() outside a kernel");
    self->state = kWaiting;
    self->file = file;
    self->line = line;
#if defined(BAT_EMU_TSAN)
    char* sync = &barrier_sync[self->barriers & 1];
    __tsan_release(sync);
#endif
    ++self->barriers;
    leave();
#if defined(BAT_EMU_TSAN)
    __tsan_acquire(sync);
#endif
}

}  // namespace bat_emu
