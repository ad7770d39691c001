/* dl/cli.h — the command line every lab driver shares.
 *
 * Contract
 * - Common flags: --data SPEC --device auto|cpu|cuda[:N] --epochs N
 *   --batch-size N --lr X --seed N --out DIR --json FILE
 *   --plot png|svg|dumb|none --quiet --help. A driver sets the defaults in
 *   dl_args before parsing and may add its own flags in a dl_opt table.
 * - Both "--flag value" and "--flag=value" are accepted, and "-x value" for
 *   an option with a short name. Numbers must parse whole and lie in the
 *   option's [min, max]; choices must be one of the listed words. A size
 *   (DL_OPT_SIZE) is a byte count with an optional binary suffix: 8, 64K,
 *   256M, 1G (K = 1024).
 * - dl_cli_parse returns DL_CLI_RUN to go on, DL_CLI_HELP after printing the
 *   usage to stdout (the driver exits 0), or DL_CLI_ERROR after printing
 *   "prog: error: <what>" and the usage to stderr (the driver exits 2).
 *   It also refuses (DL_CLI_ERROR) an --out or --json where nothing could be
 *   written, before the driver writes anything.
 * - --device is parsed once, with the flags, into dl_args.dev (dl/device.h's
 *   dl_device_spec; its text stays in dl_args.device): a value that is not
 *   auto, cpu, cuda or cuda:N (or emu, emu:N in the emulated-CUDA build,
 *   make EMU=1; elsewhere with how to get that build) is refused as a flag
 *   error, naming it. Its default is DL_DEVICE (dl_device_env), else auto.
 * - A DL_OPT_MIB value under half a byte is refused, without the usage
 *   ("--bucket-mb 1e-09 is 0.00105 bytes: a cap is at least 1 byte").
 * - A flag given twice keeps its last value (a script may append to a
 *   command line). Two flags that spell one value (--bucket-cap 25M and
 *   --bucket-mb 25: the same nonzero dl_opt.group) are refused when both are
 *   given, whatever their values, naming both: one would silently lose.
 */
#ifndef DL_CLI_H
#define DL_CLI_H

#include <stddef.h> // size_t
#include <stdint.h> // uint64_t

#include "dl/device.h" // dl_device_spec

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dl_args {
    const char *data;
    const char *device; /* --device as given (or DL_DEVICE, or "auto") */
    dl_device_spec dev; /* --device, parsed (dl_cli_parse) */
    int epochs;
    long batch_size; /* 0 = full batch */
    double lr;
    uint64_t seed;
    const char *out; /* output directory */
    const char *json; /* extra copy of summary.json, or NULL */
    const char *plot; /* png|svg|dumb|none */
    int quiet;
} dl_args;

typedef enum dl_opt_kind {
    DL_OPT_FLAG, /* int, set to 1 */
    DL_OPT_INT, /* int */
    DL_OPT_LONG, /* long */
    DL_OPT_DOUBLE, /* double */
    DL_OPT_U64, /* uint64_t */
    DL_OPT_STRING, /* const char * */
    DL_OPT_CHOICE, /* const char *, one of choices ("a|b|c") */
    DL_OPT_SIZE, /* size_t bytes: 8, 64K, 256M, 1G */
    DL_OPT_ENUM, /* int: the index of one of choices ("a|b|c": 0, 1 or 2), for a switch or an enum */
    DL_OPT_MIB /* size_t bytes given in MiB (a number, PyTorch's *_mb), rounded to the nearest byte, at least 1:
                * the second spelling of a DL_OPT_SIZE, sharing its dst and its group (its default is that flag's) */
} dl_opt_kind;

typedef struct dl_opt {
    const char *name; /* without the leading "--" */
    dl_opt_kind kind;
    void *dst;
    const char *metavar; /* shown in the usage ("N", "X", "DIR") */
    const char *help;
    const char *choices; /* DL_OPT_CHOICE and DL_OPT_ENUM only */
    double min, max; /* numeric kinds; min > max means unbounded */
    char short_name; /* 'b' for -b, or 0 */
    int group; /* nonzero: the flags of the table with this group spell one value; at most one may be given */
} dl_opt;

enum { DL_CLI_RUN = 0, DL_CLI_HELP = 1, DL_CLI_ERROR = 2 };

/* Defaults every lab starts from: breast_cancer, auto, 100 epochs, full batch,
 * lr 0.1, seed 1, out build/run, plot png. */
void dl_args_defaults(dl_args *a);

/* The k-th word of choices ("a|b|c") into buf (len bytes), "" when there is
 * none: a DL_OPT_ENUM's value as the command line spells it. Returns buf. */
const char *dl_cli_choice(const char *choices, int k, char *buf, size_t len);

int dl_cli_parse(int argc, char **argv, const char *prog, const char *summary, dl_args *a, const dl_opt *extra,
                 size_t n_extra);
/* For single-process labs: DL_CLI_ERROR (after saying why on stderr) when the
 * program was started as one of several ranks (by dlrun, mpirun, or srun:
 * a step of several tasks, dl_comm_slurm_tasks; a batch script's own
 * process is one), so two copies never write the same outputs; DL_CLI_RUN
 * otherwise. */
int dl_cli_single_process(const char *prog);

#ifdef __cplusplus
}
#endif
#endif /* DL_CLI_H */
