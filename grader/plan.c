/* plan.c — which items a grading run runs. See plan.h. */
#define _POSIX_C_SOURCE 200809L
#include "plan.h"

#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // strcmp, strcspn, strspn

const char *gr_tier_name(gr_tier t)
{
    return t == GR_CPU ? "cpu" : t == GR_GPU1 ? "gpu1" : "gpu4";
}

int gr_tier_gpus(gr_tier t)
{
    return t == GR_GPU1 ? 1 : t == GR_GPU4 ? 4 : 0;
}

/* allowed[t] for each tier named in list (NULL or blank: every tier). */
static int parse_tiers(const char *list, int allowed[3], char *err, size_t err_len)
{
    const char *sep = ", \t";
    int blank = list == NULL || list[strspn(list, sep)] == '\0';
    for (int t = 0; t < 3; t++)
        allowed[t] = blank;
    for (const char *p = list; p != NULL && *p != '\0';) {
        p += strspn(p, sep);
        size_t k = strcspn(p, sep);
        if (k == 0)
            break;
        int found = 0;
        for (int t = 0; t < 3; t++) {
            const char *name = gr_tier_name((gr_tier)t);
            if (strlen(name) == k && strncmp(p, name, k) == 0)
                allowed[t] = found = 1;
        }
        if (!found) {
            snprintf(err, err_len, "GR_TIERS: unknown tier '%.*s' (expected cpu, gpu1 or gpu4, separated by commas)",
                     (int)k, p);
            return -1;
        }
        p += k;
    }
    return 0;
}

static int find(const gr_item *items, int n, const char *name)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(items[i].name, name) == 0)
            return i;
    }
    return -1;
}

int gr_plan_make(const gr_item *items, int n, const int *named, const char *tiers, int gpus, gr_plan *plan, char *err,
                 size_t err_len)
{
    int allowed[3];
    if (parse_tiers(tiers, allowed, err, err_len) != 0)
        return -1;
    int *parent = malloc((size_t)(n > 0 ? n : 1) * sizeof *parent);
    int *blocker = malloc((size_t)(n > 0 ? n : 1) * sizeof *blocker);
    if (parent == NULL || blocker == NULL) {
        free(parent), free(blocker);
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        parent[i] = items[i].parent != NULL ? find(items, n, items[i].parent) : -1;
        if (items[i].parent != NULL && (parent[i] < 0 || parent[i] >= i)) {
            snprintf(err, err_len, "grader bug: item %s: its parent '%s' %s", items[i].name, items[i].parent,
                     parent[i] < 0 ? "is not in the table" : "does not come before it in the table");
            free(parent), free(blocker);
            return -1;
        }
        // the first item of i's chain (itself, then its ancestors) that needs more GPUs than answer here
        blocker[i] = gpus < gr_tier_gpus(items[i].tier) ? i : parent[i] >= 0 ? blocker[parent[i]] : -1;
    }
    // what was asked for: everything, or the named items and what they need
    for (int i = 0; i < n; i++)
        plan[i] = (gr_plan){named == NULL || named[i] ? GR_PLAN_RUN : GR_PLAN_OUT, -1, -1};
    for (int i = n - 1; i >= 0; i--) { // parents come first: one pass from the end closes the chains
        if (plan[i].kind != GR_PLAN_OUT && parent[i] >= 0)
            plan[parent[i]].kind = GR_PLAN_RUN;
    }
    // what cannot run: a tier left out, or GPUs this machine lacks (its own, or an ancestor's)
    for (int i = 0; i < n; i++) {
        if (plan[i].kind == GR_PLAN_OUT)
            continue;
        if (!allowed[items[i].tier]) {
            plan[i].kind = GR_PLAN_SKIP_TIER;
        } else if (blocker[i] >= 0) {
            plan[i].kind = GR_PLAN_SKIP_GPU;
            plan[i].gpu_need = blocker[i];
        }
    }
    // what runs brings what it needs, whatever the tier filter says
    for (int i = n - 1; i >= 0; i--) {
        int runs = plan[i].kind == GR_PLAN_RUN || plan[i].kind == GR_PLAN_NEEDED;
        int p = parent[i];
        if (runs && p >= 0 && plan[p].kind != GR_PLAN_RUN && plan[p].kind != GR_PLAN_NEEDED) {
            plan[p].kind = GR_PLAN_NEEDED; // its GPUs are there: blocker[i] < 0 covers every ancestor
            plan[p].needed_by = i;
            plan[p].gpu_need = -1;
        }
    }
    free(parent), free(blocker);
    return 0;
}
