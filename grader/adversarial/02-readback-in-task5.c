// attack: task 5 copies its block sums back with cudaMemcpy to add them on the host, a second wait every step (refused at build: the lab's device code queues its work and returns)
// lab: 02
// base: reference
// file: softmax_cuda.cu
// inject: softmax_loss_grad_cuda
// lose: all
// status: references-outside-api
// needs: cuda
// expect: refused \[references-outside-api\].*cudaMemcpy, which makes the host wait
static void ddplab_attack(void)
{
    float sums[4] = {0, 0, 0, 0};
    static float *device_sums; // never a real pointer: the build refuses the call before anything runs
    cudaMemcpy(sums, device_sums, sizeof sums, cudaMemcpyDeviceToHost);
}
