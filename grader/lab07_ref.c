/* lab07_ref.c — lab 07's references (lab07_ref.h), in double. */
#define _POSIX_C_SOURCE 200809L
#include "lab07_ref.h"

#include <math.h> // fmod
#include <string.h> // memset

#include "dl/device.h" // dl_device_open
#include "grader.h" // ck_assert_msg
#include "kit.h" // tp_check_inputs
#include "planner.h" // plan_model, plan_machine, plan_layout

void gr7_whole_of(unsigned long long seed, gr7_whole *w)
{
    dl_device dev;
    dl_mlp m;
    float X[G7_N * G7_I], dY[G7_N * G7_O];
    ck_assert_msg(dl_device_open("cpu", &dev) == DL_OK && tp_check_inputs(&dev, seed, &m, X, dY) == DL_OK,
                  "the check block: %s", dl_last_error());
    for (size_t i = 0; i < G7_H * G7_I; i++)
        w->W1[i] = m.layer[0].W[i];
    for (size_t i = 0; i < G7_O * G7_H; i++)
        w->W2[i] = m.layer[1].W[i];
    for (size_t i = 0; i < G7_H; i++)
        w->b1[i] = m.layer[0].b[i];
    for (size_t i = 0; i < G7_O; i++)
        w->b2[i] = m.layer[1].b[i];
    for (size_t i = 0; i < G7_N * G7_I; i++)
        w->X[i] = X[i];
    for (size_t i = 0; i < G7_N * G7_O; i++)
        w->dY[i] = dY[i];
    dl_mlp_free(&m);
    dl_device_close(&dev);
}

void gr7_rank_of(const gr7_whole *w, int P, int r, gr7_rank *o)
{
    memset(o, 0, sizeof *o);
    size_t q = G7_H / (size_t)P, rem = G7_H % (size_t)P, k = (size_t)r;
    o->h0 = k * q + (k < rem ? k : rem);
    o->h = q + (k < rem);
    size_t h0 = o->h0, h = o->h;
    for (size_t j = 0; j < h; j++) { // layer 1's rows, layer 2's columns
        for (size_t i = 0; i < G7_I; i++)
            o->W1[j * G7_I + i] = w->W1[(h0 + j) * G7_I + i];
        o->b1[j] = w->b1[h0 + j];
        for (size_t c = 0; c < G7_O; c++)
            o->W2[c * h + j] = w->W2[c * G7_H + h0 + j];
    }
    memcpy(o->b2, w->b2, sizeof o->b2);
    for (size_t n = 0; n < G7_N; n++) {
        double A[G7_H], dA[G7_H];
        for (size_t u = 0; u < G7_H; u++) { // the whole hidden layer, A = ReLU(X W1' + b1)
            double z = w->b1[u];
            for (size_t i = 0; i < G7_I; i++)
                z += w->X[n * G7_I + i] * w->W1[u * G7_I + i];
            A[u] = z > 0 ? z : 0;
        }
        for (size_t c = 0; c < G7_O; c++) {
            double all = 0, mine = 0;
            for (size_t u = 0; u < G7_H; u++) {
                all += A[u] * w->W2[c * G7_H + u];
                mine += u >= h0 && u < h0 + h ? A[u] * w->W2[c * G7_H + u] : 0;
            }
            o->Y[n * G7_O + c] = all + w->b2[c];
            o->Y_part[n * G7_O + c] = mine;
            o->gb2[c] += w->dY[n * G7_O + c];
        }
        for (size_t u = 0; u < G7_H; u++) { // dA = dY W2, through the ReLU
            double d = 0;
            for (size_t c = 0; c < G7_O; c++)
                d += w->dY[n * G7_O + c] * w->W2[c * G7_H + u];
            dA[u] = A[u] > 0 ? d : 0;
        }
        for (size_t i = 0; i < G7_I; i++) {
            double all = 0, mine = 0;
            for (size_t u = 0; u < G7_H; u++) {
                all += dA[u] * w->W1[u * G7_I + i];
                mine += u >= h0 && u < h0 + h ? dA[u] * w->W1[u * G7_I + i] : 0;
            }
            o->dX[n * G7_I + i] = all;
            o->dX_part[n * G7_I + i] = mine;
        }
        for (size_t j = 0; j < h; j++) {
            for (size_t i = 0; i < G7_I; i++)
                o->gW1[j * G7_I + i] += dA[h0 + j] * w->X[n * G7_I + i];
            o->gb1[j] += dA[h0 + j];
            for (size_t c = 0; c < G7_O; c++)
                o->gW2[c * h + j] += w->dY[n * G7_O + c] * A[h0 + j];
        }
    }
}

void gr7_layers(int L, int P, int s, int *first, int *last)
{
    int q = L / P, rem = L % P;
    *first = s * q + (s < rem ? s : rem);
    *last = *first + q + (s < rem);
}

double gr7_shard_at(const dl_mlp_layer *first, const dl_mlp_layer *second, int P, int r, int what, size_t i)
{
    size_t H = first->out, I = first->in, q = H / (size_t)P, rem = H % (size_t)P, k = (size_t)r;
    size_t h0 = k * q + (k < rem ? k : rem), h = q + (k < rem);
    return what == 0   ? first->W[(h0 + i / I) * I + i % I]
           : what == 1 ? first->b[h0 + i]
           : what == 2 ? second->W[(i / h) * H + h0 + i % h]
                       : second->b[i];
}

/* One group's link: inside a node when its span fits in one. */
static void gr7_link(const plan_machine *mc, int span, double *bw, double *lat)
{
    if (span <= mc->gpus_per_node)
        *bw = mc->gpu->bus_bw, *lat = mc->gpu->hop_latency;
    else
        *bw = mc->gpu->nic_bw, *lat = mc->gpu->nic_latency;
}

/* A ring allreduce among k of n bytes in c calls: 2(k - 1) steps a call, 2(k - 1)/k of the bytes on each link. */
static double gr7_ring(int k, double c, double n, double lat, double bw)
{
    return k <= 1 ? 0 : c * 2.0 * (k - 1) * lat + 2.0 * (k - 1) / k * n / bw;
}

void gr7_plan_memory(const plan_model *md, const plan_machine *mc, plan_layout *l)
{
    double w = md->width, b = md->micro_rows, d = l->d, t = l->t, p = l->p, blocks = md->layers / p;
    double m = md->rows / (d * b);
    l->params = blocks * (8 * w * w / t + 4 * w / t + w);
    double sharded[4] = {0, 4 + 4, 4 + 4 + 2 + 4, 16}; // what ZeRO stage z keeps 1/d of, in bytes a parameter
    l->state_bytes = l->params * ((16 - sharded[l->zero]) + sharded[l->zero] / d);
    l->act_bytes = 2.0 * (m < p ? m : p) * blocks * b * (w + 4 * w / t + w);
    l->mem_bytes = l->state_bytes + l->act_bytes;
    l->fits = l->mem_bytes <= mc->gpu->gpu_mem;
}

void gr7_plan_time(const plan_model *md, const plan_machine *mc, plan_layout *l)
{
    double w = md->width, b = md->micro_rows, blocks = (double)md->layers / l->p, bw, lat;
    double held = blocks * (8 * w * w / l->t + 4 * w / l->t + w), gpus = (double)l->d * l->t * l->p;
    l->m = md->rows / (l->d * b);
    l->bubble = (l->p - 1) / l->m;
    l->compute_s = 6 * 8 * w * w * md->layers * md->rows / gpus / (mc->gpu->fp16_peak * mc->gpu->fp16_efficiency) *
                   (1 + l->bubble);
    gr7_link(mc, l->t, &bw, &lat);
    l->tp_s = l->m * blocks * gr7_ring(l->t, 2, 2 * 2 * b * w, lat, bw);
    gr7_link(mc, l->d * l->t * l->p, &bw, &lat);
    l->pp_s = l->p > 1 ? l->m * 2 * (2 * b * w / bw + lat) : 0;
    gr7_link(mc, l->d * l->t, &bw, &lat);
    l->dp_s = gr7_ring(l->d, 1, 2 * held * (l->zero == 3 ? 1.5 : 1), lat, bw);
    l->step_s = l->compute_s + l->tp_s + l->pp_s + l->dp_s;
}

void gr7_plan_best(const plan_model *md, const plan_machine *mc, plan_layout *out, int max, int *n, int *best)
{
    int N = mc->nodes * mc->gpus_per_node;
    *n = 0, *best = -1;
    for (int t = 1; t <= N; t++) {
        if (N % t != 0)
            continue;
        for (int p = 1; p <= N / t; p++) {
            int d = N / t / p;
            if ((N / t) % p != 0 || md->layers % p != 0 || fmod(md->rows, d * md->micro_rows) != 0)
                continue;
            for (int z = 0; z < 4 && *n < max; z++, (*n)++) {
                plan_layout *l = &out[*n];
                memset(l, 0, sizeof *l);
                l->d = d, l->t = t, l->p = p, l->zero = z;
                gr7_plan_memory(md, mc, l);
                gr7_plan_time(md, mc, l);
                const plan_layout *b = *best >= 0 ? &out[*best] : NULL;
                // the fastest; of times equal to 1e-9, the least memory; then the first
                if (l->fits && (b == NULL || l->step_s < b->step_s * (1 - 1e-9) ||
                                (l->step_s <= b->step_s * (1 + 1e-9) && l->mem_bytes < b->mem_bytes)))
                    *best = *n;
            }
        }
    }
}
