// Package lda trains Latent Dirichlet Allocation by collapsed Gibbs
// sampling the way EZLDA does (Wang, Liu, Gaihre and Yu, "EZLDA: Efficient
// and Scalable LDA on GPUs", SC 2020): synchronously, with three-branch
// sampling, a hybrid word-topic matrix and hierarchical workload
// balancing, on the GPU (kernels/lda/lda.cu) and in Go (goroutines), which is
// both the GPU's exact reference and the workload's cpu device.
//
// # Model and iteration
//
// K topics, V words, documents d of L_d tokens; counts W[v][k] (tokens of
// word v with topic k), D[d][k] (tokens of document d with topic k),
// T[k] = Σ_v W[v][k]. An iteration samples every token (document d, word
// v) against the counts of the previous iteration, frozen (ESCA's
// synchronous update, as SaberLDA and EZLDA do; the token's own previous
// topic is not subtracted), from
//
//	p(k) ∝ (D[d][k] + α) · φ[v][k],   φ[v][k] = (W[v][k] + β) / (T[k] + V·β)
//
// and then rebuilds W, D and T from the new topics. Because no token sees
// another's new topic, the result does not depend on the order tokens are
// visited in, so the CPU and the GPU, given the same random draws, compute
// the same iteration exactly.
//
// # Random draws
//
// Token j (its index in the corpus's document order) draws, in iteration t
// (from 1), the 64-bit uniform r = Philox4x32-10(counter (j, t, 0, 0), key
// (seed low, seed high)) words 0 and 1; its initial topic is from
// iteration 0's word 0: floor(r0·K / 2^32).
//
// # Integer weights
//
// To make sums independent of their order (a GPU adds in parallel), a
// token's topic weights are integers, computed from float64 values that
// are identical on both sides (each a single IEEE operation, never fused):
//
//	denom[k] = T[k] + V·β
//	φ[v][k]  = (W[v][k] + β) / denom[k]
//	bound_v  = max(max over k with W[v][k] > 0 of φ[v][k], β / min_k denom[k])
//	s_v      = 32 - e, where bound_v = m·2^e, m in [1/2, 1)   (frexp)
//	φ̂[v][k]  = floor(φ[v][k] · 2^s_v)                 < 2^32
//	a[v][k]  = floor((α·φ[v][k]) · 2^s_v)             the α part
//	g_s[k]   = floor((α·(β/denom[k])) · 2^s)          a[v][k] where W[v][k] = 0
//	e[v][k]  = a[v][k] - g_s_v[k] >= 0                 zero where W[v][k] = 0
//
// and the weight of topic k for a token of word v in document d is
// D[d][k]·φ̂[v][k] + a[v][k] (the scale 2^s_v is the same for all of a
// token's topics, so it cancels). Every word with tokens has a max topic
// kmax_v: the k with W[v][k] > 0 of largest φ[v][k] (the smallest such k
// on ties).
//
// # The canonical layout
//
// A token's total weight Z is laid out as consecutive intervals, and the
// uniform picks x = floor(r·Z / 2^64) in [0, Z); the topic is that of the
// interval holding x:
//
//  1. M = D[d][kmax]·φ̂[v][kmax] + e[v][kmax]                    (kmax)
//  2. D[d][k]·φ̂[v][k] for k != kmax with D[d][k] > 0, by k      (doc branch, S)
//  3. e[v][k] for k != kmax with W[v][k] > 0, by k                (word branch)
//  4. g_s_v[k] for every k, by k                                  (shared branch)
//
// Intervals 3 and 4 are the two-branch sampler's α branch
// (Σ_k a[v][k] = Σ_k e[v][k] + Σ_k g[k]), split so that 4 is one prefix
// table per scale shared by every word and 3 is sparse in W; interval 2 is
// its document branch, sparse in D; interval 1 moves the max topic's part
// of both to the front. Every engine (the plain O(K) sampler, the
// two-branch and three-branch samplers over dense, hybrid and sparse
// word-topic rows, on goroutines or GPU threads) samples this layout, so
// they agree token by token.
//
// # The max-topic shortcut (three-branch sampling) is exact
//
// Before computing S, the three-branch sampler bounds the mass after the
// front interval:
//
//	R  = Σ_{k≠kmax} D[d][k]·φ̂[v][k] + (A_v - e[v][kmax]),  A_v = Σ_k a[v][k]
//	Rb = (L_d - D[d][kmax])·a2_v + (A_v - e[v][kmax])
//
// where a2_v >= max_{k≠kmax} φ̂[v][k] (the largest φ̂ of another topic
// with a token of v, or floor((β / min_k denom[k])·2^s_v), which no
// zero-count φ̂ exceeds, whichever is larger). Since Σ_{k≠kmax} D[d][k] =
// L_d - D[d][kmax] and every φ̂ counted is at most a2_v, R <= Rb, as
// integers, exactly. If x' = floor(r·(M+Rb)/2^64) < M, the token takes
// kmax and nothing else is computed. This is exact: Z = M + R <= M + Rb,
// and floor(r·Z/2^64) does not decrease as Z grows, so x = floor(r·Z/2^64)
// <= x' < M, and x falls in interval 1: the plain sampler, with the same
// r, picks kmax too. When the shortcut does not fire, the sampler computes
// Z and x exactly as the plain one does. EZLDA's bound is the same idea
// with M = a1·(b1 + α) and the word's remaining mass.
//
// All integers fit in 64 bits: φ̂ < 2^32, so a token's Z <= (L_d +
// α·K)·2^32, and Config.Validate and the corpus limits keep L_d and α·K
// below 2^30.
//
// # Log-likelihood
//
// The per-iteration figure is the collapsed joint log-likelihood
// log p(w, z | α, β) (Griffiths and Steyvers 2004) in nats (natural
// logarithm), divided by the number of tokens:
//
//	log p(w|z) = Σ_k [ Σ_v lnΓ(W[v][k] + β) - lnΓ(T[k] + V·β) ] + K·[lnΓ(V·β) - V·lnΓ(β)]
//	log p(z)   = Σ_d [ Σ_k lnΓ(D[d][k] + α) - lnΓ(L_d + K·α) ] + D·[lnΓ(K·α) - K·lnΓ(α)]
//
// computed over the nonzero counts only (a zero count adds lnΓ(β) -
// lnΓ(β) = 0 once rearranged).
//
// # Hybrid word-topic matrix, layout and balancing
//
// Words are relabelled by decreasing frequency; tokens are stored
// word-major (by new word id, then document order) with their document
// and their corpus index, and an inverted index gives each document's
// tokens' positions. Words with more than K tokens (by default; Format
// changes it) have dense W rows of K counts; the others have sparse rows
// of (topic, count) pairs sorted by topic, in room for as many pairs as
// the word has tokens (no more than K). D rows are sparse likewise; on the
// GPU each D entry is one 32-bit word, topic << s | count with s = 32 -
// bits(K-1), which halves what the sampler reads and bounds a document
// there to 2^s - 1 tokens (4 M at K=1024, 65,535 at K=65,536). Work is
// cut in units, EZLDA's hierarchy: a dense word's tokens in units of at
// most DenseUnit tokens, so that a very frequent word is spread over many
// blocks (goroutines), each holding the word's φ̂ row (in shared memory on
// the GPU); a medium word (a sparse word with more than max(32, K/16)
// tokens) in units of its own, its sparse row expanded into K φ̂ values
// for them; the small words' tokens in chunks of SparseChunk, handed out
// through an atomic counter, each token merging its word's short row with
// its document's.
package lda
