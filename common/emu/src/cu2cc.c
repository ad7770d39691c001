/* cu2cc.c — rewrites a CUDA source for the emulated CUDA device, so that the
 * host C++ compiler builds it (common/emu/README.md).
 *
 * Contract
 * - `cu2cc FILE.cu [-o OUT.cc]` writes FILE.cu with three things rewritten
 *   (to stdout without -o):
 *     k<<<g, b[, s[, st]]>>>(args)  ->  emu_launch_(...)          (emu/launch.h)
 *     __shared__ T a[N], b;         ->  per-block storage of each name
 *     extern __shared__ T d[];      ->  the launch's dynamic shared memory
 *   The callee may be qualified (ns::k) or carry template arguments (k<T>);
 *   configuration and arguments may hold any balanced parentheses, strings
 *   and comments. Comments, strings and character literals are never
 *   rewritten. Everything else is copied byte for byte.
 * - The output starts with `#line 1 "FILE.cu"` and has every newline of the
 *   input, each on its line: compiler messages, __FILE__ and __LINE__ point
 *   into FILE.cu. Compile it with -iquote DIR-OF-FILE.cu, since its quoted
 *   includes are relative to FILE.cu.
 * - What it cannot rewrite — a launch with no callee before <<< or without
 *   (args), 1 or more than 4 configuration values, a __shared__ at file
 *   scope, with an initializer, or a dynamic one that is not `T name[]` —
 *   is an error "FILE:LINE: cu2cc: ..." on stderr and exit status 2. Usage
 *   errors and unreadable files exit 2 too. Nothing is written on error.
 */
#include <ctype.h> // isalnum, isspace
#include <stdarg.h> // va_list
#include <stdio.h> // fopen, fprintf
#include <stdlib.h> // malloc, exit
#include <string.h> // memcpy, strlen

// ---- a growable string ----

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL) {
            fprintf(stderr, "cu2cc: out of memory\n");
            exit(2);
        }
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

// ---- the input ----

static const char *path; /* as given: it becomes __FILE__ */
static const char *src;
static size_t len;

static int line_at(size_t pos)
{
    int line = 1;
    for (size_t i = 0; i < pos && i < len; i++)
        line += src[i] == '\n';
    return line;
}

static void fail(size_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: cu2cc: ", path, line_at(pos));
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* Length of the comment, string or character literal at i, else 0. */
static size_t skip_literal(size_t i)
{
    size_t j = i;
    if (src[i] == '/' && i + 1 < len && src[i + 1] == '/') {
        while (j < len && src[j] != '\n')
            j += src[j] == '\\' && j + 1 < len ? 2 : 1;
        return j - i;
    }
    if (src[i] == '/' && i + 1 < len && src[i + 1] == '*') {
        for (j = i + 2; j + 1 < len && !(src[j] == '*' && src[j + 1] == '/'); j++)
            ;
        if (j + 1 >= len)
            fail(i, "unterminated comment");
        return j + 2 - i;
    }
    if (src[i] == 'R' && i + 1 < len && src[i + 1] == '"' && (i == 0 || !ident_char(src[i - 1]))) {
        size_t d = i + 2; // R"delim( ... )delim"
        while (d < len && src[d] != '(')
            d++;
        size_t dl = d - (i + 2);
        for (j = d + 1; j < len; j++)
            if (src[j] == ')' && j + dl + 1 < len && memcmp(src + j + 1, src + i + 2, dl) == 0 &&
                src[j + 1 + dl] == '"')
                return j + dl + 2 - i;
        fail(i, "unterminated raw string");
    }
    if (src[i] == '\'' && i > 0 && isalnum((unsigned char)src[i - 1])) {
        size_t t = i; // a digit separator (1'000) unless a prefix: L'x', u'x', U'x', u8'x'
        while (t > 0 && ident_char(src[t - 1]))
            t--;
        if (isdigit((unsigned char)src[t]))
            return 0;
    }
    if (src[i] == '"' || src[i] == '\'') {
        char q = src[i];
        for (j = i + 1; j < len && src[j] != q; j++) {
            if (src[j] == '\\')
                j++;
            else if (src[j] == '\n')
                fail(i, "unterminated %s literal", q == '"' ? "string" : "character");
        }
        if (j >= len)
            fail(i, "unterminated literal");
        return j + 1 - i;
    }
    return 0;
}

/* The end of a balanced run from i: stops at the first of `stops` met at
 * depth 0 (any of ( [ { open, ) ] } close), or at `stop3` (">>>") at depth 0.
 * Fails at end of input or at an unbalanced closer. */
static size_t scan_balanced(size_t i, const char *stops, int stop3, const char *what)
{
    int depth = 0;
    size_t start = i;
    while (i < len) {
        size_t lit = skip_literal(i);
        if (lit) {
            i += lit;
            continue;
        }
        char c = src[i];
        if (depth == 0 && stop3 && c == '>' && i + 2 < len && src[i + 1] == '>' && src[i + 2] == '>')
            return i;
        if (depth == 0 && c != '\0' && strchr(stops, c) != NULL)
            return i;
        if (c == '(' || c == '[' || c == '{')
            depth++;
        else if (c == ')' || c == ']' || c == '}') {
            if (depth == 0)
                fail(i, "unbalanced '%c' in %s", c, what);
            depth--;
        }
        i++;
    }
    fail(start, "%s does not end", what);
    return 0;
}

static void put_newlines(buf *out, const char *s, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (s[k] == '\n')
            put(out, "\n", 1);
}

// ---- launches ----

/* Start of the callee that ends at end in out: an identifier, optionally
 * ::-qualified and with template arguments (ns::k<T>), or a parenthesized
 * expression. Returns end when there is none. */
static size_t callee_start(const buf *out, size_t end)
{
    const char *p = out->p;
    size_t i = end;
    if (i > 0 && p[i - 1] == ')') { // (expression)
        int depth = 0;
        do {
            i--;
            depth += p[i] == ')' ? 1 : p[i] == '(' ? -1 : 0;
        } while (i > 0 && depth > 0);
        return depth > 0 ? end : i;
    }
    for (;;) {
        if (i > 0 && p[i - 1] == '>') { // template arguments: back to their '<'
            int depth = 0;
            do {
                i--;
                depth += p[i] == '>' ? 1 : p[i] == '<' ? -1 : 0;
            } while (i > 0 && depth > 0);
            if (depth > 0)
                return end;
            while (i > 0 && isspace((unsigned char)p[i - 1]))
                i--;
        }
        size_t id = i;
        while (i > 0 && ident_char(p[i - 1]))
            i--;
        if (i == id || isdigit((unsigned char)p[i]))
            return end;
        if (i < 2 || p[i - 1] != ':' || p[i - 2] != ':')
            return i;
        i -= 2; // ns::
        if (i == 0 || !(ident_char(p[i - 1]) || p[i - 1] == '>'))
            return i; // ::k, the global one
    }
}

/* At src[i] == "<<<": rewrites the launch; returns the index after it. */
static size_t launch(buf *out, size_t i)
{
    size_t end = out->n;
    for (;;) { // spaces and /* comments */ between the callee and <<<
        while (end > 0 && isspace((unsigned char)out->p[end - 1]))
            end--;
        if (end < 4 || out->p[end - 1] != '/' || out->p[end - 2] != '*')
            break;
        size_t c = end - 2;
        while (c >= 2 && !(out->p[c - 2] == '/' && out->p[c - 1] == '*'))
            c--;
        if (c < 2)
            break;
        end = c - 2;
    }
    size_t start = callee_start(out, end);
    if (start >= end)
        fail(i, "no kernel before <<<");
    size_t lost_lines = 0; // newlines between the callee and <<<, put back after the launch
    for (size_t k = start; k < out->n; k++)
        lost_lines += out->p[k] == '\n';
    size_t clen = end - start;
    char *callee = malloc(clen + 1);
    memcpy(callee, out->p + start, clen);
    callee[clen] = '\0';
    out->n = start;

    size_t cfg = i + 3, cfg_end = scan_balanced(cfg, "", 1, "the launch configuration <<< >>>");
    int commas = 0, depth = 0;
    for (size_t k = cfg; k < cfg_end;) {
        size_t lit = skip_literal(k);
        if (lit) {
            k += lit;
            continue;
        }
        char c = src[k++];
        depth += c == '(' || c == '[' || c == '{' ? 1 : c == ')' || c == ']' || c == '}' ? -1 : 0;
        commas += depth == 0 && c == ',';
    }
    if (commas < 1 || commas > 3)
        fail(i, "a launch takes 2 to 4 values in <<< >>> (grid, block, shared bytes, stream); found %d", commas + 1);
    size_t a = cfg_end + 3;
    for (;;) { // spaces and comments between >>> and (
        size_t lit = skip_literal(a);
        if (lit && src[a] == '/')
            a += lit;
        else if (a < len && isspace((unsigned char)src[a]))
            a++;
        else
            break;
    }
    if (a >= len || src[a] != '(')
        fail(i, "a launch <<< >>> must be followed by its arguments in ( )");
    size_t args = a + 1, args_end = scan_balanced(args, ")", 0, "the launch's arguments");
    int empty = 1;
    for (size_t k = args; k < args_end; k++)
        empty &= isspace((unsigned char)src[k]) != 0;

    puts_(out, "emu_launch_(emu_site_{__FILE__, __LINE__, \"");
    for (char *c = callee; *c; c++)
        if (*c != '"' && *c != '\\' && *c != '\n')
            put(out, c, 1);
    puts_(out, "\"}, emu_cfg_make_(");
    put(out, src + cfg, cfg_end - cfg);
    puts_(out, "), [=](auto... emu_a_) { ");
    for (char *c = callee; *c; c++) // the callee's own newlines were counted in lost_lines
        put(out, *c == '\n' ? " " : c, 1);
    puts_(out, "(emu_a_...); }");
    put_newlines(out, src + cfg_end + 3, a - (cfg_end + 3));
    if (!empty) {
        puts_(out, ", ");
        put(out, src + args, args_end - args);
    }
    puts_(out, ")");
    for (size_t k = 0; k < lost_lines; k++)
        puts_(out, "\n");
    free(callee);
    return args_end + 1;
}

// ---- __shared__ declarations ----

static int is_qualifier(const char *s, size_t n)
{
    return (n == 5 && !memcmp(s, "const", 5)) || (n == 8 && !memcmp(s, "volatile", 8)) ||
           (n == 12 && !memcmp(s, "__restrict__", 12)) || (n == 8 && !memcmp(s, "restrict", 8));
}

/* One declarator item d[0..n) (specifiers included for the first): emits
 * the typedef and the reference for its name. spec is the specifiers' text
 * for items after the first (NULL for the first). */
static void shared_item(buf *out, const char *d, size_t n, const char *spec, int dynamic, size_t pos)
{
    size_t name = n, name_len = 0; // the last identifier at depth 0, outside < >
    int depth = 0;
    for (size_t k = 0; k < n;) {
        char c = d[k];
        if (c == '(' || c == '[' || c == '<')
            depth++;
        else if (c == ')' || c == ']' || c == '>')
            depth--;
        if (depth == 0 && ident_char(c) && !isdigit((unsigned char)c) && (k == 0 || !ident_char(d[k - 1]))) {
            size_t e = k;
            while (e < n && ident_char(d[e]))
                e++;
            if (!is_qualifier(d + k, e - k)) {
                name = k;
                name_len = e - k;
            }
            k = e;
            continue;
        }
        k++;
    }
    if (name_len == 0 || (spec == NULL && name == 0))
        fail(pos, "cannot read this __shared__ declaration (write it as `__shared__ T name[N];`)");
    int unsized = 0; // name[] ?
    size_t k = name + name_len;
    while (k < n && isspace((unsigned char)d[k]))
        k++;
    if (k + 1 < n && d[k] == '[') {
        for (k++; k < n && isspace((unsigned char)d[k]);)
            k++;
        unsized = k < n && d[k] == ']';
    }
    if (dynamic && !unsized)
        fail(pos, "extern __shared__ must be an array of unknown size: `extern __shared__ T name[];`");
    if (!dynamic && unsized)
        fail(pos, "a __shared__ array of unknown size must be `extern __shared__` (dynamic shared memory)");
    char nm[256];
    snprintf(nm, sizeof nm, "%.*s", (int)(name_len < 200 ? name_len : 200), d + name);
    char tn[300];
    snprintf(tn, sizeof tn, "emu_shT_%s_", nm);
    puts_(out, "typedef ");
    if (spec != NULL) {
        puts_(out, spec);
        puts_(out, " ");
    }
    for (k = 0; k < n; k++) // the declarator with the name replaced by the type's
        if (k == name) {
            puts_(out, tn);
            k += name_len - 1;
        } else if (d[k] != '\n')
            put(out, d + k, 1);
    char tail[1200];
    if (dynamic)
        snprintf(tail, sizeof tail,
                 "; %s &%s = *(%s *)emu_dyn_shared_(alignof(std::remove_extent<%s>::type), \"%s\", __FILE__, "
                 "__LINE__); ",
                 tn, nm, tn, tn, nm);
    else
        snprintf(tail, sizeof tail,
                 "; static char emu_shK_%s_; %s &%s = *(%s *)emu_shared_(&emu_shK_%s_, sizeof(%s), alignof(%s), "
                 "\"%s\", __FILE__, __LINE__); ",
                 nm, tn, nm, tn, nm, tn, tn, nm);
    puts_(out, tail);
}

/* At src[i] == "__shared__" (inside braces): rewrites the declaration up to
 * its ';'; returns the index after it. */
static size_t shared_decl(buf *out, size_t i)
{
    // specifiers already copied since the statement began: extern, static, volatile, __align__(n) ...
    size_t s = out->n;
    while (s > 0 && !strchr(";{}\n", out->p[s - 1]))
        s--;
    while (s < out->n && isspace((unsigned char)out->p[s]))
        s++;
    char pre[512];
    size_t pre_n = out->n - s < sizeof pre - 1 ? out->n - s : sizeof pre - 1;
    memcpy(pre, out->p + s, pre_n);
    pre[pre_n] = '\0';
    out->n = s;
    int dynamic = 0;
    buf spec0 = {0};
    for (char *t = strtok(pre, " \t"); t != NULL; t = strtok(NULL, " \t")) {
        if (!strcmp(t, "extern"))
            dynamic = 1;
        else if (strcmp(t, "static") != 0) { // a block's shared variables are its own, never static
            puts_(&spec0, t);
            puts_(&spec0, " ");
        }
    }
    size_t d = i + strlen("__shared__"), d_end = scan_balanced(d, ";=", 0, "the __shared__ declaration");
    if (src[d_end] == '=')
        fail(i, "a __shared__ variable cannot have an initializer (CUDA's rule): assign it in the kernel");
    // split at commas at depth 0 (parentheses, brackets, braces and < >)
    size_t item = d, first = 1;
    char *spec = NULL;
    int depth = 0;
    for (size_t k = d; k <= d_end; k++) {
        size_t lit = k < d_end ? skip_literal(k) : 0;
        if (lit) {
            k += lit - 1;
            continue;
        }
        char c = src[k];
        if (k < d_end) {
            depth += c == '(' || c == '[' || c == '{' || c == '<'   ? 1
                     : c == ')' || c == ']' || c == '}' || c == '>' ? -1
                                                                    : 0;
            if (!(depth == 0 && c == ','))
                continue;
        }
        if (first) {
            buf whole = {0};
            if (spec0.n)
                put(&whole, spec0.p, spec0.n);
            put(&whole, src + item, k - item);
            shared_item(out, whole.p, whole.n, NULL, dynamic, i);
            // the specifiers of the later items: the first item up to its declarator
            size_t e = whole.n, nm = e;
            int dd = 0;
            for (size_t m = 0; m < e; m++) {
                char c2 = whole.p[m];
                dd += c2 == '(' || c2 == '[' || c2 == '<' ? 1 : c2 == ')' || c2 == ']' || c2 == '>' ? -1 : 0;
                if (dd == 0 && ident_char(whole.p[m]) && (m == 0 || !ident_char(whole.p[m - 1]))) {
                    size_t x = m;
                    while (x < e && ident_char(whole.p[x]))
                        x++;
                    if (!is_qualifier(whole.p + m, x - m))
                        nm = m;
                    m = x - 1;
                }
            }
            while (nm > 0 &&
                   (isspace((unsigned char)whole.p[nm - 1]) || whole.p[nm - 1] == '*' || whole.p[nm - 1] == '&'))
                nm--;
            spec = malloc(nm + 1);
            memcpy(spec, whole.p, nm);
            spec[nm] = '\0';
            free(whole.p);
            first = 0;
        } else
            shared_item(out, src + item, k - item, spec, dynamic, i);
        item = k + 1;
    }
    free(spec);
    free(spec0.p);
    put_newlines(out, src + d, d_end - d);
    return d_end + 1;
}

// ---- the file ----

static void rewrite(buf *out)
{
    int braces = 0, line_start = 1;
    size_t i = 0;
    while (i < len) {
        char c = src[i];
        if (line_start && c == '#') { // a directive other than #define: copied whole
            size_t e = i + 1;
            while (e < len && (src[e] == ' ' || src[e] == '\t'))
                e++;
            if (strncmp(src + e, "define", 6) != 0) {
                while (e < len && src[e] != '\n') {
                    size_t lit = src[e] == '/' ? skip_literal(e) : 0;
                    e += lit ? lit : src[e] == '\\' && e + 1 < len ? 2 : 1;
                }
                put(out, src + i, e - i);
                i = e;
                continue;
            }
        }
        if (c == '\n')
            line_start = 1;
        else if (!isspace((unsigned char)c))
            line_start = 0;
        size_t lit = skip_literal(i);
        if (lit) {
            put(out, src + i, lit);
            i += lit;
            continue;
        }
        if (c == '<' && i + 2 < len && src[i + 1] == '<' && src[i + 2] == '<') {
            i = launch(out, i);
            continue;
        }
        if (ident_char(c) && (i == 0 || !ident_char(src[i - 1]))) {
            size_t e = i;
            while (e < len && ident_char(src[e]))
                e++;
            if (e - i == 10 && !memcmp(src + i, "__shared__", 10)) {
                if (braces == 0)
                    fail(i, "a __shared__ variable at file scope is not supported by the emulated CUDA device: "
                            "declare it inside the kernel");
                i = shared_decl(out, i);
                continue;
            }
            put(out, src + i, e - i);
            i = e;
            continue;
        }
        braces += c == '{' ? 1 : c == '}' ? -1 : 0;
        put(out, src + i, 1);
        i++;
    }
}

int main(int argc, char **argv)
{
    const char *out_path = NULL;
    path = NULL;
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "-o") && k + 1 < argc)
            out_path = argv[++k];
        else if (argv[k][0] != '-' && path == NULL)
            path = argv[k];
        else {
            fprintf(stderr, "cu2cc: unknown argument '%s'\nusage: cu2cc FILE.cu [-o OUT.cc]\n", argv[k]);
            return 2;
        }
    }
    if (path == NULL) {
        fprintf(stderr, "usage: cu2cc FILE.cu [-o OUT.cc]\n");
        return 2;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 2;
    }
    buf in = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        put(&in, chunk, got);
    fclose(f);
    src = in.p != NULL ? in.p : "";
    len = in.n;
    buf out = {0};
    puts_(&out, "#line 1 \"");
    for (const char *c = path; *c; c++) {
        if (*c == '"' || *c == '\\')
            puts_(&out, "\\");
        put(&out, c, 1);
    }
    puts_(&out, "\"\n");
    rewrite(&out);
    FILE *o = out_path != NULL ? fopen(out_path, "wb") : stdout;
    if (o == NULL) {
        perror(out_path);
        return 2;
    }
    if (fwrite(out.p, 1, out.n, o) != out.n || (o != stdout && fclose(o) != 0)) {
        perror(out_path != NULL ? out_path : "stdout");
        return 2;
    }
    free(in.p);
    free(out.p);
    return 0;
}
