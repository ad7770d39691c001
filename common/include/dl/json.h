/* dl/json.h — summary.json: a streaming JSON writer and a small reader.
 *
 * Contract (writer)
 * - dl_json_open writes to "path.tmp"; dl_json_close checks that every object
 *   and array was closed and renames the file to path (DL_ERR_IO otherwise,
 *   the temporary removed). key is NULL inside arrays and non-NULL in objects.
 * - Numbers are written with %.17g (doubles round-trip); NaN and ±inf become
 *   null, since JSON has no spelling for them. Strings are escaped.
 *
 * Contract (reader)
 * - dl_json_parse reads RFC 8259 JSON into a tree; on a syntax error it fails
 *   with DL_ERR_FORMAT and "file:line:column: expected ...".
 * - dl_jv_get(obj, "a.b.c") follows object keys separated by dots; NULL when
 *   any is missing. dl_jv_num returns the number or fallback.
 */
#ifndef DL_JSON_H
#define DL_JSON_H

#include <stddef.h> // size_t
#include <stdio.h> // FILE

#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

// ---- writer ----
#define DL_JSON_MAX_DEPTH 32

typedef struct dl_json {
    FILE *f;
    int depth;
    int count[DL_JSON_MAX_DEPTH]; /* items written at each depth */
    int failed;
    char path[1024];
    char tmp[1040];
} dl_json;

dl_status dl_json_open(dl_json *j, const char *path);
/* Writes to an open stream instead (no rename); close does not fclose it. */
void dl_json_open_stream(dl_json *j, FILE *f);
void dl_json_object(dl_json *j, const char *key);
void dl_json_end_object(dl_json *j);
void dl_json_array(dl_json *j, const char *key);
void dl_json_end_array(dl_json *j);
void dl_json_num(dl_json *j, const char *key, double v);
void dl_json_int(dl_json *j, const char *key, long long v);
void dl_json_str(dl_json *j, const char *key, const char *s);
void dl_json_bool(dl_json *j, const char *key, int v);
void dl_json_null(dl_json *j, const char *key);
void dl_json_f32s(dl_json *j, const char *key, const float *v, size_t n);
void dl_json_f64s(dl_json *j, const char *key, const double *v, size_t n);
dl_status dl_json_close(dl_json *j);
void dl_json_abort(dl_json *j);

// ---- reader ----
typedef enum dl_jtype { DL_JNULL, DL_JBOOL, DL_JNUM, DL_JSTR, DL_JARR, DL_JOBJ } dl_jtype;

typedef struct dl_jv {
    dl_jtype type;
    double num; /* DL_JNUM, DL_JBOOL (0/1) */
    char *str; /* DL_JSTR */
    size_t n; /* items in DL_JARR / DL_JOBJ */
    struct dl_jv *items; /* n values */
    char **keys; /* n keys (DL_JOBJ) */
} dl_jv;

dl_status dl_json_parse(const char *text, const char *name, dl_jv **out);
dl_status dl_json_parse_file(const char *path, dl_jv **out);
void dl_jv_free(dl_jv *v);
const dl_jv *dl_jv_get(const dl_jv *obj, const char *dotted);
double dl_jv_num(const dl_jv *v, double fallback);
const char *dl_jv_str(const dl_jv *v, const char *fallback);

#ifdef __cplusplus
}
#endif
#endif /* DL_JSON_H */
