/* lab07_ref.c — lab 07's references (lab07_ref.h), in double. */
#define _POSIX_C_SOURCE 200809L
#include "lab07_ref.h"

#include <string.h> // memset

#include "dl/device.h" // dl_device_open
#include "grader.h" // ck_assert_msg
#include "kit.h" // tp_check_inputs

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
