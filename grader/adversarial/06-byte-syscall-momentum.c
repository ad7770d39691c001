// attack: ZeRO-1 with the momentum mapped by a system call whose instruction is spelled as data, .byte 0x0f, 0x05 in an asm function, so that no "syscall" appears in the source (refused at build: no data in an executable section)
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// with: momentum-outside
// lose: all
// status: enters-the-kernel
// expect: refused \[enters-the-kernel\].*\.byte
// ddplab_mmap6(addr, len, prot, flags, fd, off): mmap's system call, its instruction as two bytes
__asm__(".text\n"
        ".type ddplab_mmap6, @function\n"
        "ddplab_mmap6:\n"
        "    movq %rcx, %r10\n"
        "    movl $9, %eax\n"
        "    .byte 0x0f, 0x05\n"
        "    ret\n"
        ".size ddplab_mmap6, .-ddplab_mmap6\n");
long ddplab_mmap6(long addr, long len, long prot, long flags, long fd, long off) __asm__("ddplab_mmap6");
static float *ddplab_momentum(size_t count)
{
    long p = ddplab_mmap6(0, (long)(count * sizeof(float)), 3, 0x22, -1, 0);
    return p < 0 && p > -4096 ? NULL : (float *)p;
}
static void ddplab_release(float *p, size_t count)
{
    (void)p, (void)count; // left mapped
}
