/* lr.c — the kit's learning-rate schedule. See dl/lr.h. */
#include "dl/lr.h"

#include <math.h> // cos

double dl_lr_at(const dl_lr_config *c, long t)
{
    if (c == NULL || c->base_batch == 0 || t < 0)
        return 0.0;
    double peak = c->base_lr * (double)c->global_batch / (double)c->base_batch; // linear scaling
    long W = c->warmup_steps;
    if (t < W)
        return peak * (double)(t + 1) / (double)W;
    if (!c->cosine)
        return peak;
    if (t >= c->total_steps || c->total_steps <= W)
        return 0.0;
    return peak * 0.5 * (1.0 + cos(3.14159265358979323846 * (double)(t - W) / (double)(c->total_steps - W)));
}
