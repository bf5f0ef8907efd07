// The tracker's layers between two correlations as one persistent kernel
// (tracker_program.hpp). Each phase walks its work items (a tile product's
// blocks of 16 rows x 64 columns, attend_cached's blocks of 4 (row, head)
// pairs, cross_attention's blocks of 64 query rows of one head) over the grid's
// blocks, through the same device functions as the kernels that run one layer
// each, then the grid waits for every block (cooperative groups). The grid is
// as many blocks as are resident at once, so every block reaches each barrier.
#include "edgetap/kernels/cuda/tracker_program.hpp"

#include <cooperative_groups.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "attend_cached.cuh"
#include "cross_attention.cuh"
#include "edgetap/kernels/cuda/check.hpp"
#include "tile_products.cuh"

namespace edgetap::kernels::cuda {

using namespace detail;

namespace {

static_assert(sizeof(TrackerProgram) <= 4096, "a kernel parameter of at most 4 KB");
static_assert(kRowWarps == kAttendWarps && kRowWarps == kCrossWarps, "one block shape for every phase");
constexpr int kProgramThreads = kRowWarps * kWarp;
constexpr int kMlpRatio = kTrackerProgramMlpRatio;

// The block's shared memory, one phase's view at a time.
template <int W, int DH>
union ProgramShared {
  TileRows<W> rows;
  TileRows<kMlpRatio * W> hidden_rows;
  CrossTile<DH> tile;
};

template <int K, bool kNormalize>
__device__ void run_product(const ProductPhase& ph, int rows, TileRows<K>& tile) {
  const int row_blocks = (rows + kRowBlock - 1) / kRowBlock;
  const int items = row_blocks * ((ph.outputs + kColumnBlock - 1) / kColumnBlock);
  for (int item = blockIdx.x; item < items; item += gridDim.x) {
    tile_product_block<K, kNormalize>(ph.in, rows, ph.weight, ph.outputs, ph.out, item % row_blocks,
                                      item / row_blocks, tile);
    __syncthreads();  // the rows in shared memory are the next item's
  }
}

__device__ void run_attend(const TrackerProgram& p, const AttendPhase& ph) {
  const AttendParams<__half> a{ph.qkv,
                               ph.qkv_bias,
                               p.caches.slots,
                               p.rows,
                               p.heads,
                               p.width / p.heads,
                               p.caches.window,
                               false,
                               p.caches.keys,
                               p.caches.values,
                               p.caches.slot_stride,
                               ph.layer_offset,
                               p.caches.rel_bias,
                               p.caches.query_frame,
                               p.caches.clock,
                               1.f / sqrtf(static_cast<float>(p.width / p.heads)),  // as attend_cached's launcher
                               ph.out};
  const int items = (p.rows * p.heads + kAttendWarps - 1) / kAttendWarps;
  for (int item = blockIdx.x; item < items; item += gridDim.x) {
    attend_cached_pair(a, item * kAttendWarps + static_cast<int>(threadIdx.x) / kWarp);
  }
}

template <int DH>
__device__ void run_cross(const TrackerProgram& p, const CrossPhase& ph, CrossTile<DH>& tile) {
  const int row_blocks = (p.rows + kBlockRows - 1) / kBlockRows, items = row_blocks * p.heads;
  for (int item = blockIdx.x; item < items; item += gridDim.x) {
    cross_attention_block<DH>(ph.qkv, ph.qkv_bias, p.rows, p.width, ph.out, item % row_blocks, item / row_blocks, tile.keys,
                              tile.values_t);
    __syncthreads();  // the tile in shared memory is the next item's
  }
}

// Launch: cooperative, kProgramThreads threads, sizeof(ProgramShared<W, DH>) of dynamic shared memory.
template <int W, int DH>
__global__ void __launch_bounds__(kProgramThreads) tracker_program_kernel(const __grid_constant__ TrackerProgram p) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  auto& shared = *reinterpret_cast<ProgramShared<W, DH>*>(shared_bytes);
  const cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  for (int i = 0; i < p.count; ++i) {
    const Phase& ph = p.phases[i];
    switch (ph.kind) {
      case PhaseKind::normed_product: run_product<W, true>(ph.product, p.rows, shared.rows); break;
      case PhaseKind::half_product:
        if (ph.product.depth == W) {
          run_product<W, false>(ph.product, p.rows, shared.rows);
        } else {
          run_product<kMlpRatio * W, false>(ph.product, p.rows, shared.hidden_rows);
        }
        break;
      case PhaseKind::attend_cached: run_attend(p, ph.attend); break;
      case PhaseKind::cross_attention: run_cross<DH>(p, ph.cross, shared.tile); break;
    }
    if (i + 1 < p.count) grid.sync();
  }
}

// The most work items any phase has: more blocks than this would only wait at the barriers.
int most_items(const TrackerProgram& p) {
  int most = 1;
  for (int i = 0; i < p.count; ++i) {
    const Phase& ph = p.phases[i];
    switch (ph.kind) {
      case PhaseKind::normed_product:
      case PhaseKind::half_product:
        most = std::max(most, blocks_of(p.rows, kRowBlock) * blocks_of(ph.product.outputs, kColumnBlock));
        break;
      case PhaseKind::attend_cached: most = std::max(most, blocks_of(p.rows * p.heads, kAttendWarps)); break;
      case PhaseKind::cross_attention: most = std::max(most, blocks_of(p.rows, kBlockRows) * p.heads); break;
    }
  }
  return most;
}

// Every phase's shapes the kernel instance takes: the products' depths W or 4 W, even outputs.
void check_phases(const TrackerProgram& p) {
  const int width = p.width;
  for (int i = 0; i < p.count; ++i) {
    const Phase& ph = p.phases[i];
    if (ph.kind != PhaseKind::normed_product && ph.kind != PhaseKind::half_product) continue;
    const bool depth_taken = ph.product.depth == width ||
                             (ph.kind == PhaseKind::half_product && ph.product.depth == kMlpRatio * width);
    if (!depth_taken || ph.product.outputs <= 0 || ph.product.outputs % 2 != 0) {
      throw std::invalid_argument("tracker program: phase " + std::to_string(i) + " is a product of depth " +
                                  std::to_string(ph.product.depth) + " to " + std::to_string(ph.product.outputs) +
                                  " outputs, which a model of width " + std::to_string(width) + " does not have");
    }
  }
}

template <int W, int DH>
void launch(const TrackerProgram& p, cudaStream_t stream) {
  const auto kernel = tracker_program_kernel<W, DH>;
  constexpr std::size_t kShared = sizeof(ProgramShared<W, DH>);
  // Resident blocks per SM and the SM count: asked once per process (the device does not change).
  static const int resident = [&] {
    int device = 0, sms = 0, per_sm = 0;
    EDGETAP_CUDA_CHECK(cudaGetDevice(&device));
    EDGETAP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    EDGETAP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kProgramThreads, kShared));
    return sms * per_sm;
  }();
  if (resident == 0) throw std::runtime_error("tracker program: no block of it fits an SM");
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(std::min(resident, most_items(p))));
  config.blockDim = dim3(kProgramThreads);
  config.dynamicSmemBytes = kShared;
  config.stream = stream;
  cudaLaunchAttribute cooperative{};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  EDGETAP_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, p));
}

template <int W>
void launch_width(const TrackerProgram& p, int head_dim, cudaStream_t stream) {
  switch (head_dim) {
    case 16: launch<W, 16>(p, stream); break;
    case 32: launch<W, 32>(p, stream); break;
    default: launch<W, 64>(p, stream); break;
  }
}

}  // namespace

bool tracker_program_takes(int width, int mlp_hidden, int head_dim) {
  return (width == 128 || width == 256) && mlp_hidden == kMlpRatio * width &&
         (head_dim == 16 || head_dim == 32 || head_dim == 64) && head_dim <= kMaxHeadDim;
}

void run_tracker_program(const TrackerProgram& p, cudaStream_t stream) {
  const int head_dim = p.heads > 0 ? p.width / p.heads : 0;
  if (!tracker_program_takes(p.width, kMlpRatio * p.width, head_dim) || p.width % p.heads != 0) {
    throw std::invalid_argument("tracker program: a model of width " + std::to_string(p.width) + " and " +
                                std::to_string(p.heads) + " heads is not one it takes");
  }
  if (p.count < 0 || p.count > kMaxPhases) {
    throw std::invalid_argument("tracker program: " + std::to_string(p.count) + " phases (at most " +
                                std::to_string(kMaxPhases) + ")");
  }
  if (p.rows == 0 || p.count == 0) return;
  check_phases(p);
  checked_count(static_cast<std::size_t>(p.rows) * 3 * p.width);
  if (p.width == 128) {
    launch_width<128>(p, head_dim, stream);
  } else {
    launch_width<256>(p, head_dim, stream);
  }
}

}  // namespace edgetap::kernels::cuda
