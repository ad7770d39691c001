/* memory.cc — device and page-locked memory of the emulated CUDA device:
 * allocations bounded exactly, the table that tells device memory from host
 * memory, copies and memsets checked against it, and the SIGSEGV handler
 * that turns a touch of a guard page into a report naming the kernel.
 *
 * An allocation is its own mapping: no-access guard pages around read-write
 * pages, the object placed so it ends where the guard begins (its start then
 * keeps cudaMalloc's alignment, up to 256, as far as its size allows); the
 * few bytes of slack hold a canary, checked after each kernel and at
 * cudaFree. Under AddressSanitizer it is a heap object of exactly its size,
 * and ASan reports what the guards would. */
#include <dlfcn.h> // dladdr
#include <elf.h> // Elf64_Ehdr
#include <map> // std::map
#include <pthread.h> // pthread_mutex_t
#include <signal.h> // sigaction
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, posix_memalign
#include <string.h> // memcpy, memset
#include <sys/mman.h> // mmap
#include <sys/wait.h> // waitpid
#include <ucontext.h> // ucontext_t, REG_ERR
#include <unistd.h> // sysconf, fork, execlp

#include "internal.h"

#ifdef EMU_ASAN
#include <sanitizer/common_interface_defs.h> // __sanitizer_set_death_callback
#endif

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static std::map<uintptr_t, emu_alloc> *table; /* by start; both kinds */
static size_t device_bytes;
static unsigned next_id = 1;

static size_t page_bytes(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t total_bytes(void)
{
    return (size_t)sysconf(_SC_PHYS_PAGES) * page_bytes();
}

// ---- guarded memory ----

void *emu_guarded_alloc(size_t bytes, size_t align, char **map, size_t *map_bytes)
{
#ifdef EMU_ASAN
    void *p = NULL;
    *map = NULL;
    *map_bytes = 0;
    if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, bytes ? bytes : 1) != 0)
        return NULL;
    return p;
#else
    size_t pg = page_bytes(), pages = (bytes + pg - 1) / pg;
    if (pages == 0)
        pages = 1;
    size_t total = (pages + 2) * pg;
    void *m = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char *lo = (char *)m + pg, *end = lo + pages * pg;
    if (mprotect(lo, pages * pg, PROT_READ | PROT_WRITE) != 0) {
        munmap(m, total);
        return NULL;
    }
    char *p = (char *)((uintptr_t)(end - bytes) & ~(uintptr_t)(align - 1));
    memset(lo, EMU_CANARY, (size_t)(p - lo));
    memset(p + bytes, EMU_CANARY, (size_t)(end - (p + bytes)));
    *map = (char *)m;
    *map_bytes = total;
    return p;
#endif
}

void emu_guarded_free(void *p, char *map, size_t map_bytes)
{
    if (map != NULL)
        munmap(map, map_bytes);
    else
        free(p);
}

int emu_guard_intact(const char *p, size_t bytes, const char *map, size_t map_bytes, long *offset)
{
    if (map == NULL)
        return 1;
    size_t pg = page_bytes();
    for (const char *c = map + pg; c < p; c++)
        if ((unsigned char)*c != EMU_CANARY) {
            *offset = (long)(c - p);
            return 0;
        }
    for (const char *c = p + bytes; c < map + map_bytes - pg; c++)
        if ((unsigned char)*c != EMU_CANARY) {
            *offset = (long)(c - p);
            return 0;
        }
    return 1;
}

// ---- the table ----

int emu_mem_find(const void *ptr, emu_alloc *a)
{
    uintptr_t p = (uintptr_t)ptr;
    int found = 0;
    pthread_mutex_lock(&mu);
    if (table != NULL && ptr != NULL) {
        auto it = table->upper_bound(p);
        if (it != table->begin()) {
            --it;
            if (p <= it->first + it->second.bytes) {
                *a = it->second;
                found = 1;
            }
        }
    }
    pthread_mutex_unlock(&mu);
    return found;
}

static void add(const emu_alloc &a)
{
    pthread_mutex_lock(&mu);
    if (table == NULL)
        table = new std::map<uintptr_t, emu_alloc>();
    (*table)[(uintptr_t)a.p] = a;
    if (!a.pinned)
        device_bytes += a.bytes;
    pthread_mutex_unlock(&mu);
}

/* Removes the allocation that starts at p, of kind pinned; 0 if none. */
static int take(const void *p, int pinned, emu_alloc *out)
{
    int found = 0;
    pthread_mutex_lock(&mu);
    if (table != NULL) {
        auto it = table->find((uintptr_t)p);
        if (it != table->end() && it->second.pinned == pinned) {
            *out = it->second;
            table->erase(it);
            if (!pinned)
                device_bytes -= out->bytes;
            found = 1;
        }
    }
    pthread_mutex_unlock(&mu);
    return found;
}

size_t emu_device_bytes(void)
{
    pthread_mutex_lock(&mu);
    size_t b = device_bytes;
    pthread_mutex_unlock(&mu);
    return b;
}

void emu_mem_reset(void)
{
    pthread_mutex_lock(&mu);
    std::map<uintptr_t, emu_alloc> *t = table;
    table = NULL;
    device_bytes = 0;
    pthread_mutex_unlock(&mu);
    if (t == NULL)
        return;
    for (auto &kv : *t)
        emu_guarded_free(kv.second.p, kv.second.map, kv.second.map_bytes);
    delete t;
}

void emu_mem_describe_fault(const void *addr, char *out, size_t len)
{
    const char *a = (const char *)addr;
    size_t pg = page_bytes();
    out[0] = '\0';
    if (table == NULL) // no lock: the process is about to end, and the lock may be held
        return;
    for (auto &kv : *table) {
        const emu_alloc &e = kv.second;
        if (e.map == NULL || a < e.map || a >= e.map + e.map_bytes)
            continue;
        snprintf(out, len, "offset %ld of the %zu-byte %s allocation #%u, %s", (long)(a - e.p), e.bytes,
                 e.pinned ? "page-locked" : "device", e.id,
                 a >= e.map + e.map_bytes - pg ? "past its end" : "before its start");
        return;
    }
}

// ---- faults ----
#ifndef EMU_ASAN // ASan reports bounds itself, and handles SIGSEGV

static struct sigaction old_segv;

/* addr2line's function and file:line for pc, on stderr, where addr2line exists. */
static void print_source_line(void *pc)
{
    Dl_info info;
    if (dladdr(pc, &info) == 0 || info.dli_fname == NULL || info.dli_fbase == NULL)
        return;
    // a shared object or a PIE: the offset from where it was loaded; an ET_EXEC: the address itself
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)info.dli_fbase;
    uintptr_t at = eh->e_type == ET_DYN ? (uintptr_t)pc - (uintptr_t)info.dli_fbase : (uintptr_t)pc;
    char off[32], exe[64];
    snprintf(off, sizeof off, "%#lx", (unsigned long)at);
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int)getpid()); // not /proc/self: addr2line's own
    const char *obj = info.dli_fname[0] == '/' ? info.dli_fname : exe;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(2, 1);
        execlp("addr2line", "addr2line", "-C", "-p", "-f", "-e", obj, off, (char *)NULL);
        _exit(127);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
    char what[600] = "", at[700] = "", msg[1600];
    int kind = EMU_OUT_OF_BOUNDS;
    if (!emu_block_describe_fault(si->si_addr, what, sizeof what, &kind))
        emu_mem_describe_fault(si->si_addr, what, sizeof what);
    if (what[0] == '\0') { // not ours: whoever handled it before, or the default
        sigaction(SIGSEGV, &old_segv, NULL);
        if ((old_segv.sa_flags & SA_SIGINFO) && old_segv.sa_sigaction != NULL)
            old_segv.sa_sigaction(sig, si, ucv);
        return;
    }
    const char *rw = "an access";
    void *pc = NULL;
#if defined(__x86_64__) && defined(REG_ERR)
    ucontext_t *uc = (ucontext_t *)ucv;
    rw = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? "a write" : "a read";
    pc = (void *)uc->uc_mcontext.gregs[REG_RIP];
#endif
    emu_block_describe(at, sizeof at);
    snprintf(msg, sizeof msg, "emulated CUDA: %s: %s: %s at %p, %s\n", at[0] ? at : "host code (outside a kernel)",
             kind == EMU_STACK_OVERFLOW ? "stack overflow" : "out of bounds", rw, si->si_addr, what);
    emu_print_always(msg);
    if (pc != NULL) {
        emu_print_always("  the access: ");
        print_source_line(pc);
    }
    sigaction(SIGSEGV, &old_segv, NULL); // the access faults again and ends the process
}

static void install_once(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old_segv);
}
#endif

#ifdef EMU_ASAN
/* A sanitizer's report ends the process: say which kernel, block and thread ran. */
static void on_death(void)
{
    char at[800], msg[900];
    emu_block_describe(at, sizeof at);
    if (at[0] == '\0')
        return;
    snprintf(msg, sizeof msg, "emulated CUDA: the report above comes from %s\n", at);
    emu_print_always(msg);
}
#endif

void emu_fault_handler_install(void)
{
#ifdef EMU_ASAN
    static int once;
    if (!__atomic_exchange_n(&once, 1, __ATOMIC_SEQ_CST))
        __sanitizer_set_death_callback(on_death);
#else
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_once);
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE)) { // a stack for the handler, per thread
        size_t bytes = 64 * 1024;
        void *p = malloc(bytes);
        stack_t ss;
        ss.ss_sp = p;
        ss.ss_size = bytes;
        ss.ss_flags = 0;
        if (p != NULL && sigaltstack(&ss, NULL) != 0)
            free(p);
    }
#endif
}

// ---- the API: allocations ----

static cudaError_t sticky(void)
{
    cudaError_t e = emu_sticky();
    return e != cudaSuccess ? emu_error(e, 0, NULL, NULL, "%s", "") : cudaSuccess;
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    if (sticky() != cudaSuccess)
        return emu_sticky();
    if (devPtr == NULL)
        return emu_error(cudaErrorInvalidValue, 0, NULL, NULL, "cudaMalloc: devPtr is NULL");
    *devPtr = NULL;
    if (size == 0)
        return cudaSuccess;
    if (size > total_bytes() - emu_device_bytes())
        return emu_error(cudaErrorMemoryAllocation, 0, NULL, NULL,
                         "cudaMalloc(%zu bytes): more than the %zu bytes left of the emulated device's memory", size,
                         total_bytes() - emu_device_bytes());
    emu_alloc a;
    memset(&a, 0, sizeof a);
    size_t align = size & (~size + 1); // the lowest set bit: the largest power of two dividing size
    a.p = (char *)emu_guarded_alloc(size, align > 256 ? 256 : align, &a.map, &a.map_bytes);
    if (a.p == NULL)
        return emu_error(cudaErrorMemoryAllocation, 0, NULL, NULL, "cudaMalloc(%zu bytes): out of host memory", size);
    memset(a.p, EMU_FILL, size);
    a.bytes = size;
    pthread_mutex_lock(&mu);
    a.id = next_id++;
    pthread_mutex_unlock(&mu);
    add(a);
    *devPtr = a.p;
    return cudaSuccess;
}

cudaError_t cudaFree(void *devPtr)
{
    if (devPtr == NULL)
        return cudaSuccess;
    emu_dev_lock lock;
    cudaError_t e = emu_drain_all(); // cudaFree waits for the device
    if (e != cudaSuccess)
        return emu_error(e, 0, NULL, NULL, "%s", "");
    emu_alloc a;
    if (!take(devPtr, 0, &a)) {
        emu_alloc other;
        int is_pinned = emu_mem_find(devPtr, &other) && other.pinned && other.p == devPtr;
        return emu_error(cudaErrorInvalidValue, EMU_BAD_COPY, "cudaFree", "",
                         is_pinned ? "cudaFree(%p): page-locked host memory from cudaMallocHost: free it with "
                                     "cudaFreeHost"
                                   : "cudaFree(%p): not a pointer cudaMalloc returned, or freed already",
                         devPtr);
    }
    long off = 0;
    int intact = emu_guard_intact(a.p, a.bytes, a.map, a.map_bytes, &off);
    emu_guarded_free(a.p, a.map, a.map_bytes);
    if (!intact)
        return emu_error(cudaErrorIllegalAddress, EMU_OUT_OF_BOUNDS, "cudaFree", "",
                         "cudaFree(%p): something (a kernel or a copy) wrote at offset %ld of the %zu-byte device "
                         "allocation #%u, %s",
                         devPtr, off, a.bytes, a.id, off < 0 ? "before its start" : "past its end");
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    if (sticky() != cudaSuccess)
        return emu_sticky();
    if (ptr == NULL)
        return emu_error(cudaErrorInvalidValue, 0, NULL, NULL, "cudaMallocHost: ptr is NULL");
    emu_alloc a;
    memset(&a, 0, sizeof a);
    a.p = (char *)malloc(size ? size : 1);
    if (a.p == NULL)
        return emu_error(cudaErrorMemoryAllocation, 0, NULL, NULL, "cudaMallocHost(%zu bytes): out of memory", size);
    a.bytes = size;
    a.pinned = 1;
    pthread_mutex_lock(&mu);
    a.id = next_id++;
    pthread_mutex_unlock(&mu);
    add(a);
    *ptr = a.p;
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    (void)flags;
    return cudaMallocHost(ptr, size);
}

cudaError_t cudaFreeHost(void *ptr)
{
    if (ptr == NULL)
        return cudaSuccess;
    emu_dev_lock lock;
    emu_drain_all();
    emu_alloc a;
    if (!take(ptr, 1, &a))
        return emu_error(cudaErrorInvalidValue, EMU_BAD_COPY, "cudaFreeHost", "",
                         "cudaFreeHost(%p): not a pointer cudaMallocHost returned, or freed already", ptr);
    free(a.p);
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    if (free_bytes == NULL || total == NULL)
        return emu_error(cudaErrorInvalidValue, 0, NULL, NULL, "cudaMemGetInfo: NULL argument");
    *total = total_bytes();
    *free_bytes = *total - emu_device_bytes();
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *ptr)
{
    if (attr == NULL)
        return emu_error(cudaErrorInvalidValue, 0, NULL, NULL, "cudaPointerGetAttributes: attributes is NULL");
    emu_alloc a;
    int found = emu_mem_find(ptr, &a) && (const char *)ptr < a.p + a.bytes;
    attr->device = 0;
    attr->type = !found ? cudaMemoryTypeUnregistered : a.pinned ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
    attr->devicePointer = found ? (void *)ptr : NULL;
    attr->hostPointer = !found || a.pinned ? (void *)ptr : NULL;
    return cudaSuccess;
}
