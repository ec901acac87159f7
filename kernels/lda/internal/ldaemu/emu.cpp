// lda.cu compiled for the CPU (see shim.h), with one generic entry point:
// emu_launch runs a kernel by name with its parameters as cuLaunchKernel
// takes them (an array of pointers to the values), after checking their
// number and sizes against the kernel's C++ signature.
// lda.cu sha256: 063c02ca358f0158017723cd90b48f62d9be71b1def06ca58e62036bdf4e8dd5
#include "shim.h"
#include "../../lda.cu"

#include <array>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

template <class... A> static constexpr std::array<unsigned long, sizeof...(A)> emu_sizes(void (*)(A...))
{
    return {sizeof(A)...};
}

template <class... A, unsigned long... I>
static void emu_call(void (*f)(A...), void **args, std::integer_sequence<unsigned long, I...>)
{
    f(*(A *)args[I]...);
}

template <class... A> static void emu_invoke(void (*f)(A...), void **args)
{
    emu_call(f, args, std::make_integer_sequence<unsigned long, sizeof...(A)>{});
}

struct emu_kernel {
    const char *name;
    bool syncs;
    const unsigned long *sizes;
    unsigned long nargs;
    void (*run)(void **args);
};

// The sizes arrays must outlive the table: keep them in statics.
template <auto F> struct emu_sig {
    static constexpr auto sizes = emu_sizes(F);
};
#define EMU_KERNEL(fn, syncs) \
    {#fn, syncs, emu_sig<fn>::sizes.data(), emu_sig<fn>::sizes.size(), [](void **a) { emu_invoke(fn, a); }}

static const emu_kernel emu_kernels[] = {
    EMU_KERNEL(lda_init, false),         EMU_KERNEL(lda_topics, true),        EMU_KERNEL(lda_tables, true),
    EMU_KERNEL(lda_prep_dense, true),    EMU_KERNEL(lda_prep_sparse, false),  EMU_KERNEL(lda_sample_dense, true),
    EMU_KERNEL(lda_sample_sparse, true), EMU_KERNEL(lda_count_topics, true),  EMU_KERNEL(lda_count_dense, true),
    EMU_KERNEL(lda_rows_small, false),   EMU_KERNEL(lda_rows_large, true),    EMU_KERNEL(lda_ll_dense, true),
    EMU_KERNEL(lda_ll_rows, true),       EMU_KERNEL(lda_check_dense, true),   EMU_KERNEL(lda_check_rows, false),
    EMU_KERNEL(lda_check_topics, true),  EMU_KERNEL(lda_philox_kat, false),
};

extern "C" {

// emu_global reads a module constant; -1 when there is none.
int emu_global(const char *name, int *value)
{
    if (!strcmp(name, "lda_threads"))
        *value = lda_threads;
    else if (!strcmp(name, "lda_small_row"))
        *value = lda_small_row;
    else if (!strcmp(name, "lda_scales"))
        *value = lda_scales;
    else
        return -1;
    return 0;
}

// emu_launch returns 0, -1 for an unknown kernel, or -2-i when argument
// i (or the argument count, i = nargs) does not fit the kernel.
int emu_launch(const char *name, unsigned gx, unsigned bx, unsigned long shared, void **args,
               const unsigned long *sizes, unsigned long nargs)
{
    const emu_kernel *k = nullptr;
    for (auto &e : emu_kernels)
        if (!strcmp(e.name, name))
            k = &e;
    if (!k)
        return -1;
    if (nargs != k->nargs)
        return -2 - (int)nargs;
    for (unsigned long i = 0; i < nargs; i++)
        if (sizes[i] != k->sizes[i])
            return -2 - (int)i;
    std::vector<unsigned char> mem(shared > 0 ? shared : 1);
    emu_dynamic_shared = mem.data();
    const unsigned warps = (bx + 31) / 32;
    std::vector<unsigned long long> xchg(32 * warps);
    for (unsigned x = 0; x < gx; x++) {
        std::vector<std::unique_ptr<std::barrier<>>> warp;
        auto run = [&](unsigned t, std::barrier<> *bar) {
            threadIdx = {t, 0, 0};
            blockIdx = {x, 0, 0};
            blockDim = {bx, 1, 1};
            gridDim = {gx, 1, 1};
            emu_barrier = bar;
            emu_warp_barrier = bar ? warp[t / 32].get() : nullptr;
            emu_warp_xchg = xchg.data() + 32 * (t / 32);
            k->run(args);
        };
        if (!k->syncs) {
            for (unsigned t = 0; t < bx; t++)
                run(t, nullptr);
            continue;
        }
        std::barrier<> bar(bx);
        for (unsigned w = 0; w < warps; w++)
            warp.emplace_back(new std::barrier<>(32));
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < bx; t++)
            threads.emplace_back(run, t, &bar);
        for (auto &th : threads)
            th.join();
    }
    return 0;
}
}
