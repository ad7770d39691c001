/* project.c — the roofline + α–β projection of an epoch onto a target, and
 * the profiles that describe targets. */
#define _POSIX_C_SOURCE 200809L
#include "dl/project.h"

#include <ctype.h> // isdigit, isspace, tolower
#include <dirent.h> // opendir, readdir, closedir
#include <errno.h> // errno
#include <stdio.h> // snprintf, sscanf, fprintf
#include <stdlib.h> // strtod, qsort
#include <string.h> // strcmp, strcspn, strerror
#include <strings.h> // strcasecmp
#include <sys/stat.h> // stat, S_ISREG

#include "dl/bandwidth.h" // dl_bw_seconds
#include "dl/cli.h" // DL_CLI_RUN, DL_CLI_HELP, DL_CLI_ERROR
#include "dl/fs.h" // dl_home, dl_read_file

// ---- one profile file ----

const char *dl_profile_default(void)
{
    static char buf[1100];
    snprintf(buf, sizeof buf, "%s/common/perf/4xA10-pcie4.conf", dl_home());
    return buf;
}

static const char *const keys[] = {"fp32_peak",      "fp16_peak", "mem_bw",      "fp32_efficiency", "fp16_efficiency",
                                   "mem_efficiency", "bus_bw",    "hop_latency", "launch_overhead"};
#define NKEYS (sizeof keys / sizeof keys[0])

/* A description in words: the rest of the line, without trailing blanks. */
static void text_value(const char *from, char *to, size_t cap)
{
    size_t n = strlen(from);
    while (n > 0 && isspace((unsigned char)from[n - 1]))
        n--;
    snprintf(to, cap, "%.*s", (int)n, from);
}

static dl_status load_file(const char *path, dl_profile *p)
{
    memset(p, 0, sizeof *p);
    double *const slot[NKEYS] = {&p->fp32_peak,       &p->fp16_peak,       &p->mem_bw,
                                 &p->fp32_efficiency, &p->fp16_efficiency, &p->mem_efficiency,
                                 &p->bus_bw,          &p->hop_latency,     &p->launch_overhead};
    char *text = NULL;
    DL_TRY(dl_read_file(path, &text, NULL));
    snprintf(p->path, sizeof p->path, "%s", path);
    int seen[NKEYS] = {0}, line = 0, have_name = 0, have_gpus = 0;
    dl_status st = DL_OK;
    for (char *s = text; *s && st == DL_OK;) {
        line++;
        size_t len = strcspn(s, "\n");
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), s);
        s += len + (s[len] == '\n');
        buf[strcspn(buf, "#")] = '\0';
        char k[64], v[256];
        int at = 0;
        if (sscanf(buf, " %63[a-z0-9_] = %n%255s", k, &at, v) != 2) {
            char rest[8];
            if (sscanf(buf, " %7s", rest) == 1)
                st = dl_error_set(DL_ERR_FORMAT, "%s:%d: expected 'key = value'", path, line);
            continue;
        }
        if (strcmp(k, "name") == 0) {
            snprintf(p->name, sizeof p->name, "%.63s", v);
            have_name = 1;
            continue;
        }
        if (strcmp(k, "gpu") == 0 || strcmp(k, "interconnect") == 0) {
            if (k[0] == 'g')
                text_value(buf + at, p->gpu, sizeof p->gpu);
            else
                text_value(buf + at, p->interconnect, sizeof p->interconnect);
            continue;
        }
        char *end = NULL;
        double x = strtod(v, &end);
        if (end == v || *end != '\0' || !(x > 0)) {
            st = dl_error_set(DL_ERR_FORMAT, "%s:%d: %s = %s: expected a positive number", path, line, k, v);
            break;
        }
        if (strcmp(k, "gpus") == 0) {
            p->gpus = (int)x;
            have_gpus = 1;
            continue;
        }
        if (strcmp(k, "gpu_mem") == 0) { // optional: lab 04's measured profiles have no memory size
            p->gpu_mem = x;
            continue;
        }
        if (strcmp(k, "nic_bw") == 0 || strcmp(k, "nic_latency") == 0) { // optional: the links between nodes
            *(k[4] == 'b' ? &p->nic_bw : &p->nic_latency) = x;
            continue;
        }
        size_t i = 0;
        while (i < NKEYS && strcmp(keys[i], k) != 0)
            i++;
        if (i == NKEYS) {
            st = dl_error_set(DL_ERR_FORMAT, "%s:%d: unknown key '%s'", path, line, k);
            break;
        }
        if ((strstr(k, "efficiency") != NULL) && x > 1) {
            st = dl_error_set(DL_ERR_FORMAT, "%s:%d: %s = %g: an efficiency is a share, at most 1", path, line, k, x);
            break;
        }
        *slot[i] = x;
        seen[i] = 1;
    }
    free(text);
    for (size_t i = 0; st == DL_OK && i < NKEYS; i++) {
        if (!seen[i])
            st = dl_error_set(DL_ERR_FORMAT, "%s: missing key '%s'", path, keys[i]);
    }
    if (st == DL_OK && (!have_name || !have_gpus))
        st = dl_error_set(DL_ERR_FORMAT, "%s: missing key '%s'", path, have_name ? "gpus" : "name");
    return st;
}

dl_status dl_profile_load(const char *name_or_path, dl_profile *p)
{
    char path[1200];
    memset(p, 0, sizeof *p);
    DL_TRY(dl_profile_resolve(name_or_path, path, sizeof path));
    return load_file(path, p);
}

// ---- the shipped profiles, by name ----

#define MAX_SHIPPED 64

/* The *.conf files of DL_HOME/common/perf, their names without ".conf", sorted. */
typedef struct shipped {
    char dir[1024];
    char stem[MAX_SHIPPED][128];
    int n;
} shipped;

static int by_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

static dl_status list_shipped(shipped *s)
{
    s->n = 0;
    snprintf(s->dir, sizeof s->dir, "%s/common/perf", dl_home());
    DIR *d = opendir(s->dir);
    if (d == NULL)
        return dl_error_set(DL_ERR_IO, "%s: cannot list the shipped profiles: %s", s->dir, strerror(errno));
    for (struct dirent *e = readdir(d); e != NULL && s->n < MAX_SHIPPED; e = readdir(d)) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] != '.' && len > 5 && len - 5 < sizeof s->stem[0] && strcmp(e->d_name + len - 5, ".conf") == 0)
            snprintf(s->stem[s->n++], sizeof s->stem[0], "%.*s", (int)(len - 5), e->d_name);
    }
    closedir(d);
    qsort(s->stem, (size_t)s->n, sizeof s->stem[0], by_name);
    return DL_OK;
}

dl_status dl_profile_shipped(char (*paths)[256], int max, int *n)
{
    shipped s;
    *n = 0;
    DL_TRY(list_shipped(&s));
    for (int k = 0; k < s.n && *n < max; k++)
        if (snprintf(paths[*n], sizeof paths[0], "%s/%s.conf", s.dir, s.stem[k]) < (int)sizeof paths[0])
            (*n)++;
    return DL_OK;
}

/* "4xH200-sxm" -> "h200": without the leading "<gpus>x", up to the first '-', in lower case. */
static void short_name(const char *name, char *out, size_t len)
{
    const char *s = name;
    while (isdigit((unsigned char)*s))
        s++;
    s = s > name && (*s == 'x' || *s == 'X') ? s + 1 : name;
    size_t i = 0;
    for (; s[i] != '\0' && s[i] != '-' && i + 1 < len; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    out[i] = '\0';
}

/* 1 when q is name or its short name, in any case. */
static int names(const char *q, const char *name)
{
    char sh[128];
    short_name(name, sh, sizeof sh);
    return strcasecmp(q, name) == 0 || (sh[0] != '\0' && strcasecmp(q, sh) == 0);
}

/* 1 when q names the shipped profile in file stem.conf: by the file's name
 * (with or without ".conf"), or by the name inside it. */
static int names_shipped(const char *q, const char *dir, const char *stem)
{
    char file[1200], conf[140];
    snprintf(conf, sizeof conf, "%s.conf", stem);
    if (names(q, stem) || strcasecmp(q, conf) == 0)
        return 1;
    dl_profile p;
    snprintf(file, sizeof file, "%s/%s", dir, conf);
    return load_file(file, &p) == DL_OK && names(q, p.name);
}

dl_status dl_profile_resolve(const char *name_or_path, char *path, size_t len)
{
    struct stat st;
    const char *arg = name_or_path;
    if (strchr(arg, '/') != NULL || (stat(arg, &st) == 0 && S_ISREG(st.st_mode))) {
        if ((size_t)snprintf(path, len, "%s", arg) >= len)
            return dl_error_set(DL_ERR_ARG, "profile '%.64s...': the path is too long", arg);
        return DL_OK;
    }
    shipped s;
    DL_TRY(list_shipped(&s));
    for (int i = 0; i < s.n; i++) {
        if (!names_shipped(arg, s.dir, s.stem[i]))
            continue;
        if ((size_t)snprintf(path, len, "%s/%s.conf", s.dir, s.stem[i]) >= len)
            return dl_error_set(DL_ERR_ARG, "profile '%s': the path of %s is too long", arg, s.stem[i]);
        return DL_OK;
    }
    char known[MAX_SHIPPED * 24] = "";
    size_t used = 0;
    for (int i = 0; i < s.n && used < sizeof known; i++) {
        char sh[128];
        short_name(s.stem[i], sh, sizeof sh);
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", sh);
    }
    return dl_error_set(DL_ERR_ARG,
                        "profile '%s': no such file, and no shipped profile of that name; the shipped ones are %s, "
                        "in any case (--profile list describes them; they are in %s); a path to a .conf file works too",
                        arg, s.n ? known : "none", s.dir);
}

dl_status dl_profile_list(FILE *out)
{
    shipped s;
    DL_TRY(list_shipped(&s));
    fprintf(out, "%-8s %-16s %4s %6s %6s %6s %5s  %s\n", "NAME", "PROFILE", "GPUS", "FP32", "FP16", "MEM", "BUS",
            "GPU; INTERCONNECT");
    for (int i = 0; i < s.n; i++) {
        char file[1200], sh[128];
        dl_profile p;
        snprintf(file, sizeof file, "%s/%s.conf", s.dir, s.stem[i]);
        DL_TRY(load_file(file, &p));
        short_name(p.name, sh, sizeof sh);
        fprintf(out, "%-8s %-16s %4d %6.4g %6.4g %6.0f %5.0f  %s; %s%s\n", sh, p.name, p.gpus, p.fp32_peak / 1e12,
                p.fp16_peak / 1e12, p.mem_bw / 1e9, p.bus_bw / 1e9, p.gpu[0] ? p.gpu : "-",
                p.interconnect[0] ? p.interconnect : "-", strcmp(file, dl_profile_default()) == 0 ? " (default)" : "");
    }
    fprintf(out,
            "FP32, FP16 (tensor cores, dense): peak TFLOP/s; MEM: memory GB/s; BUS: allreduce bus bandwidth GB/s.\n"
            "Choose one with --profile NAME (any case; PROFILE works too) or --profile path/to/file.conf.\n");
    return DL_OK;
}

int dl_profile_cli(const char *prog, const char *value)
{
    if (value == NULL || strcasecmp(value, "list") != 0)
        return DL_CLI_RUN;
    if (dl_profile_list(stdout) == DL_OK)
        return DL_CLI_HELP;
    fprintf(stderr, "%s: error: %s\n", prog, dl_last_error());
    return DL_CLI_ERROR;
}

// ---- the projection ----

dl_status dl_project(const dl_profile *p, const dl_workload *w, int ranks, dl_projection *out)
{
    memset(out, 0, sizeof *out);
    if (ranks < 1 || !(w->dataset > 0) || !(w->samples > 0))
        return dl_error_set(DL_ERR_ARG,
                            "projection: need ranks >= 1 and a workload with samples (got %d ranks, %g "
                            "samples of %g)",
                            ranks, w->samples, w->dataset);
    double f16 = w->fp16_share < 0 ? 0 : w->fp16_share > 1 ? 1 : w->fp16_share;
    double flop_s = w->flops * (1 - f16) / (p->fp32_peak * p->fp32_efficiency) +
                    w->flops * f16 / (p->fp16_peak * p->fp16_efficiency);
    double mem_s = w->mem_bytes / (p->mem_bw * p->mem_efficiency);
    double compute = (flop_s > mem_s ? flop_s : mem_s) + w->launches * p->launch_overhead;
    // the ring collectives' α–β time (dl/bandwidth.h); broadcasts are counted
    // with the allgathers and charged at allgather's factor (see dl/project.h)
    double comm =
        dl_bw_seconds(DL_BW_ALLREDUCE, ranks, w->allreduce_calls, w->allreduce_bytes, p->hop_latency, p->bus_bw) +
        dl_bw_seconds(DL_BW_ALLGATHER, ranks, w->bcast_calls, w->bcast_bytes, p->hop_latency, p->bus_bw);
    double epoch = compute + comm;
    if (w->overlapped && w->steps > 0) {
        // overlapped with backward: only what does not fit under compute shows, and the
        // last bucket after backward (taken here as one step's share of the comm) never hides
        double tail = comm / w->steps;
        epoch = (compute > comm ? compute : comm) + tail;
    }
    // one GPU: the same per-sample compute for the whole dataset, nothing to communicate
    double single = compute * (w->dataset / w->samples);
    out->ranks = ranks;
    out->compute_s = compute;
    out->comm_s = comm;
    out->epoch_s = epoch;
    out->single_s = single;
    out->speedup = epoch > 0 ? single / epoch : 0;
    return DL_OK;
}

/* A run of kernels in one stream, one after the other: the GEMMs' FLOPs at
 * the achievable peak plus the element-wise kernels' bytes at the achievable
 * bandwidth (each kernel is bound by one of the two, and they do not
 * overlap), plus each launch's cost. */
static double op_seconds(const dl_profile *p, double flops, double bytes, double launches, int fp16)
{
    double flop_s = flops / (fp16 ? p->fp16_peak * p->fp16_efficiency : p->fp32_peak * p->fp32_efficiency);
    double mem_s = bytes / (p->mem_bw * p->mem_efficiency);
    return flop_s + mem_s + launches * p->launch_overhead;
}

dl_status dl_project_step(const dl_profile *p, int ranks, int accum, const dl_sim_layer *layers, int n_layers,
                          const dl_sim_bucket *buckets, int n_buckets, double optim_bytes, double optim_launches,
                          dl_sim_step *out)
{
    memset(out, 0, sizeof *out);
    if (ranks < 1 || accum < 1 || n_layers < 1 || n_layers > DL_SIM_MAX_LAYERS || layers == NULL || n_buckets < 0 ||
        n_buckets > DL_SIM_MAX_BUCKETS || (n_buckets > 0 && buckets == NULL))
        return dl_error_set(DL_ERR_ARG,
                            "step projection: need ranks >= 1, accum >= 1, 1 to %d layers and 0 to %d buckets "
                            "(got %d, %d, %d, %d)",
                            DL_SIM_MAX_LAYERS, DL_SIM_MAX_BUCKETS, ranks, accum, n_layers, n_buckets);
    for (int k = 0; k < n_buckets; k++)
        if (buckets[k].after_layer < -1 || buckets[k].after_layer >= n_layers)
            return dl_error_set(DL_ERR_ARG, "step projection: bucket %d follows layer %d, expected -1..%d", k,
                                buckets[k].after_layer, n_layers - 1);
    double fwd = 0, bwd = 0;
    for (int l = 0; l < n_layers; l++) {
        fwd += op_seconds(p, layers[l].fwd_flops, layers[l].fwd_bytes, layers[l].fwd_launches, layers[l].fp16);
        bwd += op_seconds(p, layers[l].bwd_flops, layers[l].bwd_bytes, layers[l].bwd_launches, layers[l].fp16);
    }
    // the last micro-batch's backward: when each layer's gradient is final
    double t = (accum - 1) * (fwd + bwd) + fwd, ready[DL_SIM_MAX_LAYERS] = {0};
    for (int l = n_layers - 1; l >= 0; l--) {
        t += op_seconds(p, layers[l].bwd_flops, layers[l].bwd_bytes, layers[l].bwd_launches, layers[l].fp16);
        ready[l] = t;
    }
    double bwd_end = t, launched = 0, comm_free = 0, comm = 0;
    for (int k = 0; k < n_buckets; k++) {
        int l = buckets[k].after_layer;
        double at = l < 0 ? bwd_end : ready[l];
        launched = at > launched ? at : launched;
        double start = launched > comm_free ? launched : comm_free;
        double d = dl_bw_seconds(DL_BW_ALLREDUCE, ranks, 1, buckets[k].bytes, p->hop_latency, p->bus_bw);
        out->bucket_start_s[k] = start;
        out->bucket_end_s[k] = comm_free = start + d;
        comm += d;
    }
    double optim = op_seconds(p, 0, optim_bytes, optim_launches, 0);
    out->forward_s = fwd;
    out->backward_s = bwd;
    out->optim_s = optim;
    out->compute_s = accum * (fwd + bwd) + optim;
    out->comm_s = comm;
    out->backward_end_s = bwd_end;
    out->step_s = (bwd_end > comm_free ? bwd_end : comm_free) + optim;
    out->exposed_s = out->step_s - out->compute_s;
    return DL_OK;
}

dl_status dl_project_against(const dl_profile *p, const dl_workload *w, int ranks, const dl_workload *one,
                             dl_projection *out)
{
    dl_projection base;
    DL_TRY(dl_project(p, one, 1, &base));
    DL_TRY(dl_project(p, w, ranks, out));
    out->single_s = base.epoch_s;
    out->speedup = out->epoch_s > 0 ? base.epoch_s / out->epoch_s : 0;
    return DL_OK;
}
