/* mlp_cost.c — the cost model of one training step: what dl_gemm, dl_gemv
 * and the element-wise parts count, computed from the layer sizes alone. */
#include "dl/mlp.h"

double dl_mlp_step_flops(const dl_mlp *m, size_t n)
{
    size_t sizes[DL_MLP_MAX_LAYERS + 1];
    sizes[0] = m->layer[0].in;
    for (int l = 0; l < m->n_layers; l++)
        sizes[l + 1] = m->layer[l].out;
    dl_mlp_cost c;
    dl_mlp_step_cost(sizes, m->n_layers + 1, n, &c);
    return c.flops;
}

// ---- the cost model of a step ----

void dl_mlp_step_cost(const size_t *sizes, int n_sizes, size_t b, dl_mlp_cost *out)
{
    int L = n_sizes - 1;
    double B = (double)b, row_flops = 0, params = 0, bytes = 0;
    for (int l = 0; l < L; l++) {
        // what dl_gemm/dl_gemv count: forward, weight gradient, bias gradient, and
        // the input gradient of every layer but the first
        double io = (double)sizes[l] * (double)sizes[l + 1];
        row_flops += (l > 0 ? 6.0 : 4.0) * io + 2.0 * (double)sizes[l + 1];
        params += (double)sizes[l] * sizes[l + 1] + sizes[l + 1];
    }
    for (int l = 1; l < n_sizes; l++) {
        bytes += 2 * 4 * B * sizes[l]; // bias (+ ReLU): read and write the activations
        if (l + 1 < n_sizes)
            bytes += 3 * 4 * B * sizes[l]; // the ReLU mask in backward: delta, activation, delta
    }
    bytes += 2 * 4 * B * sizes[n_sizes - 1]; // the loss rows
    bytes += 4 * 4 * params; // SGD: parameter, gradient, velocity read, two written
    out->flops = B * row_flops;
    out->mem_bytes = bytes;
    // forward: GEMM + bias per layer; loss; backward: weight GEMM + bias GEMV per
    // layer, input GEMM + mask for all but the first; SGD: two per layer
    out->launches = 2.0 * L + 1 + 2.0 * L + 2.0 * (L - 1) + 2.0 * L;
    out->params = params;
}
