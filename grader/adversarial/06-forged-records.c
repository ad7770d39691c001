// attack: FSDP whose prefetch waits (the mutant), and whose fsdp_free, the last student code of a run, rewrites the run's dump the way the earlier kit let a destructor: each "wait" of its record of operations made an "add", the ledger's momentum cut to a shard's. The kit now writes the dump after that call on every rank, so there is nothing yet to rewrite, and its own record stands
// lab: 06
// base: mutant 06-fsdp-prefetch-waits
// file: fsdp.c
// override: fsdp_free
// lose: fsdp_overlap
// expect: prefetch-waits
#include <stdio.h> // snprintf
#include <string.h> // strstr, strchr

#include "dl/fs.h" // dl_read_file: read through the kit
#include "dl/metrics.h" // dl_csv_open: write through the kit

/* The file at path (a CSV the kit wrote), each line's first "from" made "to", written back through the kit. */
static void forge(const char *path, const char *from, const char *to)
{
    char *text = NULL, *nl;
    size_t len = 0;
    if (dl_read_file(path, &text, &len) != DL_OK || (nl = strchr(text, '\n')) == NULL)
        return; // nothing written yet: nothing to forge
    *nl = '\0';
    const char *header[1] = {text}; // the whole header line as one column: the same bytes come out
    dl_csv_out f;
    if (dl_csv_open(&f, path, (dl_cols){header, 1}) != DL_OK)
        return;
    for (char *line = nl + 1, *end; (end = strchr(line, '\n')) != NULL; line = end + 1) {
        *end = '\0';
        char row[DL_CSV_CELL_MAX];
        const char *hit = strstr(line, from);
        if (hit != NULL)
            snprintf(row, sizeof row, "%.*s%s%s", (int)(hit - line), line, to, hit + strlen(from));
        else
            snprintf(row, sizeof row, "%s", line);
        dl_csv_cell(&f, 0, "%s", row);
        dl_csv_end_row(&f);
    }
    dl_csv_close(&f);
}

void fsdp_free(fsdp_state *f)
{
    char path[64];
    snprintf(path, sizeof path, "dump/p2p.%d.csv", f != NULL && f->comm != NULL ? dl_comm_rank(f->comm) : 0);
    ddplab_overridden_fsdp_free(f);
    forge(path, ",wait,", ",add,"); // every wait an add (the run's folder is the job's cwd)
}
