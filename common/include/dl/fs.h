/* dl/fs.h — small file-system helpers and the kit's home directory.
 *
 * Contract
 * - dl_home() is where the kit's files live (plot scripts, datasets): the
 *   DL_HOME environment variable, else the source directory compiled in.
 * - dl_mkdir_p creates a directory and its parents (existing ones are fine);
 *   DL_ERR_IO names the path and the system's reason on failure.
 * - Outputs are written atomically by the writers in metrics.h and json.h:
 *   to a new file "PATH.tmp.XXXXXX" (dl_tmp_create: a unique name, so two
 *   processes writing the same PATH never share a temporary), renamed to PATH
 *   only when complete, so a crash never leaves a partial file that looks
 *   complete.
 * - dl_check_writable(flag, path, is_dir) fails with DL_ERR_ARG naming the
 *   flag when a file or directory could not be created at path: drivers call
 *   it for --out and --json before they write anything.
 */
#ifndef DL_FS_H
#define DL_FS_H

#include <stddef.h> // size_t
#include <stdio.h> // FILE

#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

const char *dl_home(void);
dl_status dl_mkdir_p(const char *path);
int dl_file_exists(const char *path);
/* Writes "a/b" into buf (len bytes); DL_ERR_ARG when it does not fit. */
dl_status dl_path_join(char *buf, size_t len, const char *a, const char *b);
/* Creates a new file beside path, "path.tmp.XXXXXX" (mode 0644), opened with
 * fopen mode mode ("w" or "wb"); its name goes to tmp (len bytes). On error
 * returns NULL with the reason set (dl_last_error). */
FILE *dl_tmp_create(const char *path, char *tmp, size_t len, const char *mode);
/* DL_OK when path could be written: a directory (is_dir) that is writable
 * or whose nearest existing ancestor is (dl_mkdir_p makes the rest); a file
 * whose directory exists and is writable. Else DL_ERR_ARG: "flag 'path': ...". */
dl_status dl_check_writable(const char *flag, const char *path, int is_dir);
/* Reads a whole file into a NUL-terminated malloc'ed buffer. */
dl_status dl_read_file(const char *path, char **text, size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* DL_FS_H */
