// Step 71 - +the older queue for causal D = 128 calls of 4096-8191 keys that it balances: a causal D = 128 call of
// fewer than 8192 keys (FA_QUEUE_OLDER_UNDER_S) that step 65's rule gives FlashAttention-3's 32 MB sections keeps the
// older queue (two fifths of the L2, the counter from four tiles a CTA) where that queue takes the counter or walks
// at most 8 of step 27's static heavy-light pairs a CTA (FA_QUEUE_OLDER_UNDER_PAIRS, fa::keeps_older_queue); calls of
// 8192 keys or more, and those the older queue would leave with more pairs a CTA, keep step 65's sections.
// Hypothesis: step 65's rule was chosen on an H200, where the older queue was level at (4, 16, 4096, 128, causal);
// on an H100 it is not. Over 17 causal D = 128 rows of 4096 keys and 32-512 MB of K/V on three H100s (hot, paired
// rounds, data/explorations/2026-12-06-causal-sections-h100 calls 3-5), the older queue ran 1.008x-1.034x step 69's
// speed where it walked 1.9-7.8 static pairs a CTA ((1-4, 16, 4096)) and 1.014x-1.020x where it took the counter in
// its smaller sections (four grouped bf16 rows of 32-96 MB); 0.994x-1.003x from 9.7 pairs a CTA, and 0.982x at (8,
// 32, 4096, 8 K/V heads), 31 pairs a CTA: the call's K/V does not sort them (128 MB at both (4, 16) and (8, 32, kv8)).
// The rule as a define on step 69 (call 5) took each row's faster schedule: 1.0111x at (4, 16, 4096, 128, causal),
// where it ran 1.0106x FlashAttention-3's speed (step 69 0.9995x), 1.0144x-1.0191x at the grouped rows, 0.9998x-1.0003x
// where it keeps step 69's queue, at S = 6144-16384 and non-causal. Why the static pairs beat the counter at few pairs
// a CTA is not measured. On an H200 (60 MB of L2) the rule was not measured; it keeps the older queue at the same
// non-grouped rows and also at (8, 32, 4096, kv8), whose older queue takes the counter there.
// Predicted: 0.997x-1.015x over +the counter's tile for causal D = 64 calls from 2048 keys at (4, 16, 4096, 128,
// causal): 1.006x-1.015x on an H100, 0.997x-1.005x on an H200 (the older queue level there in the 2026-12-04 calls);
// 1.000x within 0.003 at the other ladder shapes (S = 512, D = 64, non-causal).
#include "fa/common.cuh"
#include "fa/mma_attention.cuh"
#include "fa/pipeline.cuh"
#include "fa/softmax.cuh"
#include "fa/tile_queue.cuh"
#include "fa/tile_scheduler.cuh"
#include "fa/tile_size.cuh"
#include "fa/tma.cuh"
#include "fa/wgmma_attention.cuh"

namespace {

// Named barriers 1 and 2 are ping-pong's turns; each warpgroup's O staging takes its own.
constexpr int kBarrierStore = 3;

// The tiles a call can take and which one it takes: fa/tile_size.cuh (HopperTileKind, run_hopper_tile); the
// static list's three-warpgroup tile with FA_TILE_STAGES_D64_THREE_WGS K/V stages (step 53).
using TileKind = fa::HopperTileKind;
template <class Elem, int D, TileKind KIND = TileKind::kShort>
using Tile = fa::HopperTileOf<Elem, D, KIND, /*TMA_KV=*/true, FA_TILE_STAGES_D64_THREE_WGS>;

// FROM_QUEUE: the tiles come from a fa::TileQueue's counter (the launch allows it), else from step
// 27's static list. ONE_LOOP: every key tile through one loop, the mask decided per warp (the short D = 64 tile's
// causal calls, step 60). NON_CAUSAL: compiled for non-causal calls only, without causal paths (this step).
template <class Elem, int D, TileKind KIND, bool FROM_QUEUE, bool ONE_LOOP = false, bool NON_CAUSAL = false>
__global__ void __launch_bounds__(Tile<Elem, D, KIND>::THREADS, Tile<Elem, D, KIND>::CTAS_PER_SM)
    attention_fwd(Elem* __restrict__ o, const __grid_constant__ CUtensorMap o_map, const __grid_constant__ CUtensorMap q_map,
                  const __grid_constant__ CUtensorMap k_map, const __grid_constant__ CUtensorMap v_map,
                  const fa::TileQueue<Tile<Elem, D, KIND>::BR> queue, fa::AttnShape shape) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (NON_CAUSAL) shape.causal = false;  // a constant: every causal path folds away
  using T = Tile<Elem, D, KIND>;
  namespace wg = fa::wgmma;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const typename T::Smem sm(smem_raw);
  const int tid = threadIdx.x, lane = tid % 32;

  // D = 64 hands a stage back with one arrival a consumer warp (this step); D = 128 one a thread.
  constexpr bool WARP_RELEASE = D == 64;
  __shared__ fa::KvRing<T::KV_STAGES> ring;
  __shared__ uint64_t q_full, q_empty;  // Q of the current work tile landed / read by every consumer
  __shared__ fa::TileHandoff handoff;   // FROM_QUEUE: the producer thread's tiles, to the consumers
  const fa::BalancedTileScheduler<T::BR> scheduler(shape);  // otherwise
  ring.init(1, WARP_RELEASE ? T::CONSUMER_THREADS / 32 : T::CONSUMER_THREADS);
  if (tid == 0) {
    handoff.init(T::CONSUMER_THREADS / 32);
    fa::mbarrier_init(&q_full, 1);
    fa::mbarrier_init(&q_empty, T::CONSUMER_THREADS);
    fa::tma::fence_barrier_init();
  }
  __syncthreads();
  if (tid >= T::CONSUMER_THREADS) {
    wg::set_max_registers<T::PRODUCER_REGISTERS, false>();
    if (tid == T::CONSUMER_THREADS) {
      int ring_slots = 0;  // K/V tiles this CTA has sent through the ring
      auto produce = [&](const fa::WorkTile& work, int round) {
        if (round > 0) fa::mbarrier_wait(&q_empty, (round - 1) & 1);  // the last tile's Q is read
        fa::tma::arrive_expect_bytes(&q_full, T::BR * D * sizeof(Elem));
        fa::tma::load_tile<T::BR, D>(sm.q, &q_map, work.q0, work.bh, &q_full);
        const int n_tiles = fa::kv_tile_count<T::BR, T::BC>(shape, work.q0);
        fa::tma::produce_kv_tiles<T>(ring, sm, &k_map, &v_map, fa::kv_head_index(shape, work.bh), n_tiles,
                                     ring_slots);
        ring_slots += n_tiles;
      };
      if constexpr (FROM_QUEUE) {
        // The hand-off holds this round's tile and the next one's (the consumers learn the next tile
        // when this one's Q lands); the one after is taken at the end of the round, where the take's
        // round trip to L2 overlaps the wait for the consumers to read this tile's Q.
        handoff.put(0, queue.first());
        // Only the counter's three-warpgroup tile mirrors its second round (step 64); the other kernels are step 63's.
        constexpr bool kMayMirror = KIND == TileKind::kThreeWgsQueue;
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
  // then leaves the K/V ring's state and the wgmma descriptors in uniform registers (this step; D = 64 lost with it).
  const int row0 = D == 128 ? __shfl_sync(0xffffffffu, warp_row0, 0) : warp_row0;
  const Elem* q_wg = sm.q + wg_row0 * 64;            // row offset inside every 64-column block
  const float scale_log2 = shape.scale * 1.4426950408889634f;
  // D = 64 runs each key tile in series (step 30) but on the counter's three-warpgroup tile (this step); D = 128
  // overlaps and ping-pongs.
  // Ping-pong (D = 128): each warpgroup takes n_tiles + 1 turns per work tile, so the turns stay
  // in step from one work tile to the next. Warpgroup 0 goes first; warpgroup 1 skips its very
  // last hand-over, which nobody waits for.
  constexpr bool OVERLAP_D64 = KIND == TileKind::kThreeWgsQueue;
  constexpr bool IN_SERIES = D == 64 && !OVERLAP_D64;
  constexpr bool PING_PONG = !IN_SERIES && T::CONSUMER_WARPGROUPS == 2;
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
  constexpr bool PIPELINE_STATE = D == 128;
  int acquire_stage = 0, acquire_parity = 0;
  auto acquire = [&](int slot) {
    if constexpr (PIPELINE_STATE) {
      const int st = acquire_stage;
      fa::mbarrier_wait(&ring.full[st], acquire_parity);
      if (++acquire_stage == T::KV_STAGES) {
        acquire_stage = 0;
        acquire_parity ^= 1;
      }
      return st;
    } else {
      return fa::acquire_kv_stage<T>(ring, slot);
    }
  };
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

  // D = 128 stores O through shared memory (step 31): the K half of each work tile's last ring
  // slot takes it, and that slot goes back to the producer only once the copy engine has read O out.
  // The warpgroup's first thread issues the store; it hands the slot back at the next work tile's
  // first wait (settle_store), the other consumers right after staging. A tuning trial whose K
  // tile is smaller than O's (64 keys for 128 rows) stores from registers, as D = 64 does.
  constexpr bool TMA_STORE = D == 128 && T::BC >= T::BR;
  static_assert(!TMA_STORE || (!IN_SERIES && T::KV_STAGES >= 2),
                "the held slot is handed back after the next tile's first S, which must not need it");
  static_assert(!(TMA_STORE && WARP_RELEASE), "the O slot is handed back by one thread, not by warps");
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
    // An unmasked tile's row max starts from its first score and its base takes no -inf guard at D = 64 (step
    // 58; FINITE_MAX acts on unmasked tiles only).
    constexpr bool FINITE_MAX = D == 64;
    // The overlapped loops move a row's max only by more than 2^8 (as one FMNMX, this step) and skip O's rescale
    // where no row of the warp moved (step 61); the serial loops keep the eager one (step 53's lazy rescale lost
    // 11-19 % there).
    constexpr bool LAZY_MAX = !IN_SERIES;
    auto softmax_tile = [&](int kv0) {
      if (kv0 + T::BC <= shape.S && (!shape.causal || kv0 + T::BC - 1 <= q0 + row0))
        fa::mma_online_softmax<T, /*MASK=*/false, /*FTZ_EXP2=*/true, ROW_LIMIT, FINITE_MAX>(s, rows, alpha, shape,
                                                                                             q0 + row0, kv0, lane,
                                                                                             scale_log2);
      else
        fa::mma_online_softmax<T, /*MASK=*/true, /*FTZ_EXP2=*/true, ROW_LIMIT>(s, rows, alpha, shape, q0 + row0, kv0,
                                                                                lane, scale_log2);
    };
    // The same with the choice made by the caller (std::true_type: masked), for a loop of one kind.
    auto softmax_tile_as = [&](int kv0, auto masked) {
      fa::mma_online_softmax<T, decltype(masked)::value, /*FTZ_EXP2=*/true, ROW_LIMIT, FINITE_MAX, LAZY_MAX,
                             /*SHIFTED_MAX=*/true>(s, rows, alpha, shape, q0 + row0, kv0, lane, scale_log2);
    };
    // Tiles 0 .. n_unmasked - 1 need no mask for any row of the warpgroup: wholly inside the sequence and
    // (causal) at or below the diagonal of its first row. Warpgroup-uniform, as wgmma needs.
    const int n_unmasked = min(n_mine, min(shape.S, shape.causal ? q0 + wg_row0 + 1 : shape.S) / T::BC);
    fa::mbarrier_wait(&q_full, q_phase);
    if constexpr (NEXT_EARLY) next = handoff.get(entry, lane);

    if constexpr (IN_SERIES) {  // D = 64 but the counter's tile: S_j, its softmax, then P_j V_j, each waited on
      // masked: std::true_type / std::false_type, or a bool (the softmax decides per warp, as before)
      auto serial_step = [&](int tile, auto masked) {
        const int st = acquire(ring_slots + tile);
        wg::fence_registers(o_acc);
        wg::fence();
        wg::issue_scores<T, /*STEPPED=*/true>(s, q_wg, sm.k_stage(st));
        wg::wait<0>();
        wg::fence_registers(s);
        if (tile == n_mine - 1) fa::mbarrier_arrive(&q_empty);  // Q is read: the producer may load the next one
        if constexpr (std::is_same_v<decltype(masked), bool>) softmax_tile(tile * T::BC);  // decided per warp
        else softmax_tile_as(tile * T::BC, masked);
        fa::rescale_rows(o_acc, alpha);
        fa::pack_p_fragments<T>(p, s);
        wg::fence_registers(o_acc);
        wg::fence();
        wg::issue_pv<T, /*STEPPED=*/true>(o_acc, p, sm.v_stage(st));
        wg::wait<0>();
        wg::fence_registers(o_acc);
        wg::fence_registers(p);
        hand_back(ring_slots + tile, st);
      };
      int tile = 0;
      // The three-CTA tile keeps one loop: its 80 registers a thread do not hold two bodies without spilling. So do
      // the short tile's causal calls (ONE_LOOP), where one loop measured faster.
      if constexpr (KIND != TileKind::kThreeCtas && !ONE_LOOP) {
        for (; tile < n_unmasked; ++tile) serial_step(tile, std::false_type{});
        for (; tile < n_mine; ++tile) serial_step(tile, std::true_type{});
      } else {
        for (; tile < n_mine; ++tile) serial_step(tile, true);
      }
      for (int tile = n_mine; tile < n_tiles; ++tile) {
        hand_back(ring_slots + tile, acquire(ring_slots + tile));
      }
    } else {
      // Prologue: tile 0's scores and softmax (O is still zero: its alpha is moot).
      int stage = acquire(ring_slots);
      wg::fence();
      my_turn();
      wg::issue_scores<T, /*STEPPED=*/true>(s, q_wg, sm.k_stage(stage));
      end_turn(false);
      wg::wait<0>();
      wg::fence_registers(s);
      settle_store();
      if (n_mine == 1) fa::mbarrier_arrive(&q_empty);  // Q is read: the producer may load the next one
      softmax_tile(0);  // eager: the rows' first maxima, which the shifted max keeps
      fa::pack_p_fragments<T>(p, s);
      alpha[0] = alpha[1] = 1.0f;  // O is zero: the first vote has nothing to rescale

      // O's rescale for tile j - 1's maxima, where a row of the warp moved: issued after S_j, before P_{j-1} V_{j-1}.
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
        wg::issue_scores<T, /*STEPPED=*/true>(s, q_wg, sm.k_stage(stage));  // S_j ...
        rescale_if_moved();                                                     // ... O's rescale while it computes
        wg::issue_pv<T, /*STEPPED=*/true>(o_acc, p, sm.v_stage(prev_stage));  // ... and P_{j-1} V_{j-1} behind it
        end_turn(false);
        wg::wait<1>();                                       // S_j has landed
        wg::fence_registers(s);
        if (tile == n_mine - 1) fa::mbarrier_arrive(&q_empty);
        softmax_tile_as(tile * T::BC, masked);
        wg::wait<0>();  // P_{j-1} V_{j-1} has landed: P overwritten, the stage freed
        wg::fence_registers(o_acc);
        wg::fence_registers(p);
        release(ring_slots + tile - 1, prev_stage, n_tiles);
        fa::pack_p_fragments<T>(p, s);
      };
      int tile = 1;
      for (; tile < n_unmasked; ++tile) overlapped_step(tile, std::false_type{});
      for (; tile < n_mine; ++tile) overlapped_step(tile, std::true_type{});
      const bool last_work = NEXT_EARLY ? next.q0 < 0 : !scheduler.valid(scheduler.next(cursor));
      rescale_if_moved();  // the last tile's maxima (its fences are P V's)
      my_turn();
      wg::issue_pv<T, /*STEPPED=*/true>(o_acc, p, sm.v_stage(stage));
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
      fa::mbarrier_wait(&q_empty, q_phase);  // every consumer's last S has landed: that K is read
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

// Host side: tensor maps for O and Q (B * H heads), K and V (B * H_kv), then the persistent launch
// with the tile the shape takes.
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
    // this step's FA3 sections.
    constexpr bool kCounter = KIND != TileKind::kThreeWgs;
    constexpr bool kOneSection = KIND == TileKind::kThreeWgsQueue;
    static void (*const kernels[2])(Elem*, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap,
                                    fa::TileQueue<T::BR>, fa::AttnShape) = {attention_fwd<Elem, D, KIND, false>,
                                                                             attention_fwd<Elem, D, KIND, kCounter>};
    // The short D = 64 tile's causal calls take the one-loop kernels (step 60), its other calls step 48's two loops.
    constexpr bool kOneLoopCausal = KIND == TileKind::kShort && D == 64;
    static void (*const one_loop_kernels[2])(Elem*, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap,
                                             fa::TileQueue<T::BR>, fa::AttnShape) = {
        attention_fwd<Elem, D, KIND, false, kOneLoopCausal>, attention_fwd<Elem, D, KIND, kCounter, kOneLoopCausal>};
    // Non-causal D = 128 calls take kernels compiled without causal paths (this step).
    constexpr bool kNonCausalKernels = D == 128;
    static void (*const non_causal_kernels[2])(Elem*, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap,
                                               fa::TileQueue<T::BR>, fa::AttnShape) = {
        attention_fwd<Elem, D, KIND, false, false, kNonCausalKernels>,
        attention_fwd<Elem, D, KIND, kCounter, false, kNonCausalKernels>};
    // The counter's three-warpgroup tile takes the counter from as many tiles a CTA as its rule asks (step 63), its
    // second round mirrored under FA_TILE_MIRRORED_UNDER_TILES_PER_CTA_D64 tiles a CTA (step 64).
    constexpr int kQueueTilesPerCta = kOneSection ? FA_TILE_MIRRORED_MIN_TILES_PER_SM_D64 : fa::kQueueTilesPerCta;
    constexpr int kMirrorUnder = kOneSection ? FA_TILE_MIRRORED_UNDER_TILES_PER_CTA_D64 : 0;
    // Long causal D = 128 calls take FA3's sections (step 65; the rule is fa::takes_fa3_sections_causal_d128), but
    // those of fewer than 8192 keys that the older queue balances keep it (this step, fa::keeps_older_queue); the
    // counter's three-warpgroup tile takes FA3's sections too (step 68).
    return fa::launch_from_queue<T, D, fa::BalancedTileScheduler, /*ONE_WAVE=*/true, kCounter, kOneSection,
                                 kQueueTilesPerCta, kMirrorUnder, /*FA3_SECTIONS=*/true, /*FA3_SECTIONS_D64=*/true,
                                 /*OLDER_UNDER_PAIRS=*/true>(
        kOneLoopCausal && shape.causal      ? one_loop_kernels
        : kNonCausalKernels && !shape.causal ? non_causal_kernels
                                             : kernels,
        shape, stream, o, o_map, q_map, k_map, v_map);
  }
  static int run(const Elem* q, const Elem* k, const Elem* v, Elem* o, const fa::AttnShape& shape,
                 cudaStream_t stream) {
    return fa::run_hopper_tile<D, /*THREE_CTAS=*/true, /*LONG_D64=*/true, /*THREE_WGS=*/true,
                               /*THREE_WGS_CAUSAL=*/true, /*THREE_WGS_QUEUE=*/true, /*COUNTER_TILE_CAUSAL=*/true,
                               /*MIRRORED=*/true, /*OVERLAPPED_MIN_S=*/true>(
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
