// w2v.cu compiled for the CPU (see shim.h), with a C entry point per kernel
// for emu.go. The hash below changes this file, and so rebuilds it, when
// w2v.cu changes (stamp.sh, run by go generate ./kernels/w2v).
// w2v.cu sha256: f7bf58b6a57ae2795d8b2ee1ff3380db4eafffb053d3df57c368e614232e5dfb
#include "shim.h"
#include "../../w2v.cu"

#include <cstring>
#include <memory>
#include <thread>
#include <vector>

// launch runs kernel over gx blocks of bx threads (a multiple of 32).
template <class F>
static void launch(unsigned gx, unsigned bx, unsigned long shared, F kernel)
{
    std::vector<unsigned char> mem(shared > 0 ? shared : 1);
    const unsigned warps = (bx + 31) / 32;
    std::vector<float> xchg(32 * warps);
    std::vector<unsigned> ixchg(32 * warps);
    for (unsigned x = 0; x < gx; x++) {
        std::memset(mem.data(), 0xff, mem.size());
        std::barrier<> block(bx);
        std::vector<std::unique_ptr<std::barrier<>>> warp;
        for (unsigned w = 0; w < warps; w++)
            warp.emplace_back(new std::barrier<>(32));
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < bx; t++) {
            threads.emplace_back([&, t] {
                threadIdx = {t, 0, 0};
                blockIdx = {x, 0, 0};
                blockDim = {bx, 1, 1};
                gridDim = {gx, 1, 1};
                emu_block_barrier = &block;
                emu_warp_barrier = warp[t / 32].get();
                emu_warp_xchg = xchg.data() + 32 * (t / 32);
                emu_warp_ixchg = ixchg.data() + 32 * (t / 32);
                emu_dynamic_shared = mem.data();
                kernel();
            });
        }
        for (auto &th : threads)
            th.join();
    }
}

#define GRID unsigned gx, unsigned bx, unsigned long sh
#define PARAMS                                                                                                    \
    float *syn0, float *syn1, const int *tok, const int *neg, const int *starts, const int *lens, const float *alphas, \
        const float *tab, int first, int nsent, int base, int d, int wf, int n, int fresh
#define ARGS syn0, syn1, tok, neg, starts, lens, alphas, tab, first, nsent, base, d, wf, n, fresh
#define DRAW_PARAMS                                                                                              \
    const int *corpus, const int *starts, const unsigned long long *thr, const int *table, int *tok, int *neg,   \
        int *lens, unsigned long long *kept, unsigned tableSize, int vocab, int eos, int n, unsigned seed0,      \
        unsigned seed1, unsigned epoch, int first, int nsent, int base
#define DRAW_ARGS corpus, starts, thr, table, tok, neg, lens, kept, tableSize, vocab, eos, n, seed0, seed1, epoch, first, nsent, base

#define WOMBAT_PARAMS float *syn0, float *syn1, const int *items, const int *windows, const float *tab, int nitems, int d, int hs
#define WOMBAT_ARGS syn0, syn1, items, windows, tab, nitems, d, hs

extern "C" {
int emu_wombat_tile_ints() { return wombat_tile_ints; }
int emu_wombat_warps() { return wombat_warps; }
void emu_wombat_tiles(GRID, WOMBAT_PARAMS) { launch(gx, bx, sh, [&] { wombat_tiles(WOMBAT_ARGS); }); }
void emu_wombat_pairs(GRID, WOMBAT_PARAMS) { launch(gx, bx, sh, [&] { wombat_pairs(WOMBAT_ARGS); }); }
void emu_wombat_windows(GRID, WOMBAT_PARAMS) { launch(gx, bx, sh, [&] { wombat_windows(WOMBAT_ARGS); }); }
void emu_wombat_negatives(GRID, int *windows, const int *starts, const int *table, int nwindows, unsigned tableSize,
                          int vocab, int eos, int n, unsigned seed0, unsigned seed1, unsigned epoch, unsigned base0,
                          unsigned base1)
{
    launch(gx, bx, sh, [&] {
        wombat_negatives(windows, starts, table, nwindows, tableSize, vocab, eos, n, seed0, seed1, epoch, base0, base1);
    });
}
int emu_w2v_warps() { return w2v_warps; }
int emu_w2v_exp_table() { return w2v_exp_table; }
int emu_w2v_neg_tries() { return w2v_neg_tries; }

void emu_w2v_draw(GRID, DRAW_PARAMS) { launch(gx, bx, sh, [&] { w2v_draw(DRAW_ARGS); }); }
void emu_w2v_sgns_warp1(GRID, PARAMS) { launch(gx, bx, sh, [&] { w2v_sgns_warp1(ARGS); }); }
void emu_w2v_sgns_warp2(GRID, PARAMS) { launch(gx, bx, sh, [&] { w2v_sgns_warp2(ARGS); }); }
void emu_w2v_sgns_warp4(GRID, PARAMS) { launch(gx, bx, sh, [&] { w2v_sgns_warp4(ARGS); }); }
void emu_w2v_sgns_warp8(GRID, PARAMS) { launch(gx, bx, sh, [&] { w2v_sgns_warp8(ARGS); }); }
void emu_w2v_sgns_block(GRID, PARAMS) { launch(gx, bx, sh, [&] { w2v_sgns_block(ARGS); }); }
}
