// attack: ZeRO-1 with the momentum from C library calls the old deny-list did not name, each tried in turn: mmap64, reallocarray, a System V shared-memory segment (shmget, shmat), an anonymous file (memfd_create) mapped into memory — all out of the ledger's sight (refused at build, every one by name: what is not on the C library allow-list is refused)
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// with: momentum-outside
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*mmap64
#include <stdlib.h> // reallocarray
#include <string.h> // memset
#include <sys/ipc.h> // IPC_PRIVATE
#include <sys/mman.h> // mmap64, memfd_create, mmap
#include <sys/shm.h> // shmget, shmat
#include <unistd.h> // ftruncate, close
static float *ddplab_momentum(size_t count)
{
    size_t bytes = count * sizeof(float);
    void *p = mmap64(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED)
        return p;
    if ((p = reallocarray(NULL, count, sizeof(float))) != NULL)
        return memset(p, 0, bytes);
    int id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0600);
    if (id >= 0 && (p = shmat(id, NULL, 0)) != (void *)-1)
        return p;
    int fd = memfd_create("momentum", 0);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0)
        return NULL;
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}
static void ddplab_release(float *p, size_t count)
{
    (void)p, (void)count; // left to the process's end
}
