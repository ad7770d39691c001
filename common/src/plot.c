/* plot.c — runs gnuplot with the shared style; atomic png/svg output. */
#define _POSIX_C_SOURCE 200809L
#include "dl/plot.h"

#include <errno.h> // errno
#include <stdarg.h> // va_list
#include <stdio.h> // snprintf, vsnprintf, rename, remove
#include <stdlib.h> // getenv
#include <string.h> // strchr, strcmp
#include <sys/wait.h> // waitpid
#include <unistd.h> // fork, execvp, access

#include "dl/fs.h" // dl_home

static const char *gnuplot_cmd(void)
{
    const char *g = getenv("DL_GNUPLOT");
    return (g != NULL && g[0] != '\0') ? g : "gnuplot";
}

int dl_plot_available(void)
{
    const char *cmd = gnuplot_cmd();
    if (strchr(cmd, '/') != NULL)
        return access(cmd, X_OK) == 0;
    const char *path = getenv("PATH");
    if (path == NULL)
        return 0;
    char dir[1024];
    while (*path) {
        size_t len = strcspn(path, ":");
        if (len < sizeof dir - 1) {
            char full[1200];
            memcpy(dir, path, len);
            dir[len] = '\0';
            snprintf(full, sizeof full, "%s/%s", len ? dir : ".", cmd);
            if (access(full, X_OK) == 0)
                return 1;
        }
        path += len;
        if (*path == ':')
            path++;
    }
    return 0;
}

const char *dl_plot_ext(const char *fmt)
{
    if (strcmp(fmt, "png") == 0)
        return "png";
    if (strcmp(fmt, "svg") == 0)
        return "svg";
    return NULL;
}

void dl_plot_escape(const char *text, char *out, size_t len)
{
    size_t k = 0;
    if (len == 0)
        return;
    for (const char *p = text; *p && k + 3 < len; p++) {
        if (strchr("_^{}@&~\\", *p) != NULL)
            out[k++] = '\\';
        out[k++] = (*p == '\'' || *p == '"') ? ' ' : *p;
    }
    out[k] = '\0';
}

static void resolve(char *buf, size_t len, const char *script)
{
    if (script[0] == '/')
        snprintf(buf, len, "%s", script);
    else
        snprintf(buf, len, "%s/%s", dl_home(), script);
}

dl_status dl_plot(const char *script, const char *fmt, const char *out_base, const char *vars)
{
    static int warned;
    if (strcmp(fmt, "none") == 0)
        return DL_OK;
    const char *ext = dl_plot_ext(fmt);
    if (ext == NULL && strcmp(fmt, "dumb") != 0)
        return dl_error_set(DL_ERR_ARG, "plot format '%s': expected png, svg, dumb or none", fmt);
    if (!dl_plot_available()) {
        if (!warned)
            fprintf(stderr, "note: gnuplot is not installed, so no plots were drawn; the CSV data "
                            "is kept (install gnuplot-nox, or run `make deps`)\n");
        warned = 1;
        return dl_error_set(DL_ERR_UNSUPPORTED, "gnuplot is not installed");
    }
    if (strchr(out_base, '\'') != NULL || (vars != NULL && strchr(vars, '"') != NULL))
        return dl_error_set(DL_ERR_ARG, "plot output '%s' may not contain quotes", out_base);
    char style[1200], body[1200], out[1100], tmp[1120], expr[4096];
    resolve(style, sizeof style, "common/plot/style.gp");
    resolve(body, sizeof body, script);
    if (!dl_file_exists(body))
        return dl_error_set(DL_ERR_IO, "plot script %s not found (is DL_HOME right? it is '%s')", body, dl_home());
    if (ext != NULL) {
        snprintf(out, sizeof out, "%s.%s", out_base, ext);
        snprintf(tmp, sizeof tmp, "%s.tmp.%s", out_base, ext);
    } else {
        out[0] = tmp[0] = '\0';
    }
    snprintf(expr, sizeof expr, "fmt='%s'; out='%s'; %s", fmt, tmp, vars ? vars : "");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return dl_error_set(DL_ERR_IO, "cannot start gnuplot: %s", strerror(errno));
    if (pid == 0) {
        execlp(gnuplot_cmd(), gnuplot_cmd(), "-e", expr, style, body, (char *)NULL);
        _exit(127);
    }
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0) {
        if (tmp[0])
            remove(tmp);
        return dl_error_set(DL_ERR_IO, "gnuplot failed on %s (exit status %d)", body,
                            WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
    }
    if (ext != NULL && rename(tmp, out) != 0) {
        remove(tmp);
        return dl_error_set(DL_ERR_IO, "%s: cannot rename into place: %s", out, strerror(errno));
    }
    return DL_OK;
}

void dl_plot_listed(const char *script, const char *fmt, const char *dir, const char *base, const char *vars,
                    const char *who, char *list, size_t len)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, base);
    dl_status st = dl_plot(script, fmt, path, vars);
    const char *ext = st == DL_OK ? dl_plot_ext(fmt) : NULL;
    for (int k = 0; k < 2; k++) { // what this call did not write is an earlier run's
        const char *other = k ? "svg" : "png";
        char stale[1220];
        snprintf(stale, sizeof stale, "%s.%s", path, other);
        if (ext == NULL || strcmp(ext, other) != 0)
            remove(stale);
    }
    if (st == DL_ERR_UNSUPPORTED)
        return;
    if (st != DL_OK) {
        fprintf(stderr, "%s: plot: %s\n", who, dl_last_error());
        return;
    }
    size_t k = strlen(list);
    if (ext != NULL && k < len)
        snprintf(list + k, len - k, "%s%s.%s", k ? "," : "", base, ext);
}

void dl_plot_forget(const char *dir, const char *base)
{
    char path[1220];
    snprintf(path, sizeof path, "%s/%s.png", dir, base);
    remove(path);
    snprintf(path, sizeof path, "%s/%s.svg", dir, base);
    remove(path);
}

void dl_plots_skip(const dl_plots *p, const char *base)
{
    dl_plot_forget(p->dir, base);
}

void dl_plots_draw(dl_plots *p, const char *base, const char *vars_fmt, ...)
{
    char script[1200], vars[2000];
    snprintf(script, sizeof script, "%s/%s.gp", p->scripts, base);
    va_list ap;
    va_start(ap, vars_fmt);
    vsnprintf(vars, sizeof vars, vars_fmt, ap);
    va_end(ap);
    dl_plot_listed(script, p->fmt, p->dir, base, vars, p->who, p->list, sizeof p->list);
}
