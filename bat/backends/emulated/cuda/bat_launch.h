// Kernel and symbol tables of a generated emulation driver (bat/backends/emulated/build.py).
//
// A driver includes bat_cuda.h, this file and then the benchmark's kernel.cu (so the
// kernel's macros cannot change the text here), then lists its kernels by name: C++ deduces
// every parameter type from the kernel's function pointer, so the runner's arguments (device
// arrays and typed scalars, read from the plan) are checked against the kernel's own
// signature when a launch is bound. Names here avoid short identifiers, which -D macros of a
// search space (M, N, K, ...) might replace.
#ifndef BAT_LAUNCH_H
#define BAT_LAUNCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tuple>
#include <type_traits>
#include <utility>

namespace bat_emu {

// One launch argument from the plan: an array (kind 'A') or a scalar (kind 'S') whose type
// is 'f' (floating point), 'i' (signed) or 'u' (unsigned) of `bytes` bytes.
struct Arg {
    char kind;
    char type;
    int bytes;
    void* data;
    size_t nbytes;
    const char* name;
};

[[noreturn]] void fail(const char* format, ...) __attribute__((format(printf, 1, 2)));

struct Kernel {
    const char* name;
    void (*fn)();  // the kernel, type-erased
    void* (*bind)(void (*fn)(), const Arg* args, int count, const char* name);
    void (*call)(void* bound);
    void (*release)(void* bound);
};

struct Symbol {
    const char* name;
    void* address;
    size_t bytes;
};

template <class Param>
Param convert(const Arg& arg, int index, const char* kernel) {
    if constexpr (std::is_pointer_v<Param>) {
        using Elem = std::remove_cv_t<std::remove_pointer_t<Param>>;
        if (arg.kind != 'A')
            fail("%s: parameter %d is a pointer; the runner passes a scalar", kernel, index + 1);
        if constexpr (!std::is_void_v<Elem>) {
            if (arg.nbytes % sizeof(Elem) != 0)
                fail("%s: parameter %d points to %zu-byte elements; array %s has %zu bytes", kernel,
                     index + 1, sizeof(Elem), arg.name, arg.nbytes);
            if (reinterpret_cast<uintptr_t>(arg.data) % alignof(Elem) != 0)
                fail("%s: array %s is not aligned for parameter %d", kernel, arg.name, index + 1);
        }
        return reinterpret_cast<Param>(arg.data);
    } else if constexpr (std::is_arithmetic_v<Param>) {
        const char want = std::is_floating_point_v<Param> ? 'f' : (std::is_signed_v<Param> ? 'i' : 'u');
        if (arg.kind != 'S')
            fail("%s: parameter %d is a scalar; the runner passes array %s", kernel, index + 1, arg.name);
        if (arg.type != want || arg.bytes != (int)sizeof(Param))
            fail("%s: parameter %d is %c%d; the runner passes %c%d", kernel, index + 1, want,
                 (int)(8 * sizeof(Param)), arg.type, 8 * arg.bytes);
        Param value;
        memcpy(&value, arg.data, sizeof(Param));
        return value;
    } else {
        static_assert(std::is_pointer_v<Param> || std::is_arithmetic_v<Param>,
                      "the emulated backend passes only pointers and arithmetic scalars to kernels");
    }
}

template <class... Params>
struct Binder {
    using Entry = void (*)(Params...);
    struct Bound {
        Entry entry;
        std::tuple<Params...> values;
    };

    template <size_t... Index>
    static void* make(Entry entry, const Arg* args, const char* name, std::index_sequence<Index...>) {
        return new Bound{entry, std::tuple<Params...>(convert<Params>(args[Index], (int)Index, name)...)};
    }
    static void* bind(void (*entry)(), const Arg* args, int count, const char* name) {
        if (count != (int)sizeof...(Params))
            fail("%s takes %d parameters; the runner passes %d", name, (int)sizeof...(Params), count);
        return make(reinterpret_cast<Entry>(entry), args, name, std::index_sequence_for<Params...>{});
    }
    static void call(void* bound) {
        Bound* state = static_cast<Bound*>(bound);
        std::apply(state->entry, state->values);
    }
    static void release(void* bound) { delete static_cast<Bound*>(bound); }
};

template <class... Params>
Kernel kernel(const char* name, void (*entry)(Params...)) {
    return Kernel{name, reinterpret_cast<void (*)()>(entry), &Binder<Params...>::bind, &Binder<Params...>::call,
                  &Binder<Params...>::release};
}

template <class Variable>
Symbol symbol(const char* name, Variable& variable) {
    return Symbol{name, static_cast<void*>(&variable), sizeof(Variable)};
}

int main(int argc, char** argv, const Kernel* kernels, int n_kernels, const Symbol* symbols, int n_symbols);

}  // namespace bat_emu

#endif  // BAT_LAUNCH_H
