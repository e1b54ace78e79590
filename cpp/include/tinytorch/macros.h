#pragma once
// Lets the same inline helpers compile for host C++ and CUDA device code.
#if defined(__CUDACC__)
#define TT_HOST_DEVICE __host__ __device__
#define TT_INLINE __host__ __device__ __forceinline__
#else
#define TT_HOST_DEVICE
#define TT_INLINE inline
#endif
