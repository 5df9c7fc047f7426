// Pattern fill / check kernels and GEMM operand initialisation.
#include "kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace shardlab::collectors {
namespace {

constexpr int kThreads = 256;

unsigned blocks(int64_t count) {
  const int64_t b = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

template <class T> __device__ T fromFloat(float v) { return T(v); }
template <> __device__ __nv_bfloat16 fromFloat(float v) {
  return __float2bfloat16(v);
}
template <> __device__ __half fromFloat(float v) { return __float2half(v); }
template <> __device__ int32_t fromFloat(float v) {
  return static_cast<int32_t>(v);
}
template <> __device__ __nv_fp8_e4m3 fromFloat(float v) {
  return __nv_fp8_e4m3(v);
}
template <class T> __device__ float toFloat(T v) { return float(v); }
template <> __device__ float toFloat(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <> __device__ float toFloat(__half v) { return __half2float(v); }

template <class T>
__global__ void fillInputKernel(T *buf, int64_t count, PatternSpec spec) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x)
    buf[i] = fromFloat<T>(static_cast<float>(inputValue(spec, i)));
}

template <class T>
__global__ void fillConstantKernel(T *buf, int64_t count, float value) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x)
    buf[i] = fromFloat<T>(value);
}

template <class T>
__global__ void countWrongKernel(const T *buf, int64_t count, PatternSpec spec,
                                 unsigned long long *wrong) {
  unsigned long long local = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t want = expectedValue(spec, i);
    local += want >= 0 && toFloat(buf[i]) != static_cast<float>(want);
  }
  if (local)
    atomicAdd(wrong, local);
}

template <class T>
__global__ void fillRandomKernel(T *buf, int64_t count, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    buf[i] = fromFloat<T>(static_cast<float>(h & 0xffff) / 32768.0f - 1.0f);
  }
}

// Calls f(typed pointer) for the buffer's element type.
template <class F> cudaError_t dispatch(void *buf, DeviceType t, F f) {
  switch (t) {
  case DeviceType::F32:
    f(static_cast<float *>(buf));
    break;
  case DeviceType::BF16:
    f(static_cast<__nv_bfloat16 *>(buf));
    break;
  case DeviceType::F16:
    f(static_cast<__half *>(buf));
    break;
  case DeviceType::S32:
    f(static_cast<int32_t *>(buf));
    break;
  case DeviceType::F8E4M3:
    f(static_cast<__nv_fp8_e4m3 *>(buf));
    break;
  }
  return cudaGetLastError();
}

} // namespace

bool deviceTypeOf(std::string_view d, DeviceType *out) {
  if (d == "f32")
    *out = DeviceType::F32;
  else if (d == "bf16")
    *out = DeviceType::BF16;
  else if (d == "f16")
    *out = DeviceType::F16;
  else if (d == "s32")
    *out = DeviceType::S32;
  else if (d == "f8e4m3fn")
    *out = DeviceType::F8E4M3;
  else
    return false;
  return true;
}

cudaError_t fillInput(void *buf, DeviceType t, int64_t count,
                      const PatternSpec &spec, cudaStream_t stream) {
  return dispatch(buf, t, [&](auto *p) {
    fillInputKernel<<<blocks(count), kThreads, 0, stream>>>(p, count, spec);
  });
}

cudaError_t fillConstant(void *buf, DeviceType t, int64_t count, float value,
                         cudaStream_t stream) {
  return dispatch(buf, t, [&](auto *p) {
    fillConstantKernel<<<blocks(count), kThreads, 0, stream>>>(p, count, value);
  });
}

cudaError_t countWrong(const void *buf, DeviceType t, int64_t count,
                       const PatternSpec &spec, unsigned long long *d_wrong,
                       cudaStream_t stream) {
  return dispatch(const_cast<void *>(buf), t, [&](auto *p) {
    countWrongKernel<<<blocks(count), kThreads, 0, stream>>>(p, count, spec,
                                                             d_wrong);
  });
}

cudaError_t fillRandom(void *buf, DeviceType t, int64_t count, uint32_t seed,
                       cudaStream_t stream) {
  return dispatch(buf, t, [&](auto *p) {
    fillRandomKernel<<<blocks(count), kThreads, 0, stream>>>(p, count, seed);
  });
}

} // namespace shardlab::collectors
