// Device-side helpers of the collectors: fill buffers with the checkable
// patterns (pattern.h), count mismatching outputs, and fill GEMM operands.
// Plain C++ declarations; the kernels live in kernels.cu.
#pragma once

#include "shardlab/collectors/pattern.h"

#include <cstdint>
#include <cuda_runtime_api.h>
#include <string_view>

namespace shardlab::collectors {

enum class DeviceType { F32, BF16, F16, S32, F8E4M3 };
/// f32, bf16, f16, s32, f8e4m3fn; false if unknown.
bool deviceTypeOf(std::string_view dtype, DeviceType *out);

/// Writes inputValue(spec, i) for i < count.
cudaError_t fillInput(void *buf, DeviceType t, int64_t count,
                      const PatternSpec &spec, cudaStream_t stream);
/// Writes `value` everywhere (clears outputs before a checked run).
cudaError_t fillConstant(void *buf, DeviceType t, int64_t count, float value,
                         cudaStream_t stream);
/// Adds to *d_wrong the number of i < count with buf[i] != ExpectedValue.
cudaError_t countWrong(const void *buf, DeviceType t, int64_t count,
                       const PatternSpec &spec, unsigned long long *d_wrong,
                       cudaStream_t stream);
/// Small pseudo-random values in [-1, 1) (GEMM operands).
cudaError_t fillRandom(void *buf, DeviceType t, int64_t count, uint32_t seed,
                       cudaStream_t stream);

} // namespace shardlab::collectors
