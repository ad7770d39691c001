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

// ---- a submission that did not build (gr_plan_not_built) ----

/* One line for the student: printable ASCII, the compiler's curly quotes as ',
 * at most max bytes (and len - 1); a line cut ends at a space, with "...". */
static void clean_line(const char *s, size_t k, char *out, size_t len, size_t max)
{
    size_t o = 0, i = 0;
    for (; i < k && o + 1 < len && o < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0xE2 && i + 2 < k && (unsigned char)s[i + 1] == 0x80 &&
            ((unsigned char)s[i + 2] == 0x98 || (unsigned char)s[i + 2] == 0x99)) {
            out[o++] = '\'';
            i += 2;
        } else if (c == '\t') {
            out[o++] = ' ';
        } else {
            out[o++] = c >= 0x20 && c < 0x7F ? (char)c : '?';
        }
    }
    out[o] = '\0';
    if (i < k && max >= 8 && len >= 8) { // cut: at the last space of its second half, and said so
        size_t cap = (max < len - 1 ? max : len - 1) - 3, at = o < cap ? o : cap;
        while (at > cap / 2 && out[at - 1] != ' ')
            at--;
        memcpy(out + (at > cap / 2 ? at : cap), "...", 4);
    }
}

static int is_status(const char *s, size_t k)
{
    if (k < 2 || k > 40 || s[0] < 'a' || s[0] > 'z')
        return 0;
    for (size_t i = 0; i < k; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return 0;
    return !(k == 6 && strncmp(s, "graded", 6) == 0) && !(k == 5 && strncmp(s, "built", 5) == 0);
}

/* Whether path (p[0..k)) is DIR/BASE with DIR one of dirs and BASE one of files; no "..". */
static int student_path(const char *p, size_t k, const char *const *files, int n_files, const char *const *dirs,
                        int n_dirs, const char **base)
{
    for (size_t i = 0; i + 1 < k; i++)
        if (p[i] == '.' && p[i + 1] == '.')
            return 0;
    size_t b = k;
    while (b > 0 && p[b - 1] != '/')
        b--;
    if (b == 0)
        return 0; // no folder: a name #line made up
    size_t dk = b - 1;
    const char *d = p;
    while (dk >= 2 && d[0] == '.' && d[1] == '/')
        d += 2, dk -= 2;
    int in_dir = 0;
    for (int j = 0; j < n_dirs && !in_dir; j++)
        in_dir = dirs[j] != NULL && strlen(dirs[j]) == dk && strncmp(d, dirs[j], dk) == 0;
    for (int f = 0; f < n_files && in_dir; f++) {
        if (files[f] != NULL && strlen(files[f]) == k - b && strncmp(p + b, files[f], k - b) == 0) {
            *base = files[f];
            return 1;
        }
    }
    return 0;
}

/* A compiler diagnostic "PATH:LINE[:COL]: [fatal ]error: MESSAGE" in the line
 * s[0..k) whose PATH is one of the student's files: "BASE:LINE: error: MESSAGE". */
static int student_error(const char *s, size_t k, const char *const *files, int n_files, const char *const *dirs,
                         int n_dirs, char *out, size_t len)
{
    for (size_t i = 0; i + 1 < k; i++) {
        if (s[i] != ':' || s[i + 1] < '0' || s[i + 1] > '9')
            continue;
        size_t line_at = i + 1, j = line_at;
        while (j < k && s[j] >= '0' && s[j] <= '9')
            j++;
        size_t line_len = j - line_at;
        if (j < k && s[j] == ':' && j + 1 < k && s[j + 1] >= '0' && s[j + 1] <= '9') { // a column
            j++;
            while (j < k && s[j] >= '0' && s[j] <= '9')
                j++;
        }
        const char *tail = s + j;
        size_t rest = k - j, skip = 0;
        if (rest >= 9 && strncmp(tail, ": error: ", 9) == 0)
            skip = 9;
        else if (rest >= 15 && strncmp(tail, ": fatal error: ", 15) == 0)
            skip = 15;
        if (skip == 0 || line_len == 0 || line_len > 9)
            continue;
        const char *base;
        if (student_path(s, i, files, n_files, dirs, n_dirs, &base)) {
            char msg[220];
            clean_line(tail + skip, rest - skip, msg, sizeof msg, 150);
            snprintf(out, len, "%s:%.*s: error: %s", base, (int)line_len, s + line_at, msg);
            return 1;
        }
        return 0; // the first location decides
    }
    return 0;
}

/* The linker's "undefined reference to `NAME'" or "multiple definition of `NAME'". */
static int link_error(const char *s, size_t k, char *out, size_t len)
{
    static const char *const what[] = {"undefined reference to ", "multiple definition of "};
    for (int w = 0; w < 2; w++) {
        size_t m = strlen(what[w]);
        for (size_t i = 0; i + m + 1 < k; i++) {
            if (strncmp(s + i, what[w], m) != 0)
                continue;
            size_t a = i + m;
            if (s[a] == '`' || s[a] == '\'')
                a++;
            else if (a + 2 < k && (unsigned char)s[a] == 0xE2) // the curly quote
                a += 3;
            size_t e = a;
            while (e < k && e - a < 80 &&
                   ((s[e] >= 'a' && s[e] <= 'z') || (s[e] >= 'A' && s[e] <= 'Z') || (s[e] >= '0' && s[e] <= '9') ||
                    s[e] == '_' || s[e] == '.' || s[e] == '@' || s[e] == '$'))
                e++;
            if (e == a)
                return 0;
            snprintf(out, len, "link: %s'%.*s'", what[w], (int)(e - a), s + a);
            return 1;
        }
    }
    return 0;
}

void gr_plan_not_built(const char *text, size_t n, const char *const *files, int n_files, const char *const *dirs,
                       int n_dirs, char *status, size_t slen, char *why, size_t wlen)
{
    snprintf(status, slen, "build-failed");
    if (wlen == 0)
        return;
    why[0] = '\0';
    for (int pass = 0; pass < 3 && why[0] == '\0'; pass++) { // refusals, the student's errors, the linker's
        int lines = 0;
        for (size_t at = 0; at < n && lines < 4;) {
            const char *s = text + at;
            const char *nl = memchr(s, '\n', n - at);
            size_t k = nl != NULL ? (size_t)(nl - s) : n - at;
            at += k + 1;
            char one[640] = "";
            if (pass == 0) {
                if (k < 10 || strncmp(s, "refused [", 9) != 0)
                    continue;
                const char *close = memchr(s + 9, ']', k - 9);
                if (close == NULL || !is_status(s + 9, (size_t)(close - s - 9)))
                    continue;
                if (lines == 0)
                    snprintf(status, slen, "%.*s", (int)(close - s - 9), s + 9);
                clean_line(s, k, one, sizeof one, 600); // a refusal's reason, whole: what is allowed too
            } else if (pass == 1 ? !student_error(s, k, files, n_files, dirs, n_dirs, one, sizeof one)
                                 : !link_error(s, k, one, sizeof one)) {
                continue;
            }
            if (strstr(why, one) != NULL) // said already
                continue;
            size_t used = strlen(why);
            if (used + 1 + strlen(one) >= wlen) // a line that would not fit whole is not begun
                break;
            snprintf(why + used, wlen - used, "%s%s", used ? "\n" : "", one);
            lines++;
        }
    }
    if (why[0] == '\0')
        snprintf(why, wlen, "the build's log names no error in your files (see the build's own output)");
}
