// The switchable twin of step 71 (older_queue_under_8_pairs, the sm_90a branch's end):
// kernels/variants/71_older_queue_under_8_pairs.cu with knock-out switches. Each FA_* macro below at its
// default (1) keeps one earlier step's idea; 0 takes it out, for the knock-out half of the ablation
// (the manifest's [[switch]] tables). lab builds a configuration with defines from this file and
// the step as written from the step's own, so that a neighbour diff in kernels/variants/ shows one
// idea; at its defaults this file compiles to the step's SASS byte for byte
// (tests/test_knockouts.py checks it). Every configuration takes what the step takes: fp16 and
// bf16, K/V heads any divisor of the query heads.
//
// Step 33 - +three CTAs per SM at D = 64: a D = 64 call shorter than 8192 keys whose grid gives every
// SM ten 64-row work tiles or more takes fa::HopperThreeCtaTileD64 (three CTAs of one producer and
// one consumer warpgroup an SM, 128-key tiles in two stages, S as N = 64 wgmmas, the mask as one
// bound per row) instead of two CTAs an SM. Hypothesis: a third consumer warp per SM sub-partition
// hides more of the softmax's and the waits' fixed latencies. Predicted: 1.01x-1.04x over +192-key
// K/V tiles at (4, 16, 4096, 64), 1.05x-1.12x at the sweep's S = 256-2048 (D = 64).
//
// Step 34 - +one ring hand-back a warp at D = 64: the consumers give a K/V stage back with one
// mbarrier arrival a warp (lane 0 after __syncwarp) instead of one a thread; the ring's empty
// barriers count consumer warps at D = 64. Hypothesis: 4 arrivals instead of 128 at the end of each
// short D = 64 key-tile turn take barrier traffic off the consumers' critical path. Predicted:
// 1.005x-1.02x over +three CTAs per SM at (4, 16, 4096, 64) and the canonical S = 512 shapes.
//
// Step 35 - +work tiles from a queue, longest first: where the launch allows (fa/tile_queue.cuh), the
// producer thread takes the CTA's work tiles from a counter in global memory, heaviest first in
// sections of heads whose K/V fit the L2, and hands them to the consumers through shared memory;
// elsewhere the static list as before. Hypothesis: a static list ends the launch with whole work
// items left over (3.1 % after the mean CTA at long causal D = 128 grids); from the counter the last
// tiles are the lightest. Predicted: 1.01x-1.03x over +one ring hand-back a warp where the launch takes
// the counter (grouped-query causal shapes of the models set), unchanged elsewhere.
//
// Step 36 - +wgmma descriptors in uniform registers: one descriptor a tile (Q's, each K and V stage's),
// read through a shuffle so the compiler knows it is warp-uniform, each k-step a compile-time offset
// from it (fa::wgmma::KMajorTile, MnMajorTile). Hypothesis: step 35 rebuilt every wgmma's descriptor
// in vector registers and moved it to uniform ones, 107 of its 142 extra instructions a warp per 128
// keys against FA3 at D = 128. Predicted: 1.01x-1.05x over +work tiles from a queue at the long D = 128
// shapes, 1.00x-1.03x at D = 64.
//
// Step 48 - +unmasked tiles in a loop of their own: the K/V tiles that need no mask for any row of a
// warpgroup run in a loop whose softmax has no visibility test, the tiles crossing the end or the
// diagonal in a second loop after it, instead of one loop body holding both softmaxes and choosing per
// tile (the three-CTA tile keeps one loop). Hypothesis: the choice costs every tile its branch and the
// masked path's registers; split, step 36's D = 128 loop is one path of 476 instructions a warp per 128
// keys instead of three (493-767). Predicted: 1.01x-1.05x over +wgmma descriptors in uniform registers at
// the long D = 128 shapes, 1.00x-1.02x at D = 64.
//
// Step 49 - +three consumer warpgroups at D = 64: a non-causal D = 64 call of 2048 keys or more whose grid
// gives every SM eight 192-row work tiles or more takes fa::HopperThreeWgTileD64, one CTA an SM with three
// consumer warpgroups, 192 query rows sharing each K/V tile (FlashAttention-3's 192 rows). Hypothesis:
// step 48's CTAs of 64 rows move three times the K/V bytes through L2 of a 192-row tile. Predicted:
// 1.05x-1.12x over +unmasked tiles in a loop of their own at (4, 16, 4096, 64), unchanged elsewhere.
//
// Step 50 - +pipeline state at D = 128: at D = 128 the consumers carry the K/V ring's next stage
// and its parity a slot at a time (FlashAttention-3's PipelineState) and hand a stage back by its index,
// instead of slot % KV_STAGES and slot / KV_STAGES (a division by 3) at every acquire and release.
// Hypothesis: the division sits between the loop counter and the barrier wait that gates each tile's S.
// Predicted: 1.01x-1.03x over +three consumer warpgroups at D = 64 at the long D = 128 shapes.
//
// Step 51 - +three consumer warpgroups for causal D = 64: a causal D = 64 call of 4096 keys or more whose
// heavy-light pairs of 192-row tiles fill the launch's last round at least 95 % takes the three-warpgroup tile
// (fa::takes_three_wg_tile_causal_d64). Hypothesis: 192 rows a K/V tile move a third of the K/V bytes through L2,
// as at non-causal calls; causal tiles differ in length, so the static pairs must fill the last round.
// Predicted: 1.04x-1.10x over +pipeline state at D = 128 at the models set's S = 8192 D = 64 rows.
//
// Step 52 - +three consumer warpgroups from the counter for causal D = 64: the causal D = 64 calls of 4096 keys
// or more that step 51 leaves (the pairs would fill the last round less than 95 %) take the three-warpgroup tile
// with its work from step 35's counter, heaviest first over one section of every head, where the launch has four
// 192-row tiles an SM (fa::takes_three_wg_queue_tile_causal_d64; a consumer 160 registers). Hypothesis: the static
// pairs' part-empty last round, not the tile, is what step 51's rule avoided (SMs active 0.880 of the busiest's
// cycles, from the counter 0.982). Predicted: 1.02x-1.05x over +three consumer warpgroups for causal D = 64 at
// (4, 16, 4096, 64, causal).
//
// Step 53 - +two K/V stages for the three-warpgroup tile: the D = 64 calls that take the three-warpgroup tile from
// the static list (steps 49 and 51) run its K/V ring at two stages instead of three (FA_TILE_STAGES_D64_THREE_WGS);
// the counter's (step 52) keeps three. Hypothesis: the static list's equal tiles need no third stage, and with it
// the warps stall more on a full MIO queue (0.71 warps an issue against 0.56 at (4, 16, 4096, 64)) and the L2
// serves 10.6 % more read sectors. Predicted: 1.01x-1.02x over +three consumer warpgroups from the counter for
// causal D = 64 at (4, 16, 4096, 64).
//
// Step 58 - +finite row max at D = 64: in a D = 64 kernel's unmasked key tiles, each row's max starts from the row's
// first score instead of -inf and the exponent's base takes no -inf guard (fa::mma_online_softmax's FINITE_MAX);
// D = 128 keeps the guard (0.980x-0.986x with it). Hypothesis: an FSETP + FSEL a row half and an FMNMX a row fewer on
// the D = 64 loop's issue-bound softmax. Predicted: 1.002x-1.03x over +two K/V stages for the three-warpgroup tile,
// about 1.03x at (4, 16, 512, 64, causal); unchanged at D = 128.
//
// Step 59 - +the counter's D = 64 tile overlapped: the three-warpgroup D = 64 kernel that takes its work tiles from the
// counter (kThreeWgsQueue) issues S_{j+1} before P_j V_j and runs its softmax while P_j V_j computes (step 11's
// overlap), masking with one bound per row so that it fits without spills; every other D = 64 kernel stays in series.
// Hypothesis: the serial loop's waits on S and on P_j V_j were most of causal D = 64's excess over FA3. Predicted:
// 1.005x-1.015x over +finite row max at D = 64 where a causal D = 64 launch takes the counter; unchanged elsewhere.
//
// Step 60 - +one loop for the short D = 64 tile's causal calls: a causal call that takes the short D = 64 tile runs a
// kernel of its own whose key tiles go through one loop, the mask decided per warp; its non-causal calls keep step
// 48's two loops (the choice made on the host). Hypothesis: step 48's second loop cost those causal calls what it
// bought the non-causal ones (why is not known: not the instruction fetch; the fixed-latency waits fall). Predicted:
// 1.01x-1.06x over +the counter's D = 64 tile overlapped at those causal calls up to S = 1024; unchanged elsewhere.
//
// Step 61 - +O rescaled only where a row's max moved by more than 2^8: in the overlapped loops (D = 128's ping-pong and
// the counter's D = 64 tile) a row's running max moves only where a key tile raises it by more than 2^8
// (fa::mma_online_softmax's LAZY_MAX, FlashAttention-4's conditional rescale), and after P V's wait one warp vote skips
// O's rescale where no row of the warp moved, P packed before it. Hypothesis: O's rescale FMULs, one block at the
// loop's end, keep the D = 128 loop behind FlashAttention-3. Predicted: 1.005x-1.03x over +one loop for the short
// D = 64 tile's causal calls at (4, 16, 4096, 128), 1.01x-1.03x at the counter's causal D = 64 calls.
//
// Step 62 - +O rescaled while S computes: in the overlapped loops the last tile's warp vote and O's rescale move to
// between S_j's issue and P_{j-1} V_{j-1}'s (FlashAttention-3's place for the rescale), and step 61's lazy max takes
// the form of one FMNMX, m = max(m, tile max - 2^8's worth) (fa::mma_online_softmax's SHIFTED_MAX), alpha exactly 1
// where it stays. Hypothesis: the vote's branch at the step's end and the selected alpha (ptxas then issues every max
// first) keep step 61 3.7-4.7 % behind its no-rescale bound. Predicted: 1.01x-1.035x over +O rescaled only where a
// row's max moved by more than 2^8 at (4, 16, 4096, 128) and the other long D = 128 rows, 0.975x-0.995x at
// (8, 16, 512, 128).
//
// Step 63 - +the counter's tile for every long causal D = 64 call: a causal D = 64 call of S >= 4096 with more than two
// 192-row tiles an SM takes step 52's tile from the counter (overlapped since step 59), whatever step 51's pairs would
// fill (fa::takes_counter_tile_causal_d64), and takes the counter from two tiles a CTA; the calls it leaves keep step
// 62's tiles. Hypothesis: step 51's rule was read off step 52's tile in series; overlapped, it runs the
// calls step 51 kept 4-8 % faster. Predicted: 1.04x-1.09x over +O rescaled while S computes at the models set's
// causal D = 64 rows of S = 8192; unchanged at the ladder's shapes.
//
// Step 64 - +the counter's second round mirrored: under three tiles a CTA, the counter's three-warpgroup tile hands
// each CTA's second tile out mirrored (fa::TileQueue::second_mirrored, the heaviest first tile with the lightest
// second one), and causal D = 64 calls take it from two 192-row tiles an SM, inclusive
// (fa::takes_mirrored_counter_tile_causal_d64). Hypothesis: step 35's second tile, c + grid, puts the heavy with the
// heavy; a simulation of the launch's end (data/explorations/2026-12-04-counter-second-tile) puts the mirror 1.06x-1.38x
// ahead from 2 to 2.61 tiles a CTA.
//
// Step 65 - +FlashAttention-3's sections for long causal D = 128 calls: a causal D = 128 call of 4096 keys or more
// takes the counter in sections of 32 MB of K/V from three tiles a CTA (fa::takes_fa3_sections_causal_d128) instead
// of two fifths of the L2 and four, which left those calls on step 27's static pairs. Hypothesis: the pairs' last
// round is a quarter empty; from the counter the launch ends balanced. Predicted: 1.01x-1.025x over +the counter's
// second round mirrored at the long causal D = 128 rows, level at (4, 16, 4096, 128, causal) and elsewhere.
//
// Step 66 - +non-causal D = 128 kernels without causal paths: non-causal D = 128 calls launch kernels instantiated
// with NON_CAUSAL (shape.causal the constant false, every causal path folded away), as FA3 compiles Is_causal = false
// apart; causal calls keep step 65's kernels. Hypothesis: ptxas schedules the overlapped loop for the code around
// it (found with step 67: without the causal prologue's branch on each warp's row the K/V ring's state and the wgmma
// descriptors stay in uniform registers). Predicted: 1.015x-1.040x over +FA3's sections at the non-causal D = 128
// rows, 1.000x at causal and D = 64 shapes.
//
// Step 67 - +each warp's first row known warp-uniform at D = 128: the D = 128 kernels read each warp's first row
// through a shuffle from lane 0, so that the compiler knows it warp-uniform. Hypothesis: the causal prologue's branch
// on that row (which the compiler took as divergent) left the K/V ring's stage and parity in vector registers and cost
// each key tile two SHFL.IDX + R2UR pairs before its wgmmas; step 66's non-causal kernels, without the branch, keep
// them uniform. Predicted: 1.015x-1.035x over +non-causal D = 128 kernels at the long causal D = 128 rows, 1.000x at
// non-causal D = 128 and D = 64 shapes (D = 64 lost with it: it keeps the plain row).
//
// Step 68 - +FlashAttention-3's sections for the counter's causal D = 64 tile: a launch of the counter's
// three-warpgroup tile takes its tiles in sections of 32 MB of K/V (fa::launch_from_queue's FA3_SECTIONS_D64) instead
// of one section of every head. Hypothesis: every head at once, the CTAs read all of the call's K/V at a time, more
// than the L2 at (4, 16, 4096, 64, causal), and moved 3.0 times the inputs and output through DRAM, which costs clock
// under the power cap. Predicted: 1.008x-1.030x over +each warp's first row known warp-uniform at D = 128 at (4, 16,
// 4096, 64, causal), DRAM throughput down by half, 1.000x where the call's K/V is at most 32 MB.
//
// Step 69 - +the counter's tile for causal D = 64 calls from 2048 keys: the counter's three-warpgroup tile (two
// 192-row tiles an SM or more) takes causal D = 64 calls from 2048 keys (FA_TILE_OVERLAPPED_CAUSAL_MIN_S_D64,
// fa::hopper_tile_kind's OVERLAPPED_MIN_S) instead of 4096. Hypothesis: 4096 was set before step 59 overlapped those
// tiles; at 2048 keys the three CTAs of 64 rows read each K/V tile for a third of the rows. Predicted: 1.000x at the
// ladder shapes, 1.02x-1.06x at the models set's S = 2048 D = 64 rows.
//
// Step 71 - +the older queue for causal D = 128 calls of 4096-8191 keys that it balances: such a call that step 65's
// rule gives FlashAttention-3's sections keeps the older queue (two fifths of the L2, the counter from four tiles a
// CTA) where that queue takes the counter or walks at most 8 static pairs a CTA (fa::keeps_older_queue). Hypothesis:
// step 65's rule was chosen on an H200; on three H100s the older queue ran 1.008x-1.034x there with 1.9-7.8 pairs a
// CTA and 1.014x-1.020x where it took the counter, 0.982x-1.003x with more pairs. Predicted: 0.997x-1.015x over +the
// counter's tile for causal D = 64 calls from 2048 keys at (4, 16, 4096, 128, causal), 1.000x at the other ladder
// shapes.
#include "fa/common.cuh"
#include "fa/mma_attention.cuh"
#include "fa/pipeline.cuh"
#include "fa/softmax.cuh"
#include "fa/tile_queue.cuh"
#include "fa/tile_scheduler.cuh"
#include "fa/tile_size.cuh"
#include "fa/tma.cuh"
#include "fa/wgmma_attention.cuh"

#include <type_traits>

// Knock-out switches. Step 2's __restrict__ is no switch: without it this kernel compiles to the
// same SASS (every input is read by TMA, and O is only stored). Step 28's bf16 and grouped K/V
// are the call's inputs, no switch either.
#ifndef FA_OLDER_QUEUE_UNDER_8_PAIRS  // step 71: 0 -> causal D = 128 calls of 4096-8191 keys take step 65's sections
#define FA_OLDER_QUEUE_UNDER_8_PAIRS 1  // wherever its rule does, as before step 71
#endif
#ifndef FA_COUNTER_TILE_FROM_2K_D64  // step 69: 0 -> causal D = 64 calls take the counter's tile from 4096 keys again
#define FA_COUNTER_TILE_FROM_2K_D64 1  // (FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64), as before step 69
#endif
#ifndef FA_FA3_SECTIONS_COUNTER_D64  // step 68: 0 -> the counter's causal D = 64 tile takes one section of every head
#define FA_FA3_SECTIONS_COUNTER_D64 1  // again, whatever the L2 holds, as before step 68
#endif
#ifndef FA_UNIFORM_ROW0_D128  // step 67: 0 -> the D = 128 kernels compute each warp's first row from the thread's
#define FA_UNIFORM_ROW0_D128 1  // index (not known warp-uniform to the compiler), as D = 64 does, as before step 67
#endif
#ifndef FA_NON_CAUSAL_KERNELS_D128  // step 66: 0 -> non-causal D = 128 calls run the kernels causal ones do (causal
#define FA_NON_CAUSAL_KERNELS_D128 1  // paths compiled in, shape.causal read at run time), as before step 66
#endif
#ifndef FA_FA3_SECTIONS_CAUSAL_D128  // step 65: 0 -> long causal D = 128 calls take sections of two fifths of the L2
#define FA_FA3_SECTIONS_CAUSAL_D128 1  // and the counter from four tiles a CTA again (step 27's static pairs, mostly)
#endif
#ifndef FA_MIRRORED_SECOND_TILE  // step 64: 0 -> step 63's schedule: each CTA's second tile c + grid, and the counter's
#define FA_MIRRORED_SECOND_TILE 1  // causal D = 64 tile from more than two tiles an SM only
#endif
#ifndef FA_COUNTER_TILE_CAUSAL_D64  // step 63: 0 -> step 51's rule again: causal D = 64 calls whose static pairs fill the
#define FA_COUNTER_TILE_CAUSAL_D64 1  // last round take the static three-warpgroup tile, in series (step 62's tiles)
#endif
#ifndef FA_RESCALE_UNDER_S  // step 62: 0 -> the vote and O's rescale after P V's wait, the lazy max selected (step 61)
#define FA_RESCALE_UNDER_S 1
#endif
#ifndef FA_CONDITIONAL_RESCALE  // step 61: 0 -> the overlapped loops move the max and rescale O at every key tile
#define FA_CONDITIONAL_RESCALE 1
#endif
#ifndef FA_ONE_LOOP_CAUSAL_SHORT_D64  // step 60: 0 -> the short D = 64 tile's causal calls keep step 48's two loops
#define FA_ONE_LOOP_CAUSAL_SHORT_D64 1
#endif
#ifndef FA_QUEUE_OVERLAP_D64  // step 59: 0 -> the counter's three-warpgroup D = 64 tile runs in series, as D = 64 does
#define FA_QUEUE_OVERLAP_D64 1
#endif
#ifndef FA_FINITE_MAX_D64  // step 58: 0 -> D = 64's unmasked tiles keep the softmax's -inf guard, as D = 128 does
#define FA_FINITE_MAX_D64 1
#endif
#ifndef FA_THREE_WGS_TWO_STAGES_D64  // step 53: 0 -> the static list's three-warpgroup tile keeps three K/V stages
#define FA_THREE_WGS_TWO_STAGES_D64 1
#endif
#ifndef FA_THREE_WGS_QUEUE_CAUSAL_D64  // step 52: 0 -> the causal D = 64 calls step 51 leaves keep step 50's tiles
#define FA_THREE_WGS_QUEUE_CAUSAL_D64 1  // (and the counter's three-warpgroup kernel is not compiled)
#endif
#ifndef FA_THREE_WGS_CAUSAL_D64  // step 51: 0 -> causal D = 64 calls keep step 50's tiles (and the
#define FA_THREE_WGS_CAUSAL_D64 1  // three-warpgroup kernel, serving non-causal calls only, is compiled for them)
#endif
#ifndef FA_PIPELINE_STATE_D128  // step 50: 0 -> D = 128 computes each slot's stage and parity, as D = 64 does
#define FA_PIPELINE_STATE_D128 1
#endif
#ifndef FA_THREE_WGS_D64  // step 49: 0 -> no D = 64 call takes the three-warpgroup tile
#define FA_THREE_WGS_D64 1
#endif
#ifndef FA_UNMASKED_LOOP  // step 48: 0 -> one loop body holds both softmaxes and chooses per tile
#define FA_UNMASKED_LOOP 1
#endif
#ifndef FA_UNIFORM_DESCRIPTORS  // step 36: 0 -> every k-step's descriptor built from its address, as step 35
#define FA_UNIFORM_DESCRIPTORS 1
#endif
#ifndef FA_LONGEST_FIRST_QUEUE  // step 35: 0 -> every launch walks the static list
#define FA_LONGEST_FIRST_QUEUE 1
#endif
// Step 35's order and sections apart: FA_QUEUE_HEAVIEST_FIRST and FA_QUEUE_L2_SECTIONS (fa/tile_queue.cuh).
#ifndef FA_WARP_RELEASE_D64  // step 34: 0 -> at D = 64 too, every consumer thread arrives on the ring
#define FA_WARP_RELEASE_D64 1
#endif
#ifndef FA_THREE_CTAS_D64  // step 33: 0 -> D = 64 keeps two CTAs per SM at every grid
#define FA_THREE_CTAS_D64 1
#endif
#ifndef FA_WIDE_KV_TILES_LONG_D64  // step 32: 0 -> D = 64 keeps 128-key tiles in three stages at every S
#define FA_WIDE_KV_TILES_LONG_D64 1
#endif
#ifndef FA_TMA_STORE_D128  // step 31: 0 -> D = 128 stores O from registers too, as D = 64 does
#define FA_TMA_STORE_D128 1
#endif
#ifndef FA_SERIAL_D64  // step 30: 0 -> D = 64 overlaps S_{j+1} with P_j V_j too, as D = 128 does
#define FA_SERIAL_D64 1
#endif
#ifndef FA_PERSISTENT  // step 26: 0 -> one CTA per work item, as many waves as the items need
#define FA_PERSISTENT 1
#endif
#ifndef FA_BALANCED_CAUSAL  // step 27: 0 -> causal tiles handed out one at a time, round-robin
#define FA_BALANCED_CAUSAL 1
#endif
#ifndef FA_FTZ_EXP2  // step 18: 0 -> exp2f, with ptxas's subnormal fix-up
#define FA_FTZ_EXP2 1
#endif
#ifndef FA_PING_PONG  // step 17 (D = 128): 0 -> the two consumer warpgroups issue unordered
#define FA_PING_PONG 1
#endif
#ifndef FA_UNMASKED_INTERIOR  // step 15: 0 -> every key tile runs the visibility test
#define FA_UNMASKED_INTERIOR 1
#endif
#ifndef FA_TMA_Q  // step 14: 0 -> the consumers copy each work tile's Q with cp.async and wait for it
#define FA_TMA_Q 1
#endif
#ifndef FA_TMA_KV  // step 12: 0 -> the producer warps copy K/V with cp.async, arriving on the ring
#define FA_TMA_KV 1
#endif
#ifndef FA_WGMMA_OVERLAP  // step 11: 0 -> S_j, its softmax, then P_j V_j, each waited on in series
#define FA_WGMMA_OVERLAP 1
#endif
// Without TMA for Q or K/V the kernel also takes the raw pointers (after the tensor maps, so the
// default's parameter layout is the step's).
#if FA_TMA_Q && FA_TMA_KV
#define FA_RAW_INPUT_PARAMS
#define FA_RAW_INPUT_ARGS
#else
#define FA_RAW_INPUT_PARAMS , const Elem* __restrict__ q, const Elem* __restrict__ k, const Elem* __restrict__ v
#define FA_RAW_INPUT_ARGS , q, k, v
#endif

namespace {

constexpr bool kPersistent = FA_PERSISTENT, kBalancedCausal = FA_BALANCED_CAUSAL;
constexpr bool kFtzExp2 = FA_FTZ_EXP2, kPingPong = FA_PING_PONG, kUnmaskedInterior = FA_UNMASKED_INTERIOR;
constexpr bool kTmaQ = FA_TMA_Q, kTmaKv = FA_TMA_KV, kWgmmaOverlap = FA_WGMMA_OVERLAP, kSerialD64 = FA_SERIAL_D64;
constexpr bool kTmaStoreD128 = FA_TMA_STORE_D128, kWideKvTilesLongD64 = FA_WIDE_KV_TILES_LONG_D64;
constexpr bool kThreeCtasD64 = FA_THREE_CTAS_D64, kWarpReleaseD64 = FA_WARP_RELEASE_D64;
constexpr bool kUniformDescriptors = FA_UNIFORM_DESCRIPTORS, kThreeWgsD64 = FA_THREE_WGS_D64;
constexpr bool kPipelineStateD128 = FA_PIPELINE_STATE_D128, kFiniteMaxD64 = FA_FINITE_MAX_D64;
constexpr bool kQueueOverlapD64 = FA_QUEUE_OVERLAP_D64, kOneLoopCausalShortD64 = FA_ONE_LOOP_CAUSAL_SHORT_D64;
constexpr bool kConditionalRescale = FA_CONDITIONAL_RESCALE;
// Step 62 moves step 61's vote: without it there is none to move.
constexpr bool kRescaleUnderS = FA_RESCALE_UNDER_S && kConditionalRescale;
// The static list's three-warpgroup tile: K/V stages (fa::HopperThreeWgTileD64's STAGES).
constexpr int kThreeWgsStages = FA_THREE_WGS_TWO_STAGES_D64 ? FA_TILE_STAGES_D64_THREE_WGS : FA_TILE_STAGES_D64;
// Causal calls take the three-warpgroup tile only where the kernel has it.
constexpr bool kThreeWgsCausalD64 = FA_THREE_WGS_CAUSAL_D64 && kThreeWgsD64;
// Without step 15 every tile runs the visibility test, so there is no unmasked loop to split off.
constexpr bool kUnmaskedLoop = FA_UNMASKED_LOOP && kUnmaskedInterior;
// The counter needs one CTA a place in a persistent grid and the one producer thread of TMA, which
// takes the tiles and hands them on (with cp.async every producer thread copies K/V).
constexpr bool kQueue = FA_LONGEST_FIRST_QUEUE && kPersistent && kTmaKv;
// They take it from the counter only where the kernel has the causal three-warpgroup tile and the counter.
constexpr bool kThreeWgsQueueCausalD64 = FA_THREE_WGS_QUEUE_CAUSAL_D64 && kThreeWgsCausalD64 && kQueue;
// Step 63 sends every long causal call to the counter's tile: only where the kernel has it.
constexpr bool kCounterTileCausalD64 = FA_COUNTER_TILE_CAUSAL_D64 && kThreeWgsQueueCausalD64;
// Step 64's mirrored second tile: in the counter's three-warpgroup kernel wherever it is compiled; its launches take
// it, and step 64's count, only on step 63's rule (so step 63's switch stays a host_only one).
constexpr bool kMirroredSecondTile = FA_MIRRORED_SECOND_TILE && kThreeWgsQueueCausalD64;
constexpr bool kMirroredLaunches = kMirroredSecondTile && kCounterTileCausalD64;
// Step 65's sections: a launch rule only, wherever the counter is (so its switch is a host_only one).
constexpr bool kFa3SectionsCausalD128 = FA_FA3_SECTIONS_CAUSAL_D128 && kQueue;
// Step 68's sections for the counter's causal D = 64 tile and step 69's shorter rule for that tile: launch rules only.
constexpr bool kFa3SectionsCounterD64 = FA_FA3_SECTIONS_COUNTER_D64 && kQueue;
constexpr bool kCounterTileFrom2kD64 = FA_COUNTER_TILE_FROM_2K_D64 && kCounterTileCausalD64;
// Step 71's older queue under 8 pairs a CTA: a launch rule on step 65's, only where step 65's sections are.
constexpr bool kOlderQueueUnder8Pairs = FA_OLDER_QUEUE_UNDER_8_PAIRS && kFa3SectionsCausalD128;
static_assert(kWgmmaOverlap || !kPingPong, "ping-pong (step 17) is built on the overlapped loop: FA_PING_PONG=0 too");

// Named barriers 1 and 2 are ping-pong's turns; each warpgroup's O staging takes its own (3, 4).
constexpr int kBarrierStore = 3;
#if !FA_TMA_Q
// The consumers' own barrier around their cp.async copy of Q.
constexpr int kBarrierQ = 5;
#endif

// Its FA_TILE_* constants: tuning trials; steps 13 and 16's knock-outs. The tiles a call can take and
// which one it takes: fa/tile_size.cuh (HopperTileKind, run_hopper_tile).
using TileKind = fa::HopperTileKind;
template <class Elem, int D, TileKind KIND = TileKind::kShort>
using Tile = fa::HopperTileOf<Elem, D, KIND, kTmaKv, kThreeWgsStages>;

template <int BR>
using Scheduler = std::conditional_t<kBalancedCausal, fa::BalancedTileScheduler<BR>, fa::StaticTileScheduler<BR>>;

// FROM_QUEUE: the tiles come from a fa::TileQueue's counter (the launch allows it), else from step
// 27's static list. ONE_LOOP: every key tile through one loop, the mask decided per warp (the short D = 64 tile's
// causal calls, step 60). NON_CAUSAL: compiled for non-causal calls only, without causal paths (step 66).
template <class Elem, int D, TileKind KIND, bool FROM_QUEUE, bool ONE_LOOP = false, bool NON_CAUSAL = false>
__global__ void __launch_bounds__(Tile<Elem, D, KIND>::THREADS, Tile<Elem, D, KIND>::CTAS_PER_SM)
    attention_fwd(Elem* __restrict__ o, const __grid_constant__ CUtensorMap o_map, const __grid_constant__ CUtensorMap q_map,
                  const __grid_constant__ CUtensorMap k_map, const __grid_constant__ CUtensorMap v_map
                  FA_RAW_INPUT_PARAMS, const fa::TileQueue<Tile<Elem, D, KIND>::BR> queue, fa::AttnShape shape) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // Without step 51 no causal call reaches the static three-warpgroup tile: its kernel is compiled without causal paths.
  if constexpr (KIND == TileKind::kThreeWgs && !kThreeWgsCausalD64) shape.causal = false;
  if constexpr (NON_CAUSAL) shape.causal = false;  // a constant: every causal path folds away (step 66)
  using T = Tile<Elem, D, KIND>;
  namespace wg = fa::wgmma;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const typename T::Smem sm(smem_raw);
  const int tid = threadIdx.x, lane = tid % 32;

  // D = 64 hands a stage back with one arrival a consumer warp (step 34); D = 128 one a thread.
  constexpr bool WARP_RELEASE = kWarpReleaseD64 && D == 64;
  __shared__ fa::KvRing<T::KV_STAGES> ring;
  __shared__ uint64_t q_full, q_empty;  // Q of the current work tile landed / read by every consumer
  __shared__ fa::TileHandoff handoff;   // FROM_QUEUE: the producer thread's tiles, to the consumers
  const Scheduler<T::BR> scheduler(shape);  // otherwise
  // Producer arrivals per stage: the one TMA thread that also sets the byte count, or every
  // producer thread's cp.async arrival.
  ring.init(kTmaKv ? 1 : 32 * T::PRODUCER_WARPS, WARP_RELEASE ? T::CONSUMER_THREADS / 32 : T::CONSUMER_THREADS);
  if (tid == 0) {
    handoff.init(T::CONSUMER_THREADS / 32);
    fa::mbarrier_init(&q_full, 1);
    fa::mbarrier_init(&q_empty, T::CONSUMER_THREADS);
    fa::tma::fence_barrier_init();
  }
  __syncthreads();
  if (tid >= T::CONSUMER_THREADS) {
    wg::set_max_registers<T::PRODUCER_REGISTERS, false>();
    // One thread issues the TMA copies; with cp.async for K/V every producer thread copies.
    if (!kTmaKv || tid == T::CONSUMER_THREADS) {
      int ring_slots = 0;  // K/V tiles this CTA has sent through the ring
      auto produce = [&](const fa::WorkTile& work, int round) {
        if (kTmaQ && (kTmaKv || tid == T::CONSUMER_THREADS)) {
          if (round > 0) fa::mbarrier_wait(&q_empty, (round - 1) & 1);  // the last tile's Q is read
          fa::tma::arrive_expect_bytes(&q_full, T::BR * D * sizeof(Elem));
          fa::tma::load_tile<T::BR, D>(sm.q, &q_map, work.q0, work.bh, &q_full);
        }
        const int n_tiles = fa::kv_tile_count<T::BR, T::BC>(shape, work.q0);
        if constexpr (kTmaKv) {
          fa::tma::produce_kv_tiles<T>(ring, sm, &k_map, &v_map, fa::kv_head_index(shape, work.bh), n_tiles,
                                       ring_slots);
        } else {
#if !FA_TMA_KV
          const size_t kv_head = static_cast<size_t>(fa::kv_head_index(shape, work.bh)) * shape.S * D;
          fa::produce_kv_tiles<T>(ring, sm, k + kv_head, v + kv_head, shape, n_tiles, tid - T::CONSUMER_THREADS,
                                  ring_slots);
#endif
        }
        ring_slots += n_tiles;
      };
      if constexpr (FROM_QUEUE) {
        static_assert(!FROM_QUEUE || kQueue, "the counter is taken by the one TMA producer thread");
        // The hand-off holds this round's tile and the next one's (the consumers learn the next tile
        // when this one's Q lands); the one after is taken at the end of the round, where the take's
        // round trip to L2 overlaps the wait for the consumers to read this tile's Q.
        handoff.put(0, queue.first());
        // Only the counter's three-warpgroup tile mirrors its second round (step 64); the other kernels are step 63's.
        constexpr bool kMayMirror = kMirroredSecondTile && KIND == TileKind::kThreeWgsQueue;
        handoff.put(1, kMayMirror && queue.from_counter == fa::kCounterSecondMirrored ? queue.second_mirrored()
                                                                                       : queue.second());
        for (int round = 0; handoff.written(round).q0 >= 0; ++round) {
          produce(handoff.written(round), round);
          if (handoff.written(round + 1).q0 >= 0) handoff.put(round + 2, queue.take());
        }
        queue.retire();
      } else {
        int round = 0;
        for (int cursor = scheduler.start(); scheduler.valid(cursor); cursor = scheduler.next(cursor), ++round)
          produce(scheduler.tile(cursor), round);
      }
    }
    return;
  }

  wg::set_max_registers<T::CONSUMER_REGISTERS, true>();
  // Read through a shuffle so the compiler knows it is warp-uniform: the descriptors built from
  // it then live in uniform registers, leaving the consumer's registers to S, P and O.
  const int warpgroup = __shfl_sync(0xffffffffu, tid / 128, 0);
  const int wg_row0 = warpgroup * 64;               // this warpgroup's rows within the tile
  const int warp_row0 = wg_row0 + (tid % 128) / 32 * 16;  // this warp's 16 rows
  // At D = 128 through a shuffle, so that the compiler knows the row warp-uniform: the causal prologue's branch on it
  // then leaves the K/V ring's state and the wgmma descriptors in uniform registers (step 67; D = 64 lost with it).
  const int row0 = FA_UNIFORM_ROW0_D128 && D == 128 ? __shfl_sync(0xffffffffu, warp_row0, 0) : warp_row0;
  const Elem* q_wg = sm.q + wg_row0 * 64;            // row offset inside every 64-column block
  const float scale_log2 = shape.scale * 1.4426950408889634f;
  // Ping-pong (D = 128): each warpgroup takes n_tiles + 1 turns per work tile, so the turns stay
  // in step from one work tile to the next. Warpgroup 0 goes first; warpgroup 1 skips its very
  // last hand-over, which nobody waits for.
  // Each key tile in series: at D = 64 (step 30), or everywhere without step 11's overlap; but the counter's
  // three-warpgroup D = 64 tile overlaps (step 59: its own switch, whatever steps 11 and 30's say).
  constexpr bool OVERLAP_D64 = kQueueOverlapD64 && KIND == TileKind::kThreeWgsQueue;
  constexpr bool IN_SERIES = !OVERLAP_D64 && (!kWgmmaOverlap || (kSerialD64 && D == 64));
  constexpr bool PING_PONG = kPingPong && !IN_SERIES && T::CONSUMER_WARPGROUPS == 2;
  if constexpr (PING_PONG)
    if (warpgroup == 1) wg::pass_turn(warpgroup);
  auto my_turn = [&] {
    if constexpr (PING_PONG) wg::wait_turn(warpgroup);
  };
  auto end_turn = [&](bool last) {
    if constexpr (PING_PONG)
      if (!(last && warpgroup == 1)) wg::pass_turn(warpgroup);
  };
  // D = 128: every slot is acquired once, in order, so the next one's stage and parity advance a slot at a
  // time and a stage goes back by its index (no division by KV_STAGES). D = 64 keeps the slot's arithmetic.
  constexpr bool PIPELINE_STATE = kPipelineStateD128 && D == 128;
  int acquire_stage = 0, acquire_parity = 0;
  // cp.async copies land through the generic proxy: fence before wgmma reads them (TMA needs none).
  auto acquire = [&](int slot) {
    int st;
    if constexpr (PIPELINE_STATE) {
      st = acquire_stage;
      fa::mbarrier_wait(&ring.full[st], acquire_parity);
      if (++acquire_stage == T::KV_STAGES) {
        acquire_stage = 0;
        acquire_parity ^= 1;
      }
    } else {
      st = fa::acquire_kv_stage<T>(ring, slot);
    }
    if constexpr (!kTmaKv) wg::fence_proxy_async();
    return st;
  };
  // Q is read: the producer may load the next one (nobody waits when the consumers copy Q).
  auto q_read = [&] {
    if constexpr (kTmaQ) fa::mbarrier_arrive(&q_empty);
  };

  // D = 128 stores O through shared memory (step 31): the K half of each work tile's last ring
  // slot takes it, and that slot goes back to the producer only once the copy engine has read O out.
  // The warpgroup's first thread issues the store; it hands the slot back at the next work tile's
  // first wait (settle_store), the other consumers right after staging. A tuning trial whose K
  // tile is smaller than O's (64 keys for 128 rows) stores from registers, as D = 64 does.
  constexpr bool TMA_STORE = kTmaStoreD128 && D == 128 && T::BC >= T::BR;
  static_assert(!TMA_STORE || T::KV_STAGES >= 2,
                "the held slot is handed back after the next tile's first S, which must not need it");
  static_assert(!(TMA_STORE && WARP_RELEASE), "the O slot is handed back by one thread, not by warps");
  // Warp-uniform calls only: every lane has passed the wgmma wait that read the stage. st: acquire's return.
  auto hand_back = [&](int slot, int st) {
    const int stage_back = PIPELINE_STATE ? st : ring.stage(slot);
    if constexpr (WARP_RELEASE) {
      __syncwarp();
      if (lane == 0) fa::mbarrier_arrive(&ring.empty[stage_back]);
    } else {
      fa::mbarrier_arrive(&ring.empty[stage_back]);
    }
  };
  int ring_slots = 0, stored_slot = -1;
  auto settle_store = [&] {
    if (TMA_STORE && stored_slot >= 0) {
      fa::tma::wait_stores<0>();
      fa::release_kv_stage<T>(ring, stored_slot);
      stored_slot = -1;
    }
  };
  auto release = [&](int slot, int st, int n_tiles) {
    if (!TMA_STORE || slot != ring_slots + n_tiles - 1) hand_back(slot, st);
  };
  // From the queue: this tile and the one after (q0 < 0: none), entry e of the hand-off following
  // the e-th tile; D = 128 reads it when Q lands (ping-pong's last hand-over needs to know), D = 64 at
  // the end of the tile (two registers fewer in the loop). From the static list: its cursor, as in
  // step 34 (the tile recomputed where it is needed, so the loop holds one register for it).
  int cursor = scheduler.start();
  fa::WorkTile work{-1, 0}, next{-1, 0};
  if constexpr (FROM_QUEUE) work = handoff.get(0, lane);
  constexpr bool NEXT_EARLY = FROM_QUEUE && D != 64;
  auto has_work = [&] { return FROM_QUEUE ? work.q0 >= 0 : scheduler.valid(cursor); };
  auto this_tile = [&] { return FROM_QUEUE ? work : scheduler.tile(cursor); };
  for (int entry = 1; has_work(); ++entry) {
    const int q_phase = (entry - 1) & 1;
    const int q0 = this_tile().q0;
    const int n_tiles = fa::kv_tile_count<T::BR, T::BC>(shape, q0);
    // Causal: this warpgroup's rows see fewer tiles than the block's; the rest it only releases.
    const int n_mine = shape.causal ? fa::kv_tile_count<64, T::BC>(shape, q0 + wg_row0) : n_tiles;
    float o_acc[D / 8][4] = {};
    fa::RowState rows[2];
    float s[T::BC / 8][4];
    unsigned p[T::BC / 16][4];
    float alpha[2];

    // Only tiles crossing the end of the sequence or (causal) the diagonal need the mask test;
    // the three-CTA tile and the overlapped counter's tile mask with one bound per row (they spill otherwise).
    constexpr bool ROW_LIMIT = KIND == TileKind::kThreeCtas || OVERLAP_D64;
    // An unmasked tile's row max starts from its first score and its base takes no -inf guard at D = 64 (step 58;
    // FINITE_MAX acts on unmasked tiles only).
    constexpr bool FINITE_MAX = kFiniteMaxD64 && D == 64;
    // The overlapped loops move a row's max only by more than 2^8 and skip O's rescale where no row of the warp moved
    // (step 61); the serial loops keep the eager one (step 53's lazy rescale lost 11-19 % there).
    constexpr bool LAZY_MAX = kConditionalRescale && !IN_SERIES;
    // The lazy max as one FMNMX, the vote and O's rescale between S_j's issue and P_{j-1} V_{j-1}'s (step 62).
    constexpr bool UNDER_S = kRescaleUnderS && LAZY_MAX;
    auto softmax_tile = [&](int kv0) {
      if (kUnmaskedInterior && kv0 + T::BC <= shape.S && (!shape.causal || kv0 + T::BC - 1 <= q0 + row0))
        fa::mma_online_softmax<T, /*MASK=*/false, kFtzExp2, ROW_LIMIT, FINITE_MAX>(s, rows, alpha, shape, q0 + row0,
                                                                                    kv0, lane, scale_log2);
      else
        fa::mma_online_softmax<T, /*MASK=*/true, kFtzExp2, ROW_LIMIT>(s, rows, alpha, shape, q0 + row0, kv0, lane,
                                                                       scale_log2);
    };
    // The same with the choice made by the caller (std::true_type: masked), for a loop of one kind.
    auto softmax_tile_as = [&](int kv0, auto masked) {
      fa::mma_online_softmax<T, decltype(masked)::value, kFtzExp2, ROW_LIMIT, FINITE_MAX, LAZY_MAX, UNDER_S>(
          s, rows, alpha, shape, q0 + row0, kv0, lane, scale_log2);
    };
    // Tiles 0 .. n_unmasked - 1 need no mask for any row of the warpgroup: wholly inside the sequence and
    // (causal) at or below the diagonal of its first row. Warpgroup-uniform, as wgmma needs.
    const int n_unmasked = min(n_mine, min(shape.S, shape.causal ? q0 + wg_row0 + 1 : shape.S) / T::BC);
    if constexpr (kTmaQ) {
      fa::mbarrier_wait(&q_full, q_phase);
    } else {
#if !FA_TMA_Q  // every consumer is done with the last Q (its S GEMMs have landed); copy, then publish
      const size_t q_head = static_cast<size_t>(this_tile().bh) * shape.S * D;
      fa::named_barrier_sync(kBarrierQ, T::CONSUMER_THREADS);
      fa::cp_async_tile_sw128<T::BR, D, T::CONSUMER_THREADS>(sm.q, q + q_head + static_cast<size_t>(q0) * D,
                                                             shape.S - q0, tid);
      fa::cp_async_wait_all();
      wg::fence_proxy_async();
      fa::named_barrier_sync(kBarrierQ, T::CONSUMER_THREADS);
#endif
    }
    if constexpr (NEXT_EARLY) next = handoff.get(entry, lane);

    if constexpr (IN_SERIES) {  // S_j, its softmax, then P_j V_j, each waited on
      // masked: std::true_type / std::false_type, or a bool (the softmax decides per warp, as before)
      auto serial_step = [&](int tile, auto masked) {
        const int st = acquire(ring_slots + tile);
        wg::fence_registers(o_acc);
        wg::fence();
        wg::issue_scores<T, kUniformDescriptors>(s, q_wg, sm.k_stage(st));
        wg::wait<0>();
        wg::fence_registers(s);
        if (TMA_STORE && tile == 0) settle_store();
        if (tile == n_mine - 1) q_read();
        if constexpr (std::is_same_v<decltype(masked), bool>) softmax_tile(tile * T::BC);  // decided per warp
        else softmax_tile_as(tile * T::BC, masked);
        fa::rescale_rows(o_acc, alpha);
        fa::pack_p_fragments<T>(p, s);
        wg::fence_registers(o_acc);
        wg::fence();
        wg::issue_pv<T, kUniformDescriptors>(o_acc, p, sm.v_stage(st));
        wg::wait<0>();
        wg::fence_registers(o_acc);
        wg::fence_registers(p);
        release(ring_slots + tile, st, n_tiles);
      };
      int tile = 0;
      // The three-CTA tile keeps one loop: its 80 registers a thread do not hold two bodies without spilling. So do
      // the short tile's causal calls (ONE_LOOP), where one loop measured faster.
      if constexpr (kUnmaskedLoop && KIND != TileKind::kThreeCtas && !ONE_LOOP) {
        for (; tile < n_unmasked; ++tile) serial_step(tile, std::false_type{});
        for (; tile < n_mine; ++tile) serial_step(tile, std::true_type{});
      } else {
        for (; tile < n_mine; ++tile) serial_step(tile, true);
      }
      for (int tile = n_mine; tile < n_tiles; ++tile) {
        release(ring_slots + tile, acquire(ring_slots + tile), n_tiles);
      }
    } else {
      // Prologue: tile 0's scores and softmax (O is still zero: its alpha is moot).
      int stage = acquire(ring_slots);
      wg::fence();
      my_turn();
      wg::issue_scores<T, kUniformDescriptors>(s, q_wg, sm.k_stage(stage));
      end_turn(false);
      wg::wait<0>();
      wg::fence_registers(s);
      settle_store();
      if (n_mine == 1) q_read();
      softmax_tile(0);  // eager: the rows' first maxima, which step 62's shifted max keeps
      fa::pack_p_fragments<T>(p, s);
      if constexpr (UNDER_S) alpha[0] = alpha[1] = 1.0f;  // O is zero: the first vote has nothing to rescale

      // UNDER_S: O's rescale for tile j - 1's maxima, where a row of the warp moved, after S_j's issue.
      auto rescale_if_moved = [&] {
        if (__any_sync(0xffffffffu, alpha[0] != 1.0f || alpha[1] != 1.0f)) fa::rescale_rows(o_acc, alpha);
        wg::fence_registers(o_acc);
        wg::fence();
      };
      auto overlapped_step = [&](int tile, auto masked) {
        const int prev_stage = stage;
        stage = acquire(ring_slots + tile);
        wg::fence_registers(o_acc);
        wg::fence();
        my_turn();
        wg::issue_scores<T, kUniformDescriptors>(s, q_wg, sm.k_stage(stage));  // S_j ...
        if constexpr (UNDER_S) rescale_if_moved();                              // ... O's rescale while it computes
        wg::issue_pv<T, kUniformDescriptors>(o_acc, p, sm.v_stage(prev_stage));  // ... and P_{j-1} V_{j-1} behind it
        end_turn(false);
        wg::wait<1>();                                       // S_j has landed
        wg::fence_registers(s);
        if (tile == n_mine - 1) q_read();
        if constexpr (std::is_same_v<decltype(masked), bool>) softmax_tile(tile * T::BC);  // decided per warp
        else softmax_tile_as(tile * T::BC, masked);
        wg::wait<0>();  // P_{j-1} V_{j-1} has landed: O may be rescaled, P overwritten, the stage freed
        wg::fence_registers(o_acc);
        wg::fence_registers(p);
        release(ring_slots + tile - 1, prev_stage, n_tiles);
        if constexpr (UNDER_S) {
          fa::pack_p_fragments<T>(p, s);
        } else if constexpr (LAZY_MAX) {
          fa::pack_p_fragments<T>(p, s);  // before the vote: the conversions stay among the exponentials
          if (__any_sync(0xffffffffu, alpha[0] != 1.0f || alpha[1] != 1.0f)) fa::rescale_rows(o_acc, alpha);
        } else {
          fa::rescale_rows(o_acc, alpha);
          fa::pack_p_fragments<T>(p, s);
        }
      };
      int tile = 1;
      if constexpr (kUnmaskedLoop) {
        for (; tile < n_unmasked; ++tile) overlapped_step(tile, std::false_type{});
        for (; tile < n_mine; ++tile) overlapped_step(tile, std::true_type{});
      } else {
        for (; tile < n_mine; ++tile) overlapped_step(tile, true);
      }
      const bool last_work = NEXT_EARLY ? next.q0 < 0 : !scheduler.valid(scheduler.next(cursor));
      if constexpr (UNDER_S) {
        rescale_if_moved();  // the last tile's maxima (its fences are P V's)
      } else {
        wg::fence_registers(o_acc);
        wg::fence();
      }
      my_turn();
      wg::issue_pv<T, kUniformDescriptors>(o_acc, p, sm.v_stage(stage));
      end_turn(last_work && n_mine == n_tiles);
      wg::wait<0>();
      wg::fence_registers(o_acc);
      release(ring_slots + n_mine - 1, stage, n_tiles);
      for (int tile = n_mine; tile < n_tiles; ++tile) {
        release(ring_slots + tile, acquire(ring_slots + tile), n_tiles);
        my_turn();  // an empty turn
        end_turn(last_work && tile == n_tiles - 1);
      }
    }

    if constexpr (TMA_STORE) {
      const int o_slot = ring_slots + n_tiles - 1;
      // Every consumer's last S has landed, so that K is read (without TMA for Q nobody arrives on
      // q_empty: the consumers meet instead).
      if constexpr (kTmaQ) {
        fa::mbarrier_wait(&q_empty, q_phase);
      } else {
#if !FA_TMA_Q
        fa::named_barrier_sync(kBarrierQ, T::CONSUMER_THREADS);
#endif
      }
      Elem* o_tile = sm.k_stage(ring.stage(o_slot)) + wg_row0 * D;
      wg::stage_output<T>(o_tile, o_acc, rows, row0 - wg_row0, lane);
      wg::fence_proxy_async();                          // st.shared visible to the copy engine ...
      fa::named_barrier_sync(kBarrierStore + warpgroup, 128);  // ... from every warp of the warpgroup
      if (tid % 128 == 0) {
        fa::tma::store_tile<64, D>(&o_map, o_tile, q0 + wg_row0, this_tile().bh);
        stored_slot = o_slot;
      } else {
        fa::release_kv_stage<T>(ring, o_slot);
      }
    } else {
      const size_t head = static_cast<size_t>(this_tile().bh) * shape.S * D;
      fa::mma_store_output<T>(o + head + static_cast<size_t>(q0 + row0) * D, o_acc, rows, shape.S - q0 - row0, lane);
    }
    ring_slots += n_tiles;
    if constexpr (FROM_QUEUE) {
      if constexpr (!NEXT_EARLY) next = handoff.get(entry, lane);
      work = next;
    } else {
      cursor = scheduler.next(cursor);
    }
  }
  if (TMA_STORE && stored_slot >= 0) fa::tma::wait_stores<0, /*READ_ONLY=*/false>();
#endif
}

// Host side: tensor maps for O and Q (B * H heads), K and V (B * H_kv), then the launch with the
// tile the shape takes: one wave of persistent CTAs fed by the counter or walking the static list, or
// (FA_PERSISTENT=0) one CTA per work item.
template <class Elem, int D>
struct LaunchWithTensorMaps {
  template <TileKind KIND>
  static int run_tile(const Elem* q, const Elem* k, const Elem* v, Elem* o, const fa::AttnShape& shape,
                      cudaStream_t stream) {
    using T = Tile<Elem, D, KIND>;
    CUtensorMap q_map, k_map, v_map;
    if (int err = fa::tma::make_head_map(&q_map, q, shape.B * shape.H, shape.S, D, T::BR)) return err;
    if (int err = fa::tma::make_head_map(&k_map, k, shape.B * shape.H_kv, shape.S, D, T::BC)) return err;
    if (int err = fa::tma::make_head_map(&v_map, v, shape.B * shape.H_kv, shape.S, D, T::BC)) return err;
    CUtensorMap o_map;  // written in 64-row boxes, one per warpgroup (D = 128; D = 64 stores directly)
    if (int err = fa::tma::make_head_map(&o_map, static_cast<const Elem*>(o), shape.B * shape.H, shape.S, D, 64))
      return err;
    // The three-warpgroup tile of non-causal calls and step 51's causal ones walks the static list (tiles of equal
    // length, or pairs that fill the last round); step 52's takes the counter, over one section of every head until
    // step 68's FA3 sections.
    constexpr bool kCounter = kQueue && KIND != TileKind::kThreeWgs;
    constexpr bool kOneSection = KIND == TileKind::kThreeWgsQueue;
    static void (*const kernels[2])(Elem*, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap FA_RAW_INPUT_PARAMS,
                                    fa::TileQueue<T::BR>, fa::AttnShape) = {attention_fwd<Elem, D, KIND, false>,
                                                                             attention_fwd<Elem, D, KIND, kCounter>};
    // The short D = 64 tile's causal calls take the one-loop kernels (step 60), its other calls step 48's two loops.
    constexpr bool kOneLoopCausal = kOneLoopCausalShortD64 && kUnmaskedLoop && KIND == TileKind::kShort && D == 64;
    static void (*const one_loop_kernels[2])(Elem*, CUtensorMap, CUtensorMap, CUtensorMap,
                                             CUtensorMap FA_RAW_INPUT_PARAMS, fa::TileQueue<T::BR>, fa::AttnShape) = {
        attention_fwd<Elem, D, KIND, false, kOneLoopCausal>, attention_fwd<Elem, D, KIND, kCounter, kOneLoopCausal>};
    // Non-causal D = 128 calls take kernels compiled without causal paths (step 66).
    constexpr bool kNonCausalKernels = FA_NON_CAUSAL_KERNELS_D128 && D == 128;
    static void (*const non_causal_kernels[2])(Elem*, CUtensorMap, CUtensorMap, CUtensorMap,
                                               CUtensorMap FA_RAW_INPUT_PARAMS, fa::TileQueue<T::BR>, fa::AttnShape) = {
        attention_fwd<Elem, D, KIND, false, false, kNonCausalKernels>,
        attention_fwd<Elem, D, KIND, kCounter, false, kNonCausalKernels>};
    // The counter's three-warpgroup tile takes the counter from as many tiles a CTA as step 63's rule asks (step 64's:
    // from FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64, its second round mirrored under
    // FA_TILE_MIRRORED_UNDER_TILES_PER_CTA_D64 tiles a CTA).
    constexpr int kQueueTilesPerCta = !(kCounterTileCausalD64 && kOneSection) ? fa::kQueueTilesPerCta
                                      : kMirroredLaunches ? FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64
                                                          : FA_TILE_COUNTER_TILE_CAUSAL_TILES_PER_SM_D64;
    constexpr int kMirrorUnder = kMirroredLaunches && kOneSection ? FA_TILE_MIRRORED_UNDER_TILES_PER_CTA_D64 : 0;
    // Long causal D = 128 calls take FA3's sections where the counter is (step 65) but where the older queue balances
    // a call of fewer than 8192 keys (step 71); the counter's three-warpgroup tile takes FA3's sections too (step 68).
    return fa::launch_from_queue<T, D, Scheduler, kPersistent, kCounter, kOneSection, kQueueTilesPerCta,
                                 kMirrorUnder, kFa3SectionsCausalD128, kFa3SectionsCounterD64,
                                 kOlderQueueUnder8Pairs>(
        kOneLoopCausal && shape.causal      ? one_loop_kernels
        : kNonCausalKernels && !shape.causal ? non_causal_kernels
                                             : kernels,
        shape, stream, o, o_map, q_map, k_map, v_map FA_RAW_INPUT_ARGS);
  }
  static int run(const Elem* q, const Elem* k, const Elem* v, Elem* o, const fa::AttnShape& shape,
                 cudaStream_t stream) {
    return fa::run_hopper_tile<D, kThreeCtasD64, kWideKvTilesLongD64, kThreeWgsD64, kThreeWgsCausalD64,
                               kThreeWgsQueueCausalD64, kCounterTileCausalD64, kMirroredLaunches,
                               kCounterTileFrom2kD64>(
        shape, [&](auto kind) { return run_tile<decltype(kind)::value>(q, k, v, o, shape, stream); });
  }
};

// What fa_smem_bytes, fa_threads and fa_tile_rows report: the tile of short sequences and small grids
// (the bf16 tile and, at step 32's constants, D = 64's long tile have the same sizes; the three-CTA
// tile has the same threads and rows, two stages instead of three).
template <int D>
using Fp16Tile = Tile<half, D>;

}  // namespace

FA_EXPORT_MODEL_VARIANT(LaunchWithTensorMaps, Fp16Tile)
