/* kit.c — lab 03's provided helpers; see kit.h. Not a student file. */
#include "kit.h"

#include <string.h> // memset

static double n_params(const size_t *sizes, int n_sizes)
{
    double p = 0;
    for (int l = 0; l + 1 < n_sizes; l++)
        p += (double)sizes[l] * sizes[l + 1] + sizes[l + 1];
    return p;
}

double ddp_step_mem_bytes(const size_t *sizes, int n_sizes, size_t b)
{
    double bytes = 0, B = (double)b;
    for (int l = 1; l < n_sizes; l++) {
        bytes += 2 * 4 * B * sizes[l]; // bias (+ ReLU): read and write the activations
        if (l + 1 < n_sizes)
            bytes += 3 * 4 * B * sizes[l]; // the ReLU mask in backward: delta, activation, delta
    }
    bytes += 2 * 4 * B * sizes[n_sizes - 1]; // the loss rows
    bytes += 4 * 4 * n_params(sizes, n_sizes); // SGD: parameter, gradient, velocity read, two written
    return bytes;
}

double ddp_step_launches(int n_sizes)
{
    int L = n_sizes - 1;
    // forward: GEMM + bias per layer; loss; backward: weight GEMM + bias GEMV per
    // layer, input GEMM + mask for all but the first; SGD: two per layer
    return 2.0 * L + 1 + 2.0 * L + 2.0 * (L - 1) + 2.0 * L;
}

void ddp_ideal_workload(const size_t *sizes, int n_sizes, size_t n, int P, size_t b, dl_workload *w)
{
    memset(w, 0, sizeof *w);
    size_t per = (n + (size_t)P - 1) / (size_t)P;
    double steps = (double)((per + b - 1) / b);
    double step_flops = 0;
    for (int l = 0; l + 1 < n_sizes; l++) {
        double io = (double)sizes[l] * sizes[l + 1];
        step_flops += (l > 0 ? 6.0 : 4.0) * io + 2.0 * sizes[l + 1];
    }
    w->flops = step_flops * (double)per;
    w->mem_bytes = ddp_step_mem_bytes(sizes, n_sizes, b) * steps;
    w->launches = ddp_step_launches(n_sizes) * steps;
    w->steps = steps;
    w->allreduce_calls = P > 1 ? steps : 0;
    w->allreduce_bytes = P > 1 ? steps * 4 * n_params(sizes, n_sizes) : 0;
    w->samples = (double)per;
    w->dataset = (double)n;
}
