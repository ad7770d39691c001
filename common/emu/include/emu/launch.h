/* emu/launch.h — kernel launches and __shared__ memory on the emulated CUDA
 * device (common/emu; included by cuda_runtime.h). Code calls none of this
 * by hand: cu2cc writes the calls.
 *
 * Contract
 * - cu2cc turns `k<<<grid, block, shared, stream>>>(args)` into
 *       emu_launch_(emu_site_{__FILE__, __LINE__, "k"},
 *                   emu_cfg_make_(grid, block, shared, stream),
 *                   [=](auto... emu_a_) { k(emu_a_...); }, args)
 *   The arguments are evaluated once, at the launch, and copied (by value,
 *   as CUDA copies them); each thread calls the kernel with its own copies.
 *   Template kernels deduce their types from the arguments, as under nvcc.
 * - A launch is checked at once (the configuration: CUDA's limits; pointer
 *   arguments: NULL, device or page-locked host memory, else
 *   EMU_HOST_POINTER) and queued on its stream; errors found then are the
 *   thread's last error (cudaGetLastError), as a GPU's launch errors are.
 * - `__shared__ T a[N], b;` in a kernel becomes, per name, storage of the
 *   running block from emu_shared_: one heap object of exactly sizeof(T[N])
 *   bytes per block, filled with 0xff bytes (a GPU's shared memory starts
 *   with whatever was there), freed when the block ends; the first thread of
 *   the block to reach the declaration makes it, the others find it.
 *   `extern __shared__ T d[];` is the launch's dynamic shared memory, exactly
 *   `shared` bytes. Static and dynamic together may use 48 KiB per block.
 */
#ifndef EMU_LAUNCH_H
#define EMU_LAUNCH_H

#include <stddef.h> // size_t
#include <tuple> // std::tuple, std::apply
#include <type_traits> // std::is_pointer

struct emu_site_ {
    const char *file;
    int line;
    const char *kernel; /* the launch's callee, as written */
};

struct emu_cfg_ {
    dim3 grid, block;
    size_t shared;
    cudaStream_t stream;
};

static inline emu_cfg_ emu_cfg_make_(dim3 grid, dim3 block, size_t shared = 0, cudaStream_t stream = 0)
{
    return emu_cfg_{grid, block, shared, stream};
}

#define EMU_MAX_PTR_ARGS 32

/* A launch with its types erased: the runtime owns it from emu_submit_ on. */
struct emu_kernel_ {
    void (*run)(void *closure); /* runs one thread: the kernel on copies of the arguments */
    void (*destroy)(void *closure);
    void *closure;
    int nptr; /* pointer arguments: */
    const void *ptr[EMU_MAX_PTR_ARGS];
    int ptr_arg[EMU_MAX_PTR_ARGS]; /* 1-based argument number */
    unsigned char writable[EMU_MAX_PTR_ARGS]; /* 1 unless it points to const */
};

/* Checks and queues the launch; the error is also the thread's last error. */
cudaError_t emu_submit_(const emu_site_ &site, const emu_cfg_ &cfg, emu_kernel_ *k);

template <typename F, typename... A> struct emu_closure_ {
    F f;
    std::tuple<A...> args;
    static void run(void *p)
    {
        emu_closure_ *c = (emu_closure_ *)p;
        std::apply(c->f, c->args); // the lambda takes each by value: the thread's own copies
    }
    static void destroy(void *p)
    {
        delete (emu_closure_ *)p;
    }
};

template <typename T> static inline void emu_note_arg_(emu_kernel_ *k, int i, const T &v)
{
    if constexpr (std::is_pointer<T>::value && !std::is_function<typename std::remove_pointer<T>::type>::value) {
        if (k->nptr < EMU_MAX_PTR_ARGS) {
            k->ptr[k->nptr] = (const void *)v;
            k->ptr_arg[k->nptr] = i;
            k->writable[k->nptr] = !std::is_const<typename std::remove_pointer<T>::type>::value;
            k->nptr++;
        }
    }
}

template <typename F, typename... A>
static inline void emu_launch_(const emu_site_ &site, const emu_cfg_ &cfg, F f, A... a)
{
    emu_kernel_ k{};
    int i = 0;
    (emu_note_arg_(&k, ++i, a), ...);
    (void)i;
    k.closure = new emu_closure_<F, A...>{f, std::tuple<A...>(a...)};
    k.run = emu_closure_<F, A...>::run;
    k.destroy = emu_closure_<F, A...>::destroy;
    emu_submit_(site, cfg, &k);
}

/* The running block's storage for the __shared__ declaration whose key is
 * the address of a static of that declaration: bytes, aligned to align. */
void *emu_shared_(const void *key, size_t bytes, size_t align, const char *name, const char *file, int line);
/* The running block's dynamic shared memory (the launch's `shared` bytes). */
void *emu_dyn_shared_(size_t align, const char *name, const char *file, int line);

#endif /* EMU_LAUNCH_H */
