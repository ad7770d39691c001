/* dl/fs.h — small file-system helpers and the kit's home directory.
 *
 * Contract
 * - dl_home() is where the kit's files live (plot scripts, datasets): the
 *   DL_HOME environment variable, else the source directory compiled in.
 * - dl_mkdir_p creates a directory and its parents (existing ones are fine);
 *   DL_ERR_IO names the path and the system's reason on failure.
 * - Outputs are written atomically by the writers in metrics.h and json.h:
 *   to "PATH.tmp", renamed to PATH only when complete, so a crash never leaves
 *   a partial file that looks complete.
 */
#ifndef DL_FS_H
#define DL_FS_H

#include <stddef.h> // size_t

#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

const char *dl_home(void);
dl_status dl_mkdir_p(const char *path);
int dl_file_exists(const char *path);
/* Writes "a/b" into buf (len bytes); DL_ERR_ARG when it does not fit. */
dl_status dl_path_join(char *buf, size_t len, const char *a, const char *b);
/* Reads a whole file into a NUL-terminated malloc'ed buffer. */
dl_status dl_read_file(const char *path, char **text, size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* DL_FS_H */
