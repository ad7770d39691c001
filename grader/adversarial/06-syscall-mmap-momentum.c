// attack: ZeRO-1 with the momentum mapped by an inline-asm mmap system call, no libc function named at all (refused at build: no instruction that enters the kernel)
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// with: momentum-outside
// lose: all
// status: enters-the-kernel
// expect: refused \[enters-the-kernel\].*"syscall"
static long ddplab_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
static float *ddplab_momentum(size_t count)
{
    long p = ddplab_syscall6(9, 0, (long)(count * sizeof(float)), 3, 0x22, -1, 0); // mmap, anonymous, zeroed
    return p < 0 && p > -4096 ? NULL : (float *)p;
}
static void ddplab_release(float *p, size_t count)
{
    ddplab_syscall6(11, (long)p, (long)(count * sizeof(float)), 0, 0, 0, 0); // munmap
}
