// The runtime of BAT's emulated backend (written for this project): runs a plan of array
// operations and kernel launches on the CPU, once per block order.
//
// Usage: <driver> PLAN_DIR TIMEOUT_S ORDER[,ORDER]   (orders: forward, reverse)
// PLAN_DIR/plan.txt holds one operation a line (bat/backends/emulated/device.py writes it);
// host data come from PLAN_DIR/in/<k>.bin; every `save` writes PLAN_DIR/<order>/<name>.bin.
// Every array is allocated separately at its exact size (256-byte aligned, as cudaMalloc),
// so an address sanitizer sees any access past its end.
//
// Execution model: the blocks of a launch run one after another (reversed in the reverse
// order); the threads of a block are fibers of this OS thread, each running until
// it reaches a barrier or returns (reversed thread order in the reverse order). A barrier is
// released when every thread of the block waits at the same __syncthreads (file and line);
// threads waiting at different ones, or a thread returning while others wait, is an error
// naming the kernel and block. A block making no progress for TIMEOUT_S seconds (a deadlock
// or an endless loop) is an error too. Shared memory (the kernel's static locals, listed in
// the plan from the driver's symbol table) is filled with 0xFF bytes before every block.
//
// Sanitizers: under AddressSanitizer the fiber switches are announced to it; under
// ThreadSanitizer (this file is then compiled without instrumentation and linked with it,
// BAT_EMU_TSAN) every fiber is a TSan fiber switched without synchronisation: within a block
// only the barriers order memory accesses, so a missing barrier is reported as a data race
// even where this schedule happens to give the right result. Blocks are ordered one after
// another (TSan cannot be told that the next block's shared memory is a new object).
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "bat_cuda.h"
#include "bat_launch.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define BAT_ASAN 1
#define BAT_NO_ASAN __attribute__((no_sanitize_address))
#else
#define BAT_NO_ASAN
#endif
#if defined(BAT_EMU_TSAN)
#include <sanitizer/tsan_interface.h>
#endif
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

// The shared-memory offsets of the plan are relative to this variable's address.
extern "C" {
int bat_emu_anchor = 0;
}

namespace bat_emu {

Indices current;

namespace {

// -- switching stacks -------------------------------------------------------------------------
// On x86-64 a few instructions (bat_emu_switch) save the callee-saved registers and the
// floating-point control words and swap stack pointers; elsewhere ucontext does it. Hand-
// written because glibc's swapcontext makes a system call at every switch, and
// AddressSanitizer's interceptor of it clears the shadow of the whole target stack: together
// 30 times slower on the kernels' barriers.
#if defined(__x86_64__)
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
    void* tsan;
};

std::vector<Fiber*> fibers;
Context scheduler;
Fiber* running = nullptr;
const void* main_bottom = nullptr;
size_t main_size = 0;
void* scheduler_tsan = nullptr;
const Kernel* active = nullptr;
void* bound = nullptr;
char where[512] = "the driver";
// ThreadSanitizer's synchronisation objects (only their addresses matter)
char block_start, block_end, barrier_sync;

void on_death() {
    char line[768];
    int n = snprintf(line, sizeof line, "bat-emu: during %s, thread (%u, %u, %u)\n", where,
                     current.thread.x, current.thread.y, current.thread.z);
    if (n > 0 && write(2, line, (size_t)n) < 0) return;
}

void on_alarm(int) {
    static const char head[] = "bat-emu: no progress in ";
    static const char tail[] = " (a deadlock or an endless loop)\n";
    if (write(2, head, sizeof head - 1) < 0 || write(2, where, strlen(where)) < 0 ||
        write(2, tail, sizeof tail - 1) < 0)
        _exit(4);
    _exit(4);
}

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

void run_block(size_t threads, bool reverse) {
    const dim3 b = current.block_dim;
    for (size_t t = 0; t < threads; ++t) {
        Fiber* f = fiber(t);
        f->state = kReady;
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
        if (!waiting) return;
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
}

// -- the plan ---------------------------------------------------------------------------------
struct Region {
    char* address;
    size_t bytes;
};

struct Launch {
    std::string kernel;
    dim3 grid, block;
    std::vector<std::vector<std::string>> args;  // "A name" or "S type bytes hex"
};

struct Op {
    std::vector<std::string> words;
    Launch launch;
};

struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
};

std::string dir;
unsigned timeout_s = 60;
std::vector<Region> shared;
std::map<std::string, Buffer> arrays;
const Kernel* kernels = nullptr;
int n_kernels = 0;
const Symbol* symbols = nullptr;
int n_symbols = 0;

std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && line[i] == ' ') ++i;
        size_t j = i;
        while (j < line.size() && line[j] != ' ') ++j;
        if (j > i) out.push_back(line.substr(i, j - i));
        i = j;
    }
    return out;
}

unsigned long long number(const std::string& s, const char* what) {
    char* end = nullptr;
    unsigned long long v = strtoull(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0') fail("plan: %s %s is not a number", what, s.c_str());
    return v;
}

std::vector<Op> read_plan() {
    std::string path = dir + "/plan.txt";
    FILE* f = fopen(path.c_str(), "r");
    if (!f) fail("cannot open %s: %s", path.c_str(), strerror(errno));
    std::vector<Op> ops;
    char buf[4096];
    while (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = '\0';
        std::vector<std::string> w = split(buf);
        if (w.empty()) continue;
        if (w[0] == "arg") {
            if (ops.empty() || ops.back().words[0] != "launch") fail("plan: arg outside a launch");
            ops.back().launch.args.emplace_back(w.begin() + 1, w.end());
            continue;
        }
        Op op;
        op.words = w;
        if (w[0] == "launch") {
            if (w.size() != 8) fail("plan: launch needs a kernel, a grid and a block");
            op.launch.kernel = w[1];
            op.launch.grid = dim3((unsigned)number(w[2], "grid"), (unsigned)number(w[3], "grid"),
                                  (unsigned)number(w[4], "grid"));
            op.launch.block = dim3((unsigned)number(w[5], "block"), (unsigned)number(w[6], "block"),
                                   (unsigned)number(w[7], "block"));
        } else if (w[0] == "shared") {
            if (w.size() < 3) fail("plan: shared needs an offset and a size");
            long long offset = strtoll(w[1].c_str(), nullptr, 10);
            shared.push_back(Region{reinterpret_cast<char*>(&bat_emu_anchor) + offset, number(w[2], "size")});
            continue;
        }
        ops.push_back(op);
    }
    fclose(f);
    return ops;
}

Buffer& array(const std::string& name) {
    auto it = arrays.find(name);
    if (it == arrays.end()) fail("plan: no array %s", name.c_str());
    return it->second;
}

void read_file(const std::string& key, void* into, size_t bytes, const std::string& what) {
    std::string path = dir + "/in/" + key + ".bin";
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) fail("cannot open %s: %s", path.c_str(), strerror(errno));
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (size < 0 || (size_t)size != bytes) fail("%s has %zu bytes; %s holds %ld", what.c_str(), bytes, path.c_str(), size);
    if (bytes && fread(into, 1, bytes, f) != bytes) fail("cannot read %s", path.c_str());
    fclose(f);
}

const Kernel& find_kernel(const std::string& name) {
    for (int i = 0; i < n_kernels; ++i)
        if (name == kernels[i].name) return kernels[i];
    fail("kernel %s is not in the driver's table", name.c_str());
}

void launch(const Launch& l, const char* order, bool reverse, size_t index) {
    const Kernel& k = find_kernel(l.kernel);
    std::vector<Arg> args;
    std::vector<std::vector<unsigned char>> scalars(l.args.size());
    for (size_t i = 0; i < l.args.size(); ++i) {
        const auto& a = l.args[i];
        if (a.size() == 2 && a[0] == "A") {
            Buffer& b = array(a[1]);
            args.push_back(Arg{'A', 0, 0, b.data, b.bytes, a[1].c_str()});
        } else if (a.size() == 4 && a[0] == "S") {
            for (size_t h = 0; h + 1 < a[3].size(); h += 2)
                scalars[i].push_back((unsigned char)strtoul(a[3].substr(h, 2).c_str(), nullptr, 16));
            int bytes = (int)number(a[2], "scalar size");
            if ((int)scalars[i].size() != bytes) fail("plan: scalar %zu of %s has a wrong size", i + 1, k.name);
            args.push_back(Arg{'S', a[1][0], bytes, scalars[i].data(), (size_t)bytes, "scalar"});
        } else {
            fail("plan: argument %zu of %s is malformed", i + 1, k.name);
        }
    }
    active = &k;
    bound = k.bind(k.fn, args.data(), (int)args.size(), k.name);
    const dim3 g = l.grid, b = l.block;
    const size_t blocks = (size_t)g.x * g.y * g.z, threads = (size_t)b.x * b.y * b.z;
    current.grid_dim = g;
    current.block_dim = b;
    for (size_t n = 0; n < blocks; ++n) {
        const size_t linear = reverse ? blocks - 1 - n : n;
        current.block = uint3{(unsigned)(linear % g.x), (unsigned)(linear / g.x % g.y), (unsigned)(linear / g.x / g.y)};
        snprintf(where, sizeof where, "kernel %s (launch %zu), block (%u, %u, %u) of grid (%u, %u, %u), block size (%u, %u, %u), %s block order",
                 k.name, index, current.block.x, current.block.y, current.block.z, g.x, g.y, g.z, b.x, b.y, b.z,
                 order);
        for (const Region& r : shared) memset(r.address, 0xFF, r.bytes);
#if defined(BAT_EMU_TSAN)
        __tsan_release(&block_start);
#endif
        alarm(timeout_s);
        run_block(threads, reverse);
        alarm(0);
#if defined(BAT_EMU_TSAN)
        __tsan_acquire(&block_end);
#endif
    }
    snprintf(where, sizeof where, "the driver");
    k.release(bound);
    active = nullptr;
    bound = nullptr;
}

void execute(const std::vector<Op>& ops, const char* order) {
    const bool reverse = strcmp(order, "reverse") == 0;
    const std::string out = dir + "/" + order;
    if (mkdir(out.c_str(), 0777) != 0 && errno != EEXIST) fail("cannot create %s: %s", out.c_str(), strerror(errno));
    size_t launches = 0;
    for (const Op& op : ops) {
        const auto& w = op.words;
        if (w[0] == "array" && w.size() == 3) {
            Buffer b;
            b.bytes = number(w[2], "array size");
            if (posix_memalign(&b.data, 256, b.bytes ? b.bytes : 1) != 0) fail("out of memory for %s", w[1].c_str());
            arrays[w[1]] = b;
        } else if (w[0] == "fill" && w.size() == 3) {
            Buffer& b = array(w[1]);
            memset(b.data, (int)number(w[2], "fill byte"), b.bytes);
        } else if (w[0] == "load" && w.size() == 3) {
            Buffer& b = array(w[1]);
            read_file(w[2], b.data, b.bytes, "array " + w[1]);
        } else if (w[0] == "symbol" && w.size() == 3) {
            const Symbol* s = nullptr;
            for (int i = 0; i < n_symbols; ++i)
                if (w[1] == symbols[i].name) s = &symbols[i];
            if (!s) fail("__constant__ %s is not in the driver's table", w[1].c_str());
            read_file(w[2], s->address, s->bytes, "__constant__ " + w[1]);
        } else if (w[0] == "launch") {
            launch(op.launch, order, reverse, ++launches);
        } else if (w[0] == "save" && w.size() == 2) {
            Buffer& b = array(w[1]);
            const std::string path = out + "/" + w[1] + ".bin";
            FILE* f = fopen(path.c_str(), "wb");
            if (!f || (b.bytes && fwrite(b.data, 1, b.bytes, f) != b.bytes) || fclose(f) != 0)
                fail("cannot write %s", path.c_str());
        } else {
            fail("plan: unknown operation %s", w[0].c_str());
        }
    }
    for (auto& [name, b] : arrays) free(b.data);
    arrays.clear();
}

}  // namespace

void barrier(const char* file, int line) {
    Fiber* self = running;
    if (!self) fail("__syncthreads() outside a kernel");
    self->state = kWaiting;
    self->file = file;
    self->line = line;
#if defined(BAT_EMU_TSAN)
    __tsan_release(&barrier_sync);
#endif
    leave();
#if defined(BAT_EMU_TSAN)
    __tsan_acquire(&barrier_sync);
#endif
}

void fail(const char* format, ...) {
    char message[2048];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    fprintf(stderr, "bat-emu: %s\n", message);
    fflush(stderr);
    _exit(3);
}

int main(int argc, char** argv, const Kernel* table, int n_table, const Symbol* syms, int n_syms) {
    if (argc != 4) fail("usage: %s PLAN_DIR TIMEOUT_S ORDER[,ORDER]", argv[0]);
    dir = argv[1];
    timeout_s = (unsigned)number(argv[2], "timeout");
    kernels = table;
    n_kernels = n_table;
    symbols = syms;
    n_symbols = n_syms;
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(on_death);
    signal(SIGALRM, on_alarm);
#if defined(BAT_EMU_TSAN)
    scheduler_tsan = __tsan_get_current_fiber();
#endif
    const std::vector<Op> ops = read_plan();
    std::string orders = argv[3];
    for (char& c : orders)
        if (c == ',') c = ' ';
    for (const std::string& order : split(orders)) {
        if (order != "forward" && order != "reverse") fail("unknown block order %s", order.c_str());
        execute(ops, order.c_str());
    }
    return 0;
}

}  // namespace bat_emu
