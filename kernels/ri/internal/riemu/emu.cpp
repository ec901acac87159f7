// ri.cu compiled for the CPU (see shim.h), with a C entry point per kernel
// for emu.go. The line below records ri.cu's hash, so that Go's build cache
// (blind to files included from outside the package) rebuilds this when
// ri.cu changes (stamp.sh, run by go generate ./kernels/ri).
// ri.cu sha256: ece13b137daf477fa91c2fde0c4106cb9cd52c81f895a3f971e7f94b2056fc32
#include "shim.h"
#include "../../ri.cu"

#include <cstdlib>
#include <iterator>
#include <ucontext.h>
#include <vector>

// launch runs kernel over a grid of gx x gy blocks of bx threads, blocks
// in order. Where the kernel synchronises, a block's threads are
// coroutines (ucontext) on this thread, run in turn up to the next
// __syncthreads, until all have returned.
template <class F>
static void launch(unsigned gx, unsigned gy, unsigned bx, unsigned long shared, bool barrier, F kernel)
{
    std::vector<unsigned char> mem(shared > 0 ? shared : 1);
    emu_dynamic_shared = mem.data();
    auto setIdx = [&](unsigned t, unsigned x, unsigned y) {
        threadIdx = {t, 0, 0};
        blockIdx = {x, y, 0};
        blockDim = {bx, 1, 1};
        gridDim = {gx, gy, 1};
    };
    if (!barrier) {
        for (unsigned y = 0; y < gy; y++)
            for (unsigned x = 0; x < gx; x++)
                for (unsigned t = 0; t < bx; t++) {
                    setIdx(t, x, y);
                    kernel();
                }
        return;
    }
    const size_t stackBytes = 256 << 10;
    std::vector<std::vector<unsigned char>> stacks(bx, std::vector<unsigned char>(stackBytes));
    std::vector<ucontext_t> co(bx);
    std::vector<char> done(bx);
    ucontext_t sched;
    emu_sched = &sched;
    static F *current;
    current = &kernel;
    for (unsigned y = 0; y < gy; y++) {
        for (unsigned x = 0; x < gx; x++) {
            for (unsigned t = 0; t < bx; t++) {
                getcontext(&co[t]);
                co[t].uc_stack.ss_sp = stacks[t].data();
                co[t].uc_stack.ss_size = stackBytes;
                co[t].uc_link = &sched;
                makecontext(&co[t], (void (*)())+[] { (*current)(); emu_returned = true; }, 0);
                done[t] = 0;
            }
            std::fill(std::begin(emu_bar_count), std::end(emu_bar_count), 0u);
            for (unsigned live = bx; live > 0;) {
                const unsigned long events = emu_events;
                for (unsigned t = 0; t < bx; t++) {
                    if (done[t])
                        continue;
                    setIdx(t, x, y);
                    emu_self = &co[t];
                    emu_returned = false;
                    swapcontext(&sched, &co[t]);
                    if (emu_returned) {
                        // A thread returning while others wait at
                        // __syncthreads is undefined on a GPU: stop loudly.
                        if (emu_bar_count[0] != 0)
                            abort();
                        done[t] = 1;
                        live--;
                        emu_events++;
                    }
                }
                // Every live thread waited at a barrier that never filled.
                if (live > 0 && emu_events == events)
                    abort();
            }
        }
    }
}

#define GRID unsigned gx, unsigned gy, unsigned bx, unsigned long sh

extern "C" {
int emu_ri_threads() { return ri_threads; }
int emu_ri_chunk() { return ri_chunk; }
int emu_ri_hot_list() { return ri_hot_list; }
int emu_ri_hot_batch() { return ri_hot_batch; }

void emu_ri_index_vectors(GRID, const unsigned char *bytes, const int *offsets, int n, int docs,
                          unsigned long long seed, int k, int d, int *out)
{
    launch(gx, gy, bx, sh, false, [&] { ri_index_vectors(bytes, offsets, n, docs, seed, k, d, out); });
}

void emu_ri_tv_block(GRID, const int *units, const int *list, const int *tok, const int *idx, int k,
                     int d, int w, int permute, int window, int *rows)
{
    launch(gx, gy, bx, sh, true, [&] { ri_tv_block(units, list, tok, idx, k, d, w, permute, window, rows); });
}

void emu_ri_tv_warp(GRID, const int *units, const int *list, const int *tok, const int *idx, int k,
                    int d, int w, int permute, int window, int *rows)
{
    launch(gx, gy, bx, sh, true, [&] { ri_tv_warp(units, list, tok, idx, k, d, w, permute, window, rows); });
}

void emu_ri_tv_thread(GRID, const int *units, int nunits, const int *list, const int *tok,
                      const int *idx, int k, int d, int w, int permute, int window, int *rows)
{
    launch(gx, gy, bx, sh, false,
           [&] { ri_tv_thread(units, nunits, list, tok, idx, k, d, w, permute, window, rows); });
}

void emu_ri_combine_i32(GRID, const int *comb, int d, int *rows)
{
    launch(gx, gy, bx, sh, false, [&] { ri_combine_i32(comb, d, rows); });
}

void emu_ri_combine_f32(GRID, const int *comb, int d, float *rows)
{
    launch(gx, gy, bx, sh, false, [&] { ri_combine_f32(comb, d, rows); });
}

void emu_ri_retrain_window(GRID, const int *units, const int *occ, const int *tok, const float *seeds,
                           int d, int w, int permute, float *rows)
{
    launch(gx, gy, bx, sh, false, [&] { ri_retrain_window(units, occ, tok, seeds, d, w, permute, rows); });
}

#define HOT(name)                                                                                          \
    void emu_##name(GRID, const int *units, int nunits, const int *occ, const int *tok, const float *seeds,  \
                    int d, int w, int hot, int stagger, int *queue, float *rows)                          \
    {                                                                                                      \
        launch(gx, gy, bx, sh, true,                                                                       \
               [&] { name(units, nunits, occ, tok, seeds, d, w, hot, stagger, queue, rows); });            \
    }
HOT(ri_retrain_hot)
HOT(ri_retrain_hot64)

void emu_ri_gather(GRID, const int *units, const int *list, const float *src, int d, float *rows)
{
    launch(gx, gy, bx, sh, false, [&] { ri_gather(units, list, src, d, rows); });
}

void emu_ri_normalise_i32(GRID, const int *x, int d, float *out)
{
    launch(gx, gy, bx, sh, true, [&] { ri_normalise_i32(x, d, out); });
}

void emu_ri_normalise_f32(GRID, const float *x, int d, float *out)
{
    launch(gx, gy, bx, sh, true, [&] { ri_normalise_f32(x, d, out); });
}

void emu_ri_row_sums(GRID, const int *x, int d, long long *out)
{
    launch(gx, gy, bx, sh, true, [&] { ri_row_sums(x, d, out); });
}
}
