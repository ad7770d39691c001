// attack: task 5 waits for the device inside the call, as a first attempt that finishes its sums on the host does (refused at build: the lab's device code queues its work and returns)
// lab: 01
// base: reference
// file: logreg_cuda.cu
// inject: logreg_loss_grad_cuda
// lose: all
// status: references-outside-api
// needs: cuda
// expect: refused \[references-outside-api\].*cudaDeviceSynchronize, which makes the host wait
static void ddplab_attack(void)
{
    cudaDeviceSynchronize();
}
