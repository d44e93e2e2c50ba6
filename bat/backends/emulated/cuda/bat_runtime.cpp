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
// order); the threads of a block are fibers (bat_fibers.cpp). A block making no progress for
// TIMEOUT_S seconds (a deadlock or an endless loop) is an error naming the kernel and block.
// Shared memory (the kernel's static locals, listed in the plan from the driver's symbol
// table) is filled with 0xFF bytes before every block; so is a launch's dynamic shared memory
// (its bytes are the launch line's last word), an array of its exact size for the whole launch
// (bat_emu::dynamic_shared points to it; the HIP layer's HIP_DYNAMIC_SHARED reads it). A sanitizer's report is followed by a
// line saying which kernel, block and thread it came from.
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "bat_fibers.h"

extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));
extern "C" void* __asan_region_is_poisoned(void* beg, size_t size) __attribute__((weak));

// The shared-memory offsets of the plan are relative to this variable's address.
extern "C" {
int bat_emu_anchor = 0;
}

namespace bat_emu {

char where[512] = "the driver";
void* dynamic_shared = nullptr;

namespace {

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

// -- the plan ---------------------------------------------------------------------------------
struct Region {
    char* address;
    size_t bytes;
};

struct Launch {
    std::string kernel;
    dim3 grid, block;
    size_t shared_bytes = 0;  // dynamic shared memory per block
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
            if (w.size() != 8 && w.size() != 9) fail("plan: launch needs a kernel, a grid, a block [and shared bytes]");
            if (w.size() == 9) op.launch.shared_bytes = number(w[8], "shared bytes");
            op.launch.kernel = w[1];
            op.launch.grid = dim3((unsigned)number(w[2], "grid"), (unsigned)number(w[3], "grid"),
                                  (unsigned)number(w[4], "grid"));
            op.launch.block = dim3((unsigned)number(w[5], "block"), (unsigned)number(w[6], "block"),
                                   (unsigned)number(w[7], "block"));
        } else if (w[0] == "shared") {
            if (w.size() < 3) fail("plan: shared needs an offset and a size");
            long long offset = strtoll(w[1].c_str(), nullptr, 10);
            Region r{reinterpret_cast<char*>(&bat_emu_anchor) + offset, number(w[2], "size")};
            // clang's AddressSanitizer pads an instrumented global with a poisoned redzone that its
            // symbol's size includes (GCC's does not): the variable ends where the poison starts
            if (__asan_region_is_poisoned) {
                if (void* poisoned = __asan_region_is_poisoned(r.address, r.bytes))
                    r.bytes = static_cast<size_t>(static_cast<char*>(poisoned) - r.address);
            }
            shared.push_back(r);
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
    void* bound = k.bind(k.fn, args.data(), (int)args.size(), k.name);
    const dim3 g = l.grid, b = l.block;
    const size_t blocks = (size_t)g.x * g.y * g.z, threads = (size_t)b.x * b.y * b.z;
    current.grid_dim = g;
    current.block_dim = b;
    if (l.shared_bytes && posix_memalign(&dynamic_shared, 256, l.shared_bytes) != 0)
        fail("out of memory for %zu bytes of dynamic shared memory", l.shared_bytes);
    for (size_t n = 0; n < blocks; ++n) {
        const size_t linear = reverse ? blocks - 1 - n : n;
        current.block = uint3{(unsigned)(linear % g.x), (unsigned)(linear / g.x % g.y), (unsigned)(linear / g.x / g.y)};
        snprintf(where, sizeof where, "kernel %s (launch %zu), block (%u, %u, %u) of grid (%u, %u, %u), block size (%u, %u, %u), %s block order",
                 k.name, index, current.block.x, current.block.y, current.block.z, g.x, g.y, g.z, b.x, b.y, b.z,
                 order);
        for (const Region& r : shared) memset(r.address, 0xFF, r.bytes);
        if (dynamic_shared) memset(dynamic_shared, 0xFF, l.shared_bytes);
        alarm(timeout_s);
        run_block(&k, bound, threads, reverse);
        alarm(0);
    }
    snprintf(where, sizeof where, "the driver");
    k.release(bound);
    free(dynamic_shared);
    dynamic_shared = nullptr;
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
