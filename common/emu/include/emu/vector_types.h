/* emu/vector_types.h — dim3, uint3 and CUDA's small vector types, as host C++
 * (the emulated CUDA device, common/emu; included by cuda_runtime.h).
 *
 * Contract
 * - Each type has CUDA's members, size and alignment (float4 and int4 are 16
 *   bytes aligned to 16, float2 8 aligned to 8, ...), so arrays of them lay
 *   out in memory as on a GPU; make_T(...) builds one. Cannot fail.
 * - dim3's unnamed members default to 1, as CUDA's: dim3(256) is (256, 1, 1).
 */
#ifndef EMU_VECTOR_TYPES_H
#define EMU_VECTOR_TYPES_H

struct uint3 {
    unsigned int x, y, z;
};

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz)
    {
    }
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z)
    {
    }
    constexpr operator uint3() const
    {
        return uint3{x, y, z};
    }
};

#define EMU_VEC1(T, N, A)                   \
    struct __attribute__((aligned(A))) N##1 \
    {                                       \
        T x;                                \
    };                                      \
    static inline N##1 make_##N##1(T x)     \
    {                                       \
        return N##1 {x};                    \
    }
#define EMU_VEC2(T, N, A)                    \
    struct __attribute__((aligned(A))) N##2  \
    {                                        \
        T x, y;                              \
    };                                       \
    static inline N##2 make_##N##2(T x, T y) \
    {                                        \
        return N##2 {x, y};                  \
    }
#define EMU_VEC3(T, N)                            \
    struct N##3                                   \
    {                                             \
        T x, y, z;                                \
    };                                            \
    static inline N##3 make_##N##3(T x, T y, T z) \
    {                                             \
        return N##3 {x, y, z};                    \
    }
#define EMU_VEC4(T, N, A)                              \
    struct __attribute__((aligned(A))) N##4            \
    {                                                  \
        T x, y, z, w;                                  \
    };                                                 \
    static inline N##4 make_##N##4(T x, T y, T z, T w) \
    {                                                  \
        return N##4 {x, y, z, w};                      \
    }

EMU_VEC1(char, char, 1)
EMU_VEC2(char, char, 2)
EMU_VEC4(char, char, 4)
EMU_VEC1(unsigned char, uchar, 1)
EMU_VEC2(unsigned char, uchar, 2)
EMU_VEC4(unsigned char, uchar, 4)
EMU_VEC2(short, short, 4)
EMU_VEC4(short, short, 8)
EMU_VEC2(unsigned short, ushort, 4)
EMU_VEC4(unsigned short, ushort, 8)
EMU_VEC1(int, int, 4)
EMU_VEC2(int, int, 8)
EMU_VEC3(int, int)
EMU_VEC4(int, int, 16)
EMU_VEC1(unsigned int, uint, 4)
EMU_VEC2(unsigned int, uint, 8)
EMU_VEC4(unsigned int, uint, 16)
EMU_VEC2(long long, longlong, 16)
EMU_VEC2(unsigned long long, ulonglong, 16)
EMU_VEC1(float, float, 4)
EMU_VEC2(float, float, 8)
EMU_VEC3(float, float)
EMU_VEC4(float, float, 16)
EMU_VEC1(double, double, 8)
EMU_VEC2(double, double, 16)

static inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z)
{
    return uint3{x, y, z};
}

#undef EMU_VEC1
#undef EMU_VEC2
#undef EMU_VEC3
#undef EMU_VEC4

#endif /* EMU_VECTOR_TYPES_H */
