/* fiber.cc — the fibers a block's threads run on: a stack each, with a guard
 * page below it, and a context switch. On x86-64 the switch is hand-written
 * (callee-saved registers, MXCSR and the x87 control word: about 10 ns);
 * elsewhere it is ucontext's swapcontext (a system call per switch, slower,
 * the same behaviour). Under AddressSanitizer every switch is announced to
 * it (__sanitizer_start/finish_switch_fiber), so it follows the stacks. */
#include <signal.h> // SIGSTKSZ
#include <stdint.h> // uintptr_t
#include <stdlib.h> // calloc, free
#include <string.h> // memset
#include <sys/mman.h> // mmap, mprotect
#include <unistd.h> // sysconf

#include "internal.h"

#ifdef EMU_ASAN
#include <sanitizer/asan_interface.h> // __asan_unpoison_memory_region
#include <sanitizer/common_interface_defs.h> // __sanitizer_start_switch_fiber
#endif

#if defined(__x86_64__) && !defined(EMU_UCONTEXT)
#define EMU_ASM_SWITCH 1
#else
#include <ucontext.h> // makecontext, swapcontext
#endif

static size_t page_bytes(void)
{
    static size_t pg;
    if (pg == 0)
        pg = (size_t)sysconf(_SC_PAGESIZE);
    return pg;
}

// ---- the switch ----

#ifdef EMU_ASM_SWITCH
extern "C" void emu_raw_switch(void **save_sp, void *to_sp);
extern "C" void emu_fiber_trampoline(void);
/* rdi: where to save this stack pointer; rsi: the one to resume. The frame:
 * rbp rbx r12 r13 r14 r15 pushed, then 8 bytes: MXCSR, x87 control word. */
__asm__(".text\n"
        ".globl emu_raw_switch\n"
        ".type emu_raw_switch,@function\n"
        "emu_raw_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size emu_raw_switch, .-emu_raw_switch\n"
        /* A new fiber's first return lands here: r13 is the entry, r12 its argument. */
        ".globl emu_fiber_trampoline\n"
        ".type emu_fiber_trampoline,@function\n"
        "emu_fiber_trampoline:\n"
        "    movq %r12, %rdi\n"
        "    callq *%r13\n"
        "    ud2\n"
        ".size emu_fiber_trampoline, .-emu_fiber_trampoline\n");
#endif

void emu_switch(emu_ctx *from, emu_ctx *to)
{
#ifdef EMU_ASAN
    __sanitizer_start_switch_fiber(&from->fake_stack, to->stack_lo, to->stack_bytes);
#endif
#ifdef EMU_ASM_SWITCH
    emu_raw_switch(&from->sp, to->sp);
#else
    swapcontext((ucontext_t *)from->uc, (ucontext_t *)to->uc);
#endif
#ifdef EMU_ASAN
    __sanitizer_finish_switch_fiber(from->fake_stack, NULL, NULL);
#endif
}

void emu_fiber_started(emu_ctx *native)
{
#ifdef EMU_ASAN
    __sanitizer_finish_switch_fiber(NULL, &native->stack_lo, &native->stack_bytes);
#else
    (void)native;
#endif
}

/* Makes c ready to be switched from (a worker's own stack). */
void emu_ctx_init_native(emu_ctx *c)
{
    memset(c, 0, sizeof *c);
#ifndef EMU_ASM_SWITCH
    c->uc = calloc(1, sizeof(ucontext_t));
#endif
}

// ---- fibers ----

typedef void (*entry_fn)(emu_fiber *f);

#ifndef EMU_ASM_SWITCH
static void uc_entry(unsigned hi, unsigned lo, unsigned ehi, unsigned elo)
{
    emu_fiber *f = (emu_fiber *)(((uintptr_t)hi << 32) | lo);
    entry_fn entry = (entry_fn)(((uintptr_t)ehi << 32) | elo);
    entry(f);
}
#endif

static void make_context(emu_fiber *f, entry_fn entry)
{
    char *lo = f->map + page_bytes(), *top = f->map + f->map_bytes;
#ifdef EMU_ASAN
    __asan_unpoison_memory_region(lo, (size_t)(top - lo)); // frames of an abandoned thread
#endif
    f->ctx.stack_lo = lo;
    f->ctx.stack_bytes = (size_t)(top - lo);
    f->ctx.fake_stack = NULL;
#ifdef EMU_ASM_SWITCH
    uintptr_t sp = ((uintptr_t)top & ~(uintptr_t)15) - 128; // 16-aligned: the trampoline calls from there + 64
    uint64_t *frame = (uint64_t *)sp;
    frame[0] = 0x1f80u | ((uint64_t)0x037fu << 32); // MXCSR and x87 control word at their defaults
    frame[1] = 0; // r15
    frame[2] = 0; // r14
    frame[3] = (uint64_t)(uintptr_t)entry; // r13
    frame[4] = (uint64_t)(uintptr_t)f; // r12
    frame[5] = 0; // rbx
    frame[6] = 0; // rbp
    frame[7] = (uint64_t)(uintptr_t)emu_fiber_trampoline;
    f->ctx.sp = frame;
#else
    ucontext_t *uc = (ucontext_t *)f->ctx.uc;
    getcontext(uc);
    uc->uc_stack.ss_sp = lo;
    uc->uc_stack.ss_size = (size_t)(top - lo);
    uc->uc_link = NULL;
    uintptr_t fp = (uintptr_t)f, ep = (uintptr_t)entry;
    makecontext(uc, (void (*)(void))uc_entry, 4, (unsigned)(fp >> 32), (unsigned)fp, (unsigned)(ep >> 32),
                (unsigned)ep);
#endif
}

emu_fiber *emu_fiber_new(entry_fn entry)
{
    emu_fiber *f = (emu_fiber *)calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    size_t bytes = EMU_STACK_BYTES;
#ifdef EMU_ASAN
    bytes *= 4; // instrumented frames are larger
#endif
    f->map_bytes = bytes + page_bytes();
    void *m = mmap(NULL, f->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                   -1, 0);
    if (m == MAP_FAILED) {
        free(f);
        return NULL;
    }
    f->map = (char *)m;
    mprotect(f->map, page_bytes(), PROT_NONE); // a thread that overflows its stack faults here
#ifndef EMU_ASM_SWITCH
    f->ctx.uc = calloc(1, sizeof(ucontext_t));
#endif
    f->thread = -1;
    make_context(f, entry);
    return f;
}

void emu_fiber_reset(emu_fiber *f, entry_fn entry)
{
    f->thread = -1;
    make_context(f, entry);
}

void emu_fiber_free(emu_fiber *f)
{
    if (f == NULL)
        return;
    munmap(f->map, f->map_bytes);
    free(f->ctx.uc);
    free(f);
}

int emu_fiber_guard_hit(const emu_fiber *f, const void *addr)
{
    const char *a = (const char *)addr;
    return a >= f->map && a < f->map + page_bytes();
}
